// Sizes on the command line: bytes, or a number with a binary unit (`100MiB`, `10GiB`; K/M/G mean
// the same), as operators write them.
import { InvalidArgumentError } from "commander";

const UNITS: Record<string, number> = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

export function parseByteSize(value: string): number {
  const m = /^\s*(\d+)\s*([kmgt]?)(i?b)?\s*$/i.exec(value);
  const n = m ? Number(m[1]) * UNITS[m[2]!.toLowerCase()]! : Number.NaN;
  if (!m || !Number.isSafeInteger(n) || n < 1)
    throw new InvalidArgumentError("expected a size in bytes, or with a unit such as 100MiB or 10GiB");
  return n;
}
