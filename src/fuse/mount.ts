// Mounting and unmounting: the mount's options, the mountpoint's checks (cleaning a stale mount
// left by a crash), and the mount itself through txtfs's libfuse3 binding (lowlevel/mount.ts).
import { execFile } from "node:child_process";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Logger } from "../lib/logger.ts";
import type { Vfs } from "../vfs/vfs.ts";
import { MountError } from "./mountError.ts";

const run = promisify(execFile);

export { MountError };

export interface MountOptions {
  allowOther?: boolean;
  /** Mount over a directory that is not empty (libfuse's `nonempty`). */
  allowNonEmpty?: boolean;
  uid?: number;
  gid?: number;
  /** `-o` options passed through, e.g. `{ fsname: "txtfs", umask: "022" }`. */
  extra?: Record<string, string | boolean>;
  trace?: boolean;
}

/** `-o a=b,c`: the options txtfs honours, by their libfuse names (camel-cased as MountOptions.extra's). */
export const PASSTHROUGH: Record<string, string> = {
  allow_other: "allowOther",
  allow_root: "allowRoot",
  default_permissions: "defaultPermissions",
  umask: "umask",
  fsname: "fsname",
  subtype: "subtype",
  max_read: "maxRead",
  debug: "debug",
  uid: "uid",
  gid: "gid",
};

/** libfuse options txtfs sets itself, and why. */
const OWN: Record<string, string> = {
  attr_timeout: "txtfs tells the kernel of every change and sets its timeouts itself",
  entry_timeout: "txtfs tells the kernel of every change and sets its timeouts itself",
};

export function parseMountOptions(values: string[]): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (const item of values.flatMap((v) => v.split(",")).filter(Boolean)) {
    const [key, value] = item.split("=", 2) as [string, string | undefined];
    if (key === "ro") continue; // handled as --read-only by the caller
    const name = PASSTHROUGH[key];
    if (OWN[key]) throw new MountError(`-o ${key} is not supported: ${OWN[key]}`);
    if (!name)
      throw new MountError(
        `unsupported -o option ${JSON.stringify(key)} (supported: ro, ${Object.keys(PASSTHROUGH).join(", ")})`,
      );
    out[name] = value ?? true;
  }
  return out;
}

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

export interface Mounted {
  unmount(): Promise<void>;
  /** Called when the file system was unmounted from outside (`umount DIR`, `fusermount -u`). */
  onUnmounted(listener: () => void): void;
  /** Holds no more writes in C and gives the vfs what is held there (before the vfs stops). */
  takeHeldWrites(): Promise<void>;
  /**
   * Ends the process with `code` once the daemon's stop is done (saves delivered or journalled
   * and fsynced, logs written, unmounted): at once (`_exit`), skipping Node's own teardown (joining
   * V8's and libuv's threads: ~9 ms of a ~32 ms `umount` until the daemon is gone), which has
   * nothing of ours left to finish.
   */
  exit(code: number): never;
}

export async function mountVfs(
  vfs: Vfs,
  mountpoint: string,
  opts: MountOptions,
  log: Logger,
): Promise<Mounted> {
  return (await import("./lowlevel/mount.ts")).mountFuse3(vfs, mountpoint, opts, log);
}
