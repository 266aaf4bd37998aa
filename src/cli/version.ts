import { readFileSync } from "node:fs";

export const VERSION: string = JSON.parse(
  readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
).version;

/** How to run this CLI again in a child process (node flags + entry script). */
export const BIN_ARGS: string[] = [...process.execArgv, process.argv[1]!];
