// Names and attributes: lookup, getattr, setattr, readlink, statfs. Lookups and stats of the
// tree's notes and folders are answered from the tree without an await (the hot path).
import { constants } from "node:os";
import { VfsError } from "../../vfs/errors.ts";
import type { Stat } from "../../vfs/vfs.ts";
import { Errno, errnoOf } from "../errno.ts";
import { HELD_WRITES_MAX_BYTES } from "../kernelCache/heldWrites.ts";
import { KEPT_S, SHORT_S } from "../kernelCache/timeouts.ts";
import { NATIVE_FH, Op, SetAttr } from "../protocol.ts";
import type { Handler, OpContext } from "./context.ts";

const { ENOENT } = constants.errno;

interface SetAttrs {
  mode: number;
  uid: number;
  gid: number;
  size: number;
  atime: number;
  mtime: number;
}

export function attrOps(ctx: OpContext): Partial<Record<number, Handler>> {
  const { native, vfs, kernel, nodes, names, opens, shown, log } = ctx;

  /** After a truncate: the handles whose writes C may hold from now on (KernelView.writesCannotFail). */
  const heldAfterTruncate = (path: string, fh: number | undefined) => {
    if (!ctx.holding) return;
    if (fh === undefined)
      for (const fd of kernel.handlesWhoseWritesCannotFail(path, HELD_WRITES_MAX_BYTES))
        native.holdable(fd, true);
    else if (kernel.writesCannotFail(fh, HELD_WRITES_MAX_BYTES)) native.holdable(fh, true);
  };

  return {
    async [Op.LOOKUP](request, parent, name: string) {
      const path = ctx.childPath(parent, name);
      let st: Stat | undefined = ctx.known(path);
      if (!st) {
        try {
          st = await ctx.fetch(path);
        } catch (err) {
          const errno = errnoOf(err, log, "getattr", path);
          if (errno === ENOENT) {
            names.missed(nodes.get(parent), nodes.pathOf(parent) ?? "");
            if (ctx.mayKeepAbsent(parent, path, name)) {
              // The kernel keeps the absence (an editor's swap file, a new file's name): told when
              // it appears (reconcile.ts).
              native.replyEntry(request, 0, null, KEPT_S, 0);
              return;
            }
          }
          throw new Errno(errno);
        }
      }
      ctx.entry(request, parent, name, path, st);
    },

    async [Op.GETATTR](request, ino, fh?: number) {
      const path = ctx.pathOf(ino);
      const op = fh === undefined ? "getattr" : "fgetattr";
      let st: Stat | undefined = ctx.known(path, op);
      if (!st) {
        try {
          st = await ctx.fetch(path, op);
        } catch (err) {
          // The name is gone but the file is open (fstat sends no handle): the open file answers.
          const open = fh !== undefined && fh < NATIVE_FH ? fh : ctx.handles.any(ino);
          const fromOpen = open !== undefined && err instanceof VfsError ? vfs.fstat(open) : undefined;
          if (!fromOpen) throw err;
          st = fromOpen;
        }
      }
      const node = nodes.get(ino);
      // Removed while open, kept under a hidden name until its last close: no name links to it.
      const s = node?.hidden ? { ...st, nlink: 0 } : st;
      native.replyAttr(request, ino, shown(s), node ? ctx.told(node, path, st) : SHORT_S);
    },

    async [Op.SETATTR](request, ino, toSet: number, a: SetAttrs, fh?: number) {
      const path = ctx.pathOf(ino);
      opens.withdraw(nodes.get(ino));
      if (toSet & SetAttr.MODE) {
        ctx.trace("chmod", path);
        await vfs.chmod(path, a.mode);
      }
      if (toSet & (SetAttr.UID | SetAttr.GID)) {
        ctx.trace("chown", path);
        await vfs.chown(path, toSet & SetAttr.UID ? a.uid : -1, toSet & SetAttr.GID ? a.gid : -1);
      }
      if (toSet & SetAttr.SIZE) {
        // `echo x > note`: the kernel opens, then truncates by path; a handle C answered (read-only,
        // O_TRUNC on Linux) truncates by path too. Either way the note's handles may hold writes then.
        if (fh === undefined || fh >= NATIVE_FH) {
          ctx.trace("truncate", path);
          await vfs.truncate(path, a.size);
          if (fh === undefined) heldAfterTruncate(path, undefined);
        } else {
          ctx.trace("ftruncate", path);
          await vfs.ftruncate(fh, a.size);
          heldAfterTruncate(path, fh);
        }
      }
      if (toSet & (SetAttr.ATIME | SetAttr.MTIME)) {
        const now = Date.now();
        // undefined: UTIME_OMIT, that time stays.
        const time = (set: number, nowBit: number, ms: number) =>
          toSet & nowBit ? now : toSet & set ? ms : undefined;
        ctx.trace("utimens", path);
        await vfs.utimens(
          path,
          time(SetAttr.ATIME, SetAttr.ATIME_NOW, a.atime),
          time(SetAttr.MTIME, SetAttr.MTIME_NOW, a.mtime),
        );
      }
      const st = await ctx.stat(path);
      const node = nodes.get(ino);
      native.replyAttr(request, ino, shown(st), node ? ctx.told(node, path, st) : SHORT_S);
    },

    async [Op.READLINK](request, ino) {
      const path = ctx.pathOf(ino);
      ctx.trace("readlink", path);
      native.replyReadlink(request, await vfs.readlink(path));
    },

    async [Op.STATFS](request) {
      ctx.trace("statfs", "/");
      native.replyStatfs(request, await vfs.statfs());
    },
  };
}
