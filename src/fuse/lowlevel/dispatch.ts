// libfuse3's low-level requests (by node id) -> the path-based operations of ops.ts, and their
// answers back to the kernel. What the node-based API adds is here: node ids and lookup counts
// (nodes.ts), listings with attributes (READDIRPLUS), kernel timeouts long for what the vfs reports
// every change of (reconcile.ts tells the kernel), libfuse2's hiding of removed open notes, and
// auto_cache (pages kept across opens while mtime and size stay).
import { constants as fs } from "node:fs";
import { constants } from "node:os";
import type { Logger } from "../../lib/logger.ts";
import type { Stat } from "../../vfs/stat.ts";
import type { Vfs } from "../../vfs/vfs.ts";
import { type fuseOps, NATIVE_FH } from "../ops.ts";
import {
  type Fuse3Binding,
  type Handle,
  OPEN_DIRECT_IO,
  OPEN_HOLD_WRITES,
  OPEN_KEEP_CACHE,
  OPEN_NO_FLUSH,
  Op,
} from "./binding.ts";
import { attrKey, listKey } from "./fingerprint.ts";
import { FolderNames } from "./names.ts";
import { type KernelNode, NodeTable } from "./nodes.ts";
import type { NativeOpens } from "./opens.ts";

type Ops = ReturnType<typeof fuseOps>;
type Result = [number, ...unknown[]];

const { ENOENT, EIO, EINVAL, EEXIST, ERANGE, ENODATA, EISDIR } = constants.errno;

/** setattr's `to_set` bits (fuse_lowlevel.h). */
const SET = { MODE: 1, UID: 2, GID: 4, SIZE: 8, ATIME: 16, MTIME: 32, ATIME_NOW: 128, MTIME_NOW: 256 };
const RENAME_NOREPLACE = 1;
/** open(2)'s access mode bits (not in Node's fs.constants). */
const O_ACCMODE = 3;
/** struct fuse_direntplus without its name: a listing's entry takes at least this much. */
const DIRENTPLUS_MIN_BYTES = 152;

/** Seconds the kernel keeps names and attributes the vfs reports every change of. */
export const KEPT_S = Number(process.env.TXTFS_KERNEL_KEEP_S ?? 3600);
/** Seconds for the rest (sidecars, `.txtfs/`): what the kernel kept before, with libfuse2. */
export const SHORT_S = 1;

export interface Dispatcher {
  readonly nodes: NodeTable;
  readonly names: FolderNames;
  dispatch(op: number, h: Handle | undefined, ino: number, ...args: unknown[]): void;
  /** Once the writes held in C handed over so far were applied. */
  landed(): Promise<void>;
}

export function dispatcher(
  native: Fuse3Binding,
  ops: Ops,
  vfs: Vfs,
  log: Logger,
  directIo: (path: string, flags: number) => boolean,
  /** Read-only opens answered in C. */
  opens: NativeOpens,
  /** Attributes with owner and permissions as the mount's options show them. */
  shown: (st: Stat) => Stat,
): Dispatcher {
  // What C keeps by node id goes with the node.
  const nodes = new NodeTable((ino) => {
    native.forgetNode(ino);
    native.dropNames(ino);
  });
  const names = new FolderNames(native, vfs, nodes);
  /** Handles that may change their note (written through, O_TRUNC), by handle: their node. */
  const writing = new Map<number, KernelNode>();
  // ops.ts's functions answer through a callback (errno first, negative): as promises here. Every
  // attribute answer goes through `shown`.
  const call = (fn: (...args: never[]) => void, ...args: unknown[]) =>
    new Promise<Result>((resolve) =>
      (fn as (...a: unknown[]) => void)(...args, (err: number, ...rest: unknown[]) =>
        resolve([err, ...rest]),
      ),
    );
  const isDir = (st: Stat) => (st.mode & fs.S_IFMT) === fs.S_IFDIR;

  const pathOf = (ino: number): string => {
    const path = nodes.pathOf(ino);
    if (path === undefined) throw new Errno(ENOENT);
    return path;
  };
  const childPath = (parent: number, name: string): string => {
    const path = nodes.childPath(parent, name);
    if (path === undefined) throw new Errno(ENOENT);
    return path;
  };
  const stat = async (path: string): Promise<Stat> => {
    const [err, st] = await call(ops.getattr, path);
    if (err) throw new Errno(-err);
    return st as Stat;
  };

  /** `name` in `parent` is `st` now: its node, one lookup counted, answered as an entry. */
  const entry = (h: Handle, parent: number, name: string, path: string, st: Stat) => {
    nodes.absentGone(parent, name); // the kernel's entry for it is this one now
    const node = nodes.ensure(parent, name, isDir(st));
    nodes.counted(node);
    const s = told(node, path, st);
    native.replyEntry(h, node.ino, shown(st), s, s);
  };
  /** The kernel is given `st` for `node`: how long it may keep it. */
  const told = (node: KernelNode, path: string, st: Stat): number => {
    // Kept long only what the vfs reports every change of (the tree's notes and folders).
    const known = vfs.nativeStat(path);
    node.kept = known !== undefined;
    node.told = node.kept ? attrKey(st) : undefined;
    // C answers the note's stats from now on with what the vfs says now (an await may have come
    // between `st` and here; a change meanwhile was reported, and reconcile.ts tells the kernel).
    opens.offer(node, path, known ?? st, known?.openable === true);
    return node.kept ? KEPT_S : SHORT_S;
  };

  /**
   * Whether the kernel may keep `name` absent from `parent`: only in the tree's folders, where every
   * name that appears is reported (not sidecars, which resolve without being listed, nor `.txtfs/`).
   */
  const mayKeepAbsent = (parent: number, path: string, name: string) =>
    nodes.get(parent)?.kept === true &&
    !name.endsWith(vfs.unlisted.suffix) &&
    !(path === vfs.unlisted.subtree || path.startsWith(`${vfs.unlisted.subtree}/`)) &&
    nodes.keepAbsent(parent, name);

  /** Whether the folder `parent` has no `name`, known without asking (`mv`'s RENAME_NOREPLACE). */
  const certainlyAbsent = (parent: number, name: string) => {
    const path = nodes.pathOf(parent);
    return path !== undefined && vfs.lacksName(path, name);
  };

  /**
   * The kernel changed these nodes itself (an operation it sent): it dropped what it kept of their
   * attributes and, for a folder, its listing, and asks again when it needs them. Nothing about
   * them needs telling until then (reconcile.ts would otherwise drop what the kernel no longer has).
   */
  const kernelMade = (...inos: number[]) => {
    for (const ino of inos) {
      const node = nodes.get(ino);
      if (!node) continue;
      // Its next stat comes to JavaScript: C may have been given its attributes while the
      // operation ran (a stat from elsewhere meanwhile), from before it.
      opens.withdraw(node);
      node.told = undefined;
      node.toldList = undefined;
    }
  };

  /**
   * A removed or replaced open note (opens.openWatched said so) keeps a hidden name until its last
   * close (libfuse2's scheme).
   */
  const hide = async (node: KernelNode, path: string) => {
    const name = nodes.hiddenName(node);
    const hidden = `${path.slice(0, path.lastIndexOf("/"))}/${name}`;
    names.named(node.parent, name);
    const [err] = await call(ops.rename, path, hidden);
    if (err) throw new Errno(-err);
    nodes.move(node, node.parent, name);
    node.hidden = true;
    // Its last release may have been answered meanwhile, before it was hidden.
    if (opens.count(node) === 0) await removeHidden(node);
  };
  /** A hidden note's last handle was released: the hidden name goes (once). */
  const removeHidden = async (node: KernelNode) => {
    if (!node.hidden) return;
    node.hidden = false;
    native.watchReleases(node.ino, false);
    const path = nodes.pathOf(node.ino);
    if (path !== undefined) {
      const [e] = await call(ops.unlink, path);
      if (e) log.warn({ path, errno: -e }, "a removed note's hidden name could not be removed");
    }
    nodes.detach(node);
  };

  const handlers: Record<number, (h: Handle, ino: number, ...args: never[]) => Promise<void>> = {
    async [Op.LOOKUP](h, parent, name: string) {
      const path = childPath(parent, name);
      const [err, st] = await call(ops.getattr, path);
      if (err === -ENOENT) names.missed(nodes.get(parent), nodes.pathOf(parent) ?? "");
      if (err === -ENOENT && mayKeepAbsent(parent, path, name)) {
        // The kernel keeps the absence (an editor's swap file, a new file's name): told when it
        // appears (reconcile.ts).
        native.replyEntry(h, 0, null, KEPT_S, 0);
        return;
      }
      if (err) throw new Errno(-err);
      entry(h, parent, name, path, st as Stat);
    },
    async [Op.GETATTR](h, ino, fh?: number) {
      const path = pathOf(ino);
      const [err, st] = fh === undefined ? await call(ops.getattr, path) : await call(ops.fgetattr, path, fh);
      if (err) throw new Errno(-err);
      const node = nodes.get(ino);
      // Removed while open, kept under a hidden name until its last close: no name links to it.
      const s = node?.hidden ? { ...(st as Stat), nlink: 0 } : (st as Stat);
      native.replyAttr(h, ino, shown(s), node ? told(node, path, st as Stat) : SHORT_S);
    },
    async [Op.SETATTR](
      h,
      ino,
      toSet: number,
      a: { mode: number; uid: number; gid: number; size: number; atime: number; mtime: number },
      fh?: number,
    ) {
      const path = pathOf(ino);
      opens.withdraw(nodes.get(ino));
      const steps: Array<() => Promise<Result>> = [];
      if (toSet & SET.MODE) steps.push(() => call(ops.chmod, path, a.mode));
      if (toSet & (SET.UID | SET.GID))
        steps.push(() => call(ops.chown, path, toSet & SET.UID ? a.uid : -1, toSet & SET.GID ? a.gid : -1));
      if (toSet & SET.SIZE)
        steps.push(() =>
          fh === undefined ? call(ops.truncate, path, a.size) : call(ops.ftruncate, path, fh, a.size),
        );
      if (toSet & (SET.ATIME | SET.MTIME)) {
        const now = Date.now();
        const time = (set: number, nowBit: number, ms: number) =>
          toSet & nowBit ? now : toSet & set ? ms : Number.POSITIVE_INFINITY; // infinity: UTIME_OMIT
        steps.push(() =>
          call(
            ops.utimens,
            path,
            time(SET.ATIME, SET.ATIME_NOW, a.atime),
            time(SET.MTIME, SET.MTIME_NOW, a.mtime),
          ),
        );
      }
      for (const step of steps) {
        const [err] = await step();
        if (err) throw new Errno(-err);
      }
      const st = await stat(path);
      const node = nodes.get(ino);
      native.replyAttr(h, ino, shown(st), node ? told(node, path, st) : SHORT_S);
    },
    async [Op.READLINK](h, ino) {
      const [err, target] = await call(ops.readlink, pathOf(ino));
      if (err) throw new Errno(-err);
      native.replyReadlink(h, target as string);
    },
    async [Op.MKDIR](h, parent, name: string, mode: number, uid: number, gid: number) {
      const path = childPath(parent, name);
      names.named(parent, name);
      const [err] = await call(ops.mkdir, path, mode, { uid, gid });
      if (err) throw new Errno(-err);
      kernelMade(parent);
      entry(h, parent, name, path, await stat(path));
    },
    async [Op.SYMLINK](h, parent, name: string, target: string, uid: number, gid: number) {
      const path = childPath(parent, name);
      names.named(parent, name);
      const [err] = await call(ops.symlink, target, path, { uid, gid });
      if (err) throw new Errno(-err);
      kernelMade(parent);
      entry(h, parent, name, path, await stat(path));
    },
    async [Op.MKNOD](h, parent, name: string, mode: number, uid: number, gid: number, rdev: number) {
      const path = childPath(parent, name);
      names.named(parent, name);
      const [err] = await call(ops.mknod, path, mode, rdev, { uid, gid });
      if (err) throw new Errno(-err);
      kernelMade(parent);
      entry(h, parent, name, path, await stat(path));
    },
    async [Op.UNLINK](h, parent, name: string) {
      const path = childPath(parent, name);
      const node = nodes.child(parent, name);
      opens.withdraw(node); // before counting: no open in C after that
      if (node && !node.dir && opens.openWatched(node)) await hide(node, path);
      else {
        const [err] = await call(ops.unlink, path);
        if (err) throw new Errno(-err);
        if (node) nodes.detach(node);
      }
      kernelMade(parent);
      native.replyErr(h, 0);
    },
    async [Op.RMDIR](h, parent, name: string) {
      const path = childPath(parent, name);
      const [err] = await call(ops.rmdir, path);
      if (err) throw new Errno(-err);
      const node = nodes.child(parent, name);
      if (node) nodes.detach(node);
      kernelMade(parent);
      native.replyErr(h, 0);
    },
    async [Op.RENAME](h, parent, name: string, newParent: number, newName: string, flags: number) {
      if (flags & ~RENAME_NOREPLACE) throw new Errno(EINVAL); // RENAME_EXCHANGE, RENAME_WHITEOUT
      const from = childPath(parent, name);
      const to = childPath(newParent, newName);
      names.named(newParent, newName);
      if (flags & RENAME_NOREPLACE && !certainlyAbsent(newParent, newName)) {
        const [err] = await call(ops.getattr, to);
        if (err === 0) throw new Errno(EEXIST);
        if (err !== -ENOENT) throw new Errno(-err);
      }
      const target = nodes.child(newParent, newName);
      opens.withdraw(target);
      opens.withdraw(nodes.child(parent, name));
      if (target && target !== nodes.child(parent, name) && !target.dir && opens.openWatched(target)) {
        // POSIX checks first: a folder can replace only a folder (ops.rename would say so too).
        const moving = await stat(from);
        if (isDir(moving)) throw new Errno(EISDIR);
        await hide(target, to);
      }
      const [err] = await call(ops.rename, from, to);
      if (err) throw new Errno(-err);
      const node = nodes.child(parent, name);
      if (node) nodes.move(node, newParent, newName);
      else {
        const there = nodes.child(newParent, newName);
        if (there) nodes.detach(there);
      }
      nodes.absentGone(newParent, newName);
      // The rename answered what was queued for the name it took (its old item gone): sent now,
      // that would drop the entry the kernel moves there (folder renames over a folder: a new inode).
      native.dropEntryNotes(newParent, newName);
      kernelMade(parent, newParent, ...(node ? [node.ino] : []));
      native.replyErr(h, 0);
    },
    async [Op.OPEN](h, ino, flags: number) {
      const path = pathOf(ino);
      const node = nodes.get(ino);
      // A read-only handle never wrote: its close needs no FLUSH (saves go with the writer's own
      // close or fsync), which spares a round trip per file. Not with O_TRUNC (Linux truncates
      // through a read-only open): that close saves the emptied note.
      const readOnly = (flags & O_ACCMODE) === fs.O_RDONLY && (flags & fs.O_TRUNC) === 0;
      if (!readOnly && node) {
        opens.withdraw(node);
        node.writers++;
      }
      const [err, fd, bits] = await call(ops.open, path, flags);
      if (err) {
        if (!readOnly && node) node.writers--;
        throw new Errno(-err);
      }
      if (node) node.opens++;
      if (!readOnly && node) writing.set(fd as number, node);
      const direct = (bits as number) & 1;
      native.replyOpen(
        h,
        fd as number,
        openFlags(node, path, direct) | (readOnly ? OPEN_NO_FLUSH : 0) | holdFlag(bits as number),
      );
      // The next read-only opens may be answered in C (a note opened before the kernel had its
      // attributes from us, or while a writer had it open).
      const known = vfs.nativeStat(path);
      if (readOnly && !direct && node?.kept && known) opens.offer(node, path, known, known.openable);
    },
    async [Op.CREATE](h, parent, name: string, mode: number, flags: number, uid: number, gid: number) {
      const path = childPath(parent, name);
      names.named(parent, name);
      const [err, fd, st0, bits] = await call(ops.create, path, mode, { uid, gid });
      if (err) throw new Errno(-err);
      let st = st0 as Stat | undefined;
      if (!st) {
        const [e, s] = await call(ops.getattr, path);
        if (e) {
          await call(ops.release, path, fd); // the kernel will never release what it never got
          throw new Errno(-e);
        }
        st = s as Stat;
      }
      kernelMade(parent);
      nodes.absentGone(parent, name);
      const node = nodes.ensure(parent, name, false);
      nodes.counted(node);
      node.opens++;
      node.writers++;
      writing.set(fd as number, node);
      const s = told(node, path, st);
      native.replyCreate(
        h,
        node.ino,
        shown(st),
        s,
        s,
        fd as number,
        openFlags(node, path, directIo(path, flags) ? 1 : 0) | holdFlag(bits as number),
      );
    },
    async [Op.READ](h, ino, fh: number, size: number, offset: number) {
      const buf = Buffer.allocUnsafe(size);
      const [n] = await call(ops.read, pathOf(ino), fh, buf, size, offset);
      if (n < 0) throw new Errno(-n);
      native.replyBuf(h, buf, n);
    },
    async [Op.WRITE](h, ino, fh: number, data: Buffer, offset: number) {
      const [n] = await call(ops.write, pathOf(ino), fh, data, data.length, offset);
      if (n < 0) throw new Errno(-n);
      kernelMade(ino); // a write drops the kernel's size and times of the note
      native.replyWrite(h, n);
    },
    async [Op.FLUSH](h, ino, fh: number) {
      const [err] = await call(ops.flush, nodes.pathOf(ino) ?? "", fh);
      native.replyErr(h, heldFailure(fh) || -err);
    },
    async [Op.FSYNC](h, ino, fh: number, datasync: number) {
      const [err] = await call(ops.fsync, nodes.pathOf(ino) ?? "", datasync, fh);
      native.replyErr(h, heldFailure(fh) || -err);
    },
    async [Op.RELEASE](h, ino, fh: number) {
      // A handle made in C comes here only as the last of a note kept hidden while open.
      const [err] = await call(ops.release, nodes.pathOf(ino) ?? "", fh);
      heldFailed.delete(fh);
      const writer = writing.get(fh);
      if (writer) {
        writing.delete(fh);
        writer.writers = Math.max(0, writer.writers - 1);
      }
      const node = nodes.get(ino);
      if (node) {
        if (fh < NATIVE_FH) node.opens = Math.max(0, node.opens - 1);
        if (node.hidden && opens.count(node) === 0) await removeHidden(node);
        else if (node.opens === 0 && node.parent === 0) nodes.forget(ino, 0);
      }
      native.replyErr(h, -err);
    },
    async [Op.READDIRPLUS](h, ino, _fh: number, size: number, offset: number) {
      const path = pathOf(ino);
      const [err, listed] = await call(ops.readdir, path);
      if (err) throw new Errno(-err);
      const listedNames = (listed as string[]).filter((n) => n !== "." && n !== "..");
      const dir = nodes.get(ino);
      // Only what can fit the kernel's buffer: an entry with attributes takes at least 152 bytes.
      const from = Math.max(0, offset - 2);
      const page = listedNames.slice(from, from + Math.ceil(size / DIRENTPLUS_MIN_BYTES) + 1);
      const kids: KernelNode[] = [];
      const stats: Stat[] = [];
      const shownNames: string[] = [];
      // One timeout serves the whole answer: long only if every name in it is one the vfs reports
      // changes of (`.txtfs` in the root, with --show-control-dir, is not).
      let allKept = dir?.kept ?? false;
      for (const name of page) {
        const child = path === "/" ? `/${name}` : `${path}/${name}`;
        const known = vfs.nativeStat(child);
        const st = known ?? (await vfs.getattr(child).catch(() => undefined));
        if (!st) continue; // gone meanwhile
        if (!known) allKept = false;
        shownNames.push(name);
        stats.push(st);
        kids.push(nodes.ensure(ino, name, isDir(st)));
      }
      const kept = dir?.kept ?? false;
      const added = native.replyDir(
        h,
        size,
        offset,
        ino,
        dir && dir.parent !== 0 ? dir.parent : ino,
        shownNames,
        kids.map((k) => k.ino),
        stats.map(shown),
        allKept ? KEPT_S : SHORT_S,
        allKept ? KEPT_S : SHORT_S,
      );
      for (const [i, kid] of kids.entries()) {
        if (i >= added) {
          nodes.unused(kid);
          continue;
        }
        nodes.counted(kid);
        told(kid, path === "/" ? `/${shownNames[i]}` : `${path}/${shownNames[i]}`, stats[i]!);
      }
      if (dir && offset === 0) {
        dir.toldList = dir.kept ? listKey(listedNames) : undefined;
        names.listed(dir, listedNames);
      }
      // The kernel keeps every listing until told (what an ENOSYS opendir implies): one that changes
      // without reports (`.txtfs/`) is dropped again as soon as it was read.
      if (!kept) native.notifyInode(ino, 0, 0);
    },
    async [Op.STATFS](h) {
      const [err, s] = await call(ops.statfs, "/");
      if (err) throw new Errno(-err);
      native.replyStatfs(h, s as object);
    },
    async [Op.GETXATTR](h, ino, name: string, size: number) {
      const [err, value] = await call(ops.getxattr, pathOf(ino), name, 0);
      if (err) throw new Errno(-err);
      if (value == null) throw new Errno(ENODATA);
      replySized(h, Buffer.from(value as Buffer), size);
    },
    async [Op.LISTXATTR](h, ino, size: number) {
      const [err, list] = await call(ops.listxattr, pathOf(ino));
      if (err) throw new Errno(-err);
      const names = list as string[];
      replySized(h, Buffer.from(names.map((n) => `${n}\0`).join("")), size);
    },
    async [Op.SETXATTR](h, ino, name: string, value: Buffer, flags: number) {
      const [err] = await call(ops.setxattr, pathOf(ino), name, value, 0, flags);
      native.replyErr(h, -err);
    },
    async [Op.REMOVEXATTR](h, ino, name: string) {
      const [err] = await call(ops.removexattr, pathOf(ino), name);
      native.replyErr(h, -err);
    },
  };

  /** getxattr and listxattr: size 0 asks how big, a smaller buffer gets ERANGE. */
  const replySized = (h: Handle, data: Buffer, size: number) => {
    if (size === 0) native.replyXattrSize(h, data.length);
    else if (size < data.length) throw new Errno(ERANGE);
    else native.replyBuf(h, data, data.length);
  };

  /**
   * auto_cache: the kernel keeps a note's pages across opens while its mtime and size stay the
   * same (every version a note shows changes one of them); direct I/O when ops.ts says so.
   */
  const openFlags = (node: KernelNode | undefined, path: string, direct: number): number => {
    if (direct) return OPEN_DIRECT_IO;
    const st = vfs.statIfKnown(path);
    if (!node || !st || (st.mode & fs.S_IFMT) !== fs.S_IFREG) return 0;
    return native.opened(node.ino, st.mtime.getTime(), st.size) ? OPEN_KEEP_CACHE : 0;
  };

  /** ops.ts's open and create flag: the handle's writes cannot fail here (Vfs.writesCannotFail). */
  const holdFlag = (bits: number) => (bits & 2 ? OPEN_HOLD_WRITES : 0);
  /** Held writes a handle's next flush or fsync must report failed (the unforeseen only). */
  const heldFailed = new Map<number, number>();
  const heldFailure = (fh: number): number => {
    const errno = heldFailed.get(fh) ?? 0;
    heldFailed.delete(fh);
    return errno;
  };
  /**
   * Writes C answered, applied before any request that came after them starts (C hands them over
   * first; the vfs applies a write after a turn of its own, hence the wait).
   */
  let landing: Promise<void> | undefined;
  const applyHeld = (ino: number, fh: number, data: Buffer, offset: number) => {
    const apply = async () => {
      kernelMade(ino); // a write drops the kernel's size and times of the note
      try {
        // Only the largest note cuts a write short (an append the kernel's stale size let by).
        if ((await vfs.write(fh, data, offset)) !== data.length) heldFailed.set(fh, constants.errno.EFBIG);
      } catch (err) {
        log.error({ path: nodes.pathOf(ino), err }, "a write held in C was refused");
        heldFailed.set(fh, EIO);
      }
    };
    const done = (landing ?? Promise.resolve()).then(apply);
    landing = done;
    done.finally(() => {
      if (landing === done) landing = undefined;
    });
  };

  return {
    nodes,
    names,
    landed: () => landing ?? Promise.resolve(),
    dispatch(op, h, ino, ...args) {
      if (op === Op.FORGET) {
        const pairs = args[0] as Float64Array;
        for (let i = 0; i < pairs.length; i += 2) nodes.forget(pairs[i]!, pairs[i + 1]!);
        return;
      }
      if (op === Op.HELD) return applyHeld(ino, args[0] as number, args[1] as Buffer, args[2] as number);
      if (h === undefined) return;
      const handler = handlers[op];
      if (!handler) return native.replyErr(h, constants.errno.ENOSYS);
      const run = () => handler(h, ino, ...(args as never[]));
      (landing ? landing.then(run) : run()).catch((err: unknown) => {
        if (err instanceof Errno) return native.replyErr(h, err.errno);
        log.error({ op, ino, err }, "unexpected error in a filesystem operation");
        native.replyErr(h, EIO);
      });
    },
  };
}

/** An operation's answer is this errno (positive). */
class Errno extends Error {
  readonly errno: number;
  constructor(errno: number) {
    super(`errno ${errno}`);
    this.errno = errno || EIO;
  }
}
