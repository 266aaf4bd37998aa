// The mountpoint's checks before a mount: an existing, empty directory; a dead mount left by a
// crash is cleaned first.
import { execFile } from "node:child_process";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Logger } from "../lib/logger.ts";
import { MountError } from "./mountError.ts";

const run = promisify(execFile);

/**
 * A FUSE mount whose daemon is gone answers every request with ENOTCONN, but the kernel may still
 * answer some from its caches (a listing, the root's attributes): so the name no note has is looked
 * up too, which always reaches the daemon.
 */
async function isStale(dir: string): Promise<boolean> {
  const probes = [() => stat(dir), () => readdir(dir), () => stat(join(dir, ".txtfs-is-this-mount-alive"))];
  for (const probe of probes) {
    try {
      await probe();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOTCONN") return true;
    }
  }
  return false;
}

/** The mountpoint must be an existing, empty directory; a dead mount left by a crash is cleaned. */
export async function prepareMountpoint(
  dir: string,
  log: Logger,
  opts: { allowNonEmpty?: boolean } = {},
): Promise<void> {
  if (await isStale(dir)) {
    log.warn({ mountpoint: dir }, "cleaning a stale mount (Transport endpoint is not connected)");
    await run("fusermount", ["-uz", dir]).catch(() => run("umount", ["-l", dir]));
  }
  let st: Awaited<ReturnType<typeof stat>>;
  try {
    st = await stat(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new MountError(
      code === "ENOENT"
        ? `mountpoint ${dir} does not exist (create it first: mkdir -p ${dir})`
        : `mountpoint ${dir} cannot be used: ${(err as Error).message}`,
    );
  }
  if (!st.isDirectory()) throw new MountError(`mountpoint ${dir} is not a directory`);
  const entries = opts.allowNonEmpty ? [] : await readdir(dir);
  if (entries.length > 0) {
    throw new MountError(
      `mountpoint ${dir} is not empty (${entries.length} entries): mount over an empty directory, or pass --allow-non-empty (-o nonempty)`,
    );
  }
}
