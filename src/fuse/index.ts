// The FUSE adapter's front door, what `txtfs mount` uses: the mount's options, the mountpoint's
// checks, and the mount itself (session.ts, loaded only when a mount is made: it loads the binding).
//
//   options.ts      -o options, libfuse3's session options, owner and permissions shown
//   mountpoint.ts   the mountpoint's checks
//   session.ts      one mount: the binding's session wired to the vfs, unmount, exit
//   binding.ts      the libfuse3 binding (native/fuse3), typed; protocol.ts: the numbers it shares
//   ops/            one handler per operation, calling the vfs and answering; errno.ts: errnos
//   kernelCache/    what keeps the kernel's caches (and C's) right: nodes, names, opens, reports
import type { Logger } from "../lib/logger.ts";
import type { Vfs } from "../vfs/vfs.ts";
import type { MountOptions } from "./options.ts";

export { MountError } from "./mountError.ts";
export { prepareMountpoint } from "./mountpoint.ts";
export { type MountOptions, PASSTHROUGH, parseMountOptions } from "./options.ts";

export interface Mounted {
  unmount(): Promise<void>;
  /** Called when the file system was unmounted from outside (`umount DIR`, `fusermount -u`). */
  onUnmounted(listener: () => void): void;
  /** Holds no more writes in C and gives the vfs what is held there (before the vfs stops). */
  takeHeldWrites(): Promise<void>;
  /**
   * Ends the process with `code` once the daemon's stop is done (saves delivered or journalled
   * and fsynced, logs written, unmounted): at once (`_exit`), skipping Node's own teardown (joining
   * V8's and libuv's threads, a good part of an `umount`'s wait), which has nothing of ours left
   * to finish.
   */
  exit(code: number): never;
}

export async function mountVfs(
  vfs: Vfs,
  mountpoint: string,
  opts: MountOptions,
  log: Logger,
): Promise<Mounted> {
  return (await import("./session.ts")).mountSession(vfs, mountpoint, opts, log);
}
