// Mounting through txtfs's libfuse3 low-level binding (TXTFS_FUSE=3): the same path-based operations
// (ops.ts) as the fuse-native mount, with the kernel keeping names, attributes and listings and
// told of every change (reconcile.ts). docs/mount.md, "What libfuse3's low-level API would buy".
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { Logger } from "../../lib/logger.ts";
import type { Vfs } from "../../vfs/vfs.ts";
import type { Mounted, MountOptions } from "../mount.ts";
import { MountError } from "../mountError.ts";
import { fuseOps } from "../ops.ts";
import { StaleWindow } from "../staleWindow.ts";
import { loadFuse3 } from "./binding.ts";
import { dispatcher } from "./dispatch.ts";
import { KernelReconciler } from "./reconcile.ts";

const run = promisify(execFile);

/** libfuse3's session options from the mount's: what its low-level API knows. */
function sessionOptions(opts: MountOptions): string[] {
  const o = ["fsname=txtfs", "subtype=txtfs", "auto_unmount"];
  if (opts.allowOther) o.push("allow_other");
  for (const [name, value] of Object.entries(opts.extra ?? {})) {
    if (name === "fsname" || name === "subtype") continue;
    if (name === "allowOther") o.push("allow_other");
    else if (name === "defaultPermissions") o.push("default_permissions");
    else if (name === "maxRead") o.push(`max_read=${value}`);
    else if (name === "debug")
      continue; // the trace (--trace) says more
    else throw new MountError(`-o ${name} is not supported with TXTFS_FUSE=3`);
  }
  return ["-o", o.join(",")];
}

export async function mountFuse3(
  vfs: Vfs,
  mountpoint: string,
  opts: MountOptions,
  log: Logger,
): Promise<Mounted> {
  let native: ReturnType<typeof loadFuse3>;
  try {
    native = loadFuse3();
  } catch (err) {
    throw new MountError(
      `cannot load the libfuse3 binding (${(err as Error).message.split("\n")[0]}); run scripts/setup (it builds native/fuse3)`,
    );
  }
  const stale = new StaleWindow();
  // As with fuse-native (mount.ts): a note that changed without the kernel is read with direct I/O
  // for a while (the notification may still be on its way), as is one with appends on their way.
  const directIo = (path: string, flags: number) =>
    (stale.mayBeStale(path) && vfs.isNote(path)) || ((flags & 0o2000) === 0 && vfs.appendsOnTheirWay(path));
  const ops = fuseOps(vfs, log, { trace: opts.trace, directIo });
  const { nodes, dispatch } = dispatcher(native, ops, vfs, log, directIo);
  const kernel = new KernelReconciler(vfs, nodes, native);
  vfs.onRemoteChange((path) => {
    stale.changed(path);
    kernel.changed(path);
  });
  vfs.onAttrsChanged((path) => kernel.changed(path));

  let unmounting = false;
  let ended: () => void = () => {};
  const loopEnded = new Promise<void>((resolve) => {
    ended = resolve;
  });
  let outside: (() => void) | undefined;
  try {
    native.mount(mountpoint, sessionOptions(opts), dispatch, () => {
      ended();
      if (!unmounting) outside?.();
    });
  } catch (err) {
    throw new MountError(`mount failed: ${(err as Error).message}`);
  }
  let done: Promise<void> | undefined;
  return {
    exit(code) {
      if (!process.execArgv.some((a) => a.startsWith("--cpu-prof") || a.startsWith("--heap-prof")))
        native.exitNow(code);
      process.exit(code);
    },
    takeHeldWrites: () => Promise.resolve(),
    onUnmounted(listener) {
      outside = listener;
    },
    unmount() {
      unmounting = true;
      done ??= (async () => {
        try {
          await run("fusermount3", ["-u", mountpoint]);
        } catch (err) {
          // Busy (a program still has a file open): detached; the connection ends with this
          // process, whose exit closes /dev/fuse (the program's next access fails, nothing hangs).
          log.warn({ err: (err as Error).message }, "unmount failed; detaching lazily");
          await run("fusermount3", ["-uz", mountpoint]).catch(() => undefined);
          return;
        }
        // Unmounted: the kernel ended the connection, so the loop ends now and the session can go.
        const ends = await Promise.race([
          loopEnded.then(() => true),
          new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 2000).unref()),
        ]);
        if (ends) native.close();
      })();
      return done;
    },
  };
}
