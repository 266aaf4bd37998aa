// Mounting through txtfs's libfuse3 low-level binding (native/fuse3): node-based requests answered by
// the path-based operations of ops.ts (dispatch.ts), the kernel keeping names, attributes and
// listings and told of every change (reconcile.ts), and C answering what needs nothing of
// JavaScript (read-only opens, absent names, held writes, clean flushes). docs/mount.md.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { NOTE_CONTENT_BYTES } from "../../lib/limits.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Stat } from "../../vfs/stat.ts";
import type { Vfs } from "../../vfs/vfs.ts";
import { type Mounted, type MountOptions, PASSTHROUGH } from "../mount.ts";
import { MountError } from "../mountError.ts";
import { fuseOps, HELD_WRITES_MAX_BYTES } from "../ops.ts";
import { StaleWindow } from "../staleWindow.ts";
import { loadFuse3 } from "./binding.ts";
import { dispatcher, KEPT_S } from "./dispatch.ts";
import { NativeOpens } from "./opens.ts";
import { KernelReconciler } from "./reconcile.ts";

const run = promisify(execFile);

/**
 * libfuse3's session options from the mount's (mount.ts's PASSTHROUGH names). uid, gid and umask
 * are libfuse2 high-level options: applied to every answer here (`shownAs`).
 */
function sessionOptions(opts: MountOptions): string[] {
  const extra = opts.extra ?? {};
  const text = (v: string | boolean | undefined, dflt: string) => (typeof v === "string" ? v : dflt);
  const o = [
    `fsname=${text(extra.fsname, "txtfs")}`,
    `subtype=${text(extra.subtype, "txtfs")}`,
    "auto_unmount",
  ];
  if (opts.allowOther) o.push("allow_other");
  for (const [name, value] of Object.entries(extra)) {
    if (["fsname", "subtype", "uid", "gid", "umask"].includes(name)) continue;
    if (name === "allowOther") o.push("allow_other");
    else if (name === "allowRoot") o.push("allow_root");
    else if (name === "defaultPermissions") o.push("default_permissions");
    else if (name === "maxRead") o.push(`max_read=${value}`);
    else if (name === "debug") o.push("debug");
    else {
      const given = Object.keys(PASSTHROUGH).find((k) => PASSTHROUGH[k] === name) ?? name;
      throw new MountError(`-o ${given} is not supported`);
    }
  }
  return ["-o", o.join(",")];
}

/** What every answer says of owner and permissions: --uid/--gid and -o uid=,gid=,umask=. */
function shownAs(opts: MountOptions): ((st: Stat) => Stat) | undefined {
  const num = (v: unknown, base = 10) =>
    v === undefined || v === true ? undefined : Number.parseInt(String(v), base);
  const uid = opts.uid ?? num(opts.extra?.uid);
  const gid = opts.gid ?? num(opts.extra?.gid);
  const umask = num(opts.extra?.umask, 8);
  if (uid === undefined && gid === undefined && umask === undefined) return undefined;
  for (const [what, v] of [
    ["uid", uid],
    ["gid", gid],
    ["umask", umask],
  ] as const)
    if (v !== undefined && !(Number.isInteger(v) && v >= 0)) throw new MountError(`-o ${what}: not a number`);
  return (st) => ({
    ...st,
    uid: uid ?? st.uid,
    gid: gid ?? st.gid,
    // A link's permissions are never checked: it stays 0777, as on a disk.
    mode:
      umask === undefined || (st.mode & 0o170000) === 0o120000
        ? st.mode
        : (st.mode & ~0o777) | (st.mode & 0o777 & ~umask),
  });
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
  // A note that changed without the kernel is read with direct I/O for a while (the notification
  // may still be on its way: staleWindow.ts), as is one with appends on their way.
  const directIo = (path: string, flags: number) =>
    (stale.mayBeStale(path) && vfs.isNote(path)) || ((flags & 0o2000) === 0 && vfs.appendsOnTheirWay(path));
  // Writes held in C (native/fuse3/held.c); TXTFS_HOLD_WRITES=0: every write crosses on its own.
  const holding = process.env.TXTFS_HOLD_WRITES !== "0";
  if (holding) native.holdWrites(HELD_WRITES_MAX_BYTES, NOTE_CONTENT_BYTES);
  const ops = fuseOps(vfs, log, {
    trace: opts.trace,
    directIo,
    holdable: holding ? (fd, on = true) => native.holdable(fd, on) : undefined,
  });
  const shown = shownAs(opts) ?? ((st: Stat) => st);
  // Read-only opens (and stats) answered in C once the kernel can no longer hold a size from
  // before a change.
  const opens = new NativeOpens(native, (path) => stale.staleForMs(path), shown, KEPT_S);
  const { nodes, names, dispatch, landed } = dispatcher(native, ops, vfs, log, directIo, opens, shown);
  const kernel = new KernelReconciler(vfs, nodes, native, opens, names);
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
