// One mount through txtfs's libfuse3 binding (native/fuse3): its session, the request path wired
// (ops/ answering through the vfs, kernelCache/ keeping the kernel's caches right, told of every
// change the kernel did not make), and its end (unmount, held writes taken back, exit).
import { execFile } from "node:child_process";
import { constants as fs } from "node:fs";
import { promisify } from "node:util";
import { NOTE_CONTENT_BYTES } from "../lib/limits.ts";
import type { Logger } from "../lib/logger.ts";
import type { Stat, Vfs } from "../vfs/vfs.ts";
import { loadFuse3 } from "./binding.ts";
import type { Mounted } from "./index.ts";
import { FolderNames } from "./kernelCache/folderNames.ts";
import { HELD_WRITES_MAX_BYTES } from "./kernelCache/heldWrites.ts";
import { NativeOpens } from "./kernelCache/nativeOpens.ts";
import { NodeTable } from "./kernelCache/nodes.ts";
import { KernelReconciler } from "./kernelCache/reconcile.ts";
import { StaleWindow } from "./kernelCache/staleWindow.ts";
import { KEPT_S } from "./kernelCache/timeouts.ts";
import { MountError } from "./mountError.ts";
import { OpContext } from "./ops/context.ts";
import { dispatcher } from "./ops/dispatch.ts";
import { type MountOptions, sessionOptions, shownAs } from "./options.ts";

const run = promisify(execFile);

export async function mountSession(
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
  const kernel = vfs.kernel;
  const stale = new StaleWindow();
  // A note that changed without the kernel is read with direct I/O for a while (the notification
  // may still be on its way: staleWindow.ts), as is one with appends on their way.
  const directIo = (path: string, flags: number) =>
    (stale.mayBeStale(path) && kernel.isNote(path)) ||
    ((flags & fs.O_APPEND) === 0 && kernel.appendsOnTheirWay(path));
  // Writes held in C (native/fuse3/held.c); TXTFS_HOLD_WRITES=0: every write crosses on its own.
  const holding = process.env.TXTFS_HOLD_WRITES !== "0";
  if (holding) native.holdWrites(HELD_WRITES_MAX_BYTES, NOTE_CONTENT_BYTES);
  const shown = shownAs(opts) ?? ((st: Stat) => st);
  // What C keeps by node id goes with the node.
  const nodes = new NodeTable((ino) => {
    native.forgetNode(ino);
    native.dropNames(ino);
  });
  const names = new FolderNames(native, kernel, nodes);
  // Read-only opens (and stats) answered in C once the kernel can no longer hold a size from
  // before a change.
  const opens = new NativeOpens(native, (path) => stale.staleForMs(path), shown, KEPT_S);
  const ctx = new OpContext({
    native,
    vfs,
    kernel,
    log,
    nodes,
    names,
    opens,
    shown,
    directIo,
    holding,
    trace: opts.trace ?? false,
  });
  const { dispatch, landed } = dispatcher(ctx);
  const reconciler = new KernelReconciler(vfs, kernel, nodes, native, opens, names);
  vfs.onRemoteChange((path) => {
    stale.changed(path);
    reconciler.changed(path);
  });
  kernel.onAttrsChanged((path) => reconciler.changed(path));

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
    // A program's writes to a note it still has open, held in C: applied before its note is saved.
    async takeHeldWrites() {
      native.holdWrites(0, 0);
      for (let held = native.takeHeld(); held; held = native.takeHeld()) {
        const [fh, offset, bytes] = held;
        await vfs.write(fh, bytes, offset);
      }
      // Handed over before: in JavaScript's queue (C sends them under the lock takeHeld takes).
      await new Promise((resolve) => setImmediate(resolve));
      await landed();
    },
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
