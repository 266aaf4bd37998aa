// Mounting and unmounting: checks the mountpoint (cleaning a stale mount left by a crash), builds
// the fuse-native instance with the options a network filesystem needs, and tears it down.
import { execFile } from "node:child_process";
import { constants } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { promisify } from "node:util";
import type { Logger } from "../lib/logger.ts";
import type { Vfs } from "../vfs/vfs.ts";
import { holdWrites, takeHeldWrites } from "./heldWrites.ts";
import { MountError } from "./mountError.ts";
import { NativePrefill } from "./nativePrefill.ts";
import { fuseOps } from "./ops.ts";
import { operationTimeouts } from "./opTimeouts.ts";
import { KERNEL_ATTR_TIMEOUT_S, StaleWindow } from "./staleWindow.ts";

const run = promisify(execFile);

export { MountError };

/**
 * Backstop for the native attribute cache: every change drops it anyway. Long enough that what the
 * prefill put there at mount outlives a first `ls -lR` of a large tree: at 10 s, 100,000 notes'
 * attributes all expired during it (7 s on a busy machine), and the second `ls -lR` sent every
 * getattr to JavaScript (13-18 s, against 7 s for the first).
 */
const ATTR_CACHE_TTL_MS = 60_000;
/** A folder's names are put in C again after a miss only up to this many (each miss would list it). */
const LOOKUP_NAMES_MAX = 2_000;

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

/** `-o a=b,c` -> fuse-native options; only what libfuse2 through fuse-native can honour. */
export const PASSTHROUGH: Record<string, string> = {
  allow_other: "allowOther",
  allow_root: "allowRoot",
  default_permissions: "defaultPermissions",
  umask: "umask",
  fsname: "fsname",
  subtype: "subtype",
  max_read: "maxRead",
  attr_timeout: "attrTimeout",
  entry_timeout: "entryTimeout",
  debug: "debug",
  uid: "uid",
  gid: "gid",
};

export function parseMountOptions(values: string[]): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (const item of values.flatMap((v) => v.split(",")).filter(Boolean)) {
    const [key, value] = item.split("=", 2) as [string, string | undefined];
    if (key === "ro") continue; // handled as --read-only by the caller
    const name = PASSTHROUGH[key];
    if (!name)
      throw new MountError(
        `unsupported -o option ${JSON.stringify(key)} (supported: ro, ${Object.keys(PASSTHROUGH).join(", ")})`,
      );
    out[name] = value ?? true;
  }
  return out;
}

async function isStale(dir: string): Promise<boolean> {
  try {
    await readdir(dir);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOTCONN";
  }
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
  } catch {
    throw new MountError(`mountpoint ${dir} does not exist (create it first: mkdir -p ${dir})`);
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
   * and fsynced, logs written, unmounted): with the patched binding at once (`_exit`), skipping
   * Node's own teardown (joining V8's and libuv's threads: ~9 ms of a ~32 ms `umount` until the
   * daemon is gone), which has nothing of ours left to finish; else `process.exit`.
   */
  exit(code: number): never;
}

export async function mountVfs(
  vfs: Vfs,
  mountpoint: string,
  opts: MountOptions,
  log: Logger,
): Promise<Mounted> {
  // libfuse3's low-level API through txtfs's own binding: the kernel keeps names and listings.
  if (process.env.TXTFS_FUSE === "3")
    return (await import("./lowlevel/mount.ts")).mountFuse3(vfs, mountpoint, opts, log);
  let Fuse: typeof import("fuse-native").default;
  try {
    Fuse = (await import("fuse-native")).default;
  } catch (err) {
    throw new MountError(
      `cannot load FUSE support (${(err as Error).message.split("\n")[0]}); install libfuse2 and fuse3 (apt-get install libfuse2 fuse3), or run scripts/setup`,
    );
  }
  const stale = new StaleWindow();
  // A note whose size the kernel may hold stale is opened by JavaScript with direct I/O, never
  // natively (what C keeps of it says when that window ends; it may keep it longer). So is a note
  // with appends on their way, for any open but another `>>` (whose writes go to the end whatever
  // the kernel's size): a reader sees the note whole, past the size the kernel held.
  const directIo = (path: string, flags: number) =>
    (stale.mayBeStale(path) && vfs.isNote(path)) ||
    ((flags & constants.O_APPEND) === 0 && vfs.appendsOnTheirWay(path));
  const nativeStat = (path: string) => {
    const st: (ReturnType<Vfs["nativeStat"]> & { openableInMs?: number }) | undefined = vfs.nativeStat(path);
    if (st?.openable) st.openableInMs = stale.staleForMs(path);
    return st;
  };
  // Set once the native caches are on (below): a lookup JavaScript answered ENOENT puts its folder's
  // names in C, so the next lookups of names it does not have are answered there.
  let absent: ((path: string) => void) | undefined;
  // Paths whose fresh attributes go to C once the operation that changed them is answered (below).
  const fresh = new Set<string>();
  let putFresh = () => {};
  // A shell's `printf ... > new` writes in several pieces: held in C, they cross once (heldWrites.ts).
  const holding = holdWrites(Fuse);
  const ops = fuseOps(vfs, log, {
    trace: opts.trace,
    directIo,
    nativeStat,
    absent: (path) => absent?.(path),
    // fuse-native hands the answer to C on the next tick: this one comes after it. Most
    // operations (reads, writes) changed nothing: no tick for them.
    answered: () => {
      if (fresh.size > 0) process.nextTick(putFresh);
    },
    holdable: holding ? (fd) => Fuse.holdable?.(fd, true) : undefined,
    heldLanded: () => Fuse.heldLanded?.(),
  });
  const fuse = new Fuse(mountpoint, ops, {
    // fuse-native cannot pass big_writes; libfuse splits this option string on commas, so it rides
    // along with fsname: writes then arrive in 128 KiB pieces instead of 4 KiB.
    fsname: opts.allowNonEmpty ? "txtfs,big_writes,nonempty" : "txtfs,big_writes",
    subtype: "txtfs",
    // The kernel keeps attributes for a second (a warm `ls -lR` asks nothing); a note that changed
    // without it meanwhile is opened with direct I/O until then (staleWindow.ts). Pages are kept
    // while mtime and size are unchanged, checked at every open (a string: fuse-native drops a
    // numeric 0); every version a note shows changes one of them.
    autoCache: true,
    acAttrTimeout: "0",
    attrTimeout: KERNEL_ATTR_TIMEOUT_S,
    entryTimeout: 1,
    autoUnmount: true,
    timeout: operationTimeouts(),
    allowOther: opts.allowOther,
    uid: opts.uid,
    gid: opts.gid,
    ...opts.extra,
  });
  // getattr answers and listings of the tree are kept in C (patches/fuse-native.patch) until
  // anything changes: operations drop them natively, the vfs reports every other change (feed,
  // uploads, journal). The whole tree is put there at once, so even a first `ls -lR` or `find`
  // never crosses into JavaScript.
  const native = Fuse.fastPaths?.(ATTR_CACHE_TTL_MS) ? Fuse : undefined;
  const prefill = native ? new NativePrefill(vfs, native, nativeStat) : undefined;
  // Editors and shells look up each name before creating it (vim: swap file, `4913`, backup;
  // `echo x > new`): C answers those from the folder's names (kept with every listing put there or
  // answered, and grown by every change of ours and every report below: patches/fuse-native.patch).
  // When JavaScript answered ENOENT itself (the set had grown past the folder's names, had expired
  // or was never made), it puts the folder's names there again, up to LOOKUP_NAMES_MAX of them.
  if (native?.negativeLookups?.(vfs.unlisted.suffix, vfs.unlisted.subtree)) {
    absent = (path) => {
      const folder = path.slice(0, path.lastIndexOf("/")) || "/";
      const names = vfs.lookupNames(folder, LOOKUP_NAMES_MAX);
      if (names) native.putNames?.(folder, names);
    };
  }
  vfs.onRemoteChange((path) => {
    stale.changed(path);
    // What C kept of it may say "openable": from now until the window ends, JavaScript opens it.
    if (path === undefined) native?.invalidateAttrs?.();
    else native?.invalidatePath?.(path, true);
  });
  vfs.onAttrsChanged((path) => {
    if (!native) return;
    if (path === undefined) {
      native.invalidateAttrs?.();
      prefill?.soon();
      return;
    }
    native.invalidatePath?.(path, true);
    // Once the change is complete, its fresh attributes are kept natively, so the next lookup of
    // this path (the next `>>`, `ls -l`, the kernel's right after a rename) is answered in C: as
    // soon as the operation that made it is answered (C drops what it keeps of the paths an
    // operation changed once more then: put before, a moved note's attributes were gone again),
    // or on the next turn for a change no operation made (the feed, a delivery's answer).
    if (fresh.size === 0) setImmediate(putFresh);
    fresh.add(path);
  });
  putFresh = () => {
    if (!native?.putAttrs || fresh.size === 0) return;
    for (const path of fresh) {
      const st = nativeStat(path);
      if (st) native.putAttrs(path, st);
    }
    fresh.clear();
  };
  let loopEnded: (() => void) | undefined;
  fuse.onLoopExit = () => loopEnded?.();
  await new Promise<void>((resolve, reject) =>
    fuse.mount((err) => (err ? reject(new MountError(`mount failed: ${err.message}`)) : resolve())),
  );
  prefill?.now();
  let done: Promise<void> | undefined;
  return {
    exit(code) {
      // A CPU or heap profile is written by Node's teardown: not skipped then.
      if (!process.execArgv.some((a) => a.startsWith("--cpu-prof") || a.startsWith("--heap-prof")))
        Fuse.exitNow?.(code);
      process.exit(code);
    },
    takeHeldWrites: () => (holding ? takeHeldWrites(Fuse, vfs) : Promise.resolve()),
    onUnmounted(listener) {
      loopEnded = () => {
        if (!done) listener(); // not our own unmount: one from outside (`umount DIR`)
      };
    },
    unmount() {
      done ??= new Promise<void>((resolve) =>
        fuse.unmount((err) => {
          if (err) {
            log.warn({ err: err.message }, "unmount failed; detaching lazily");
            run("fusermount", ["-uz", mountpoint]).then(
              () => resolve(),
              () => resolve(),
            );
          } else resolve();
        }),
      );
      return done;
    },
  };
}
