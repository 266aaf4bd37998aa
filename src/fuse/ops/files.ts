// Open files: open, create, read, write, flush, fsync, release. A handle with NATIVE_FH set was
// made in C (a read-only open, nativeOpens.ts): no handle stands behind it here, its reads go by
// path, and its flush and release never come (but the last release of a hidden note's).
import { constants as fs } from "node:fs";
import { constants } from "node:os";
import { fail, VfsError } from "../../vfs/errors.ts";
import type { Stat } from "../../vfs/vfs.ts";
import { errnoOf } from "../errno.ts";
import { HELD_WRITES_MAX_BYTES, type HeldWrites } from "../kernelCache/heldWrites.ts";
import type { KernelNode } from "../kernelCache/nodes.ts";
import { NATIVE_FH, Op, OpenFlag } from "../protocol.ts";
import type { Handler, OpContext } from "./context.ts";
import type { HiddenNotes } from "./hiddenNotes.ts";

const { EBADF } = constants.errno;
/** open(2)'s access mode bits (not in Node's fs.constants). */
const O_ACCMODE = 3;

export function fileOps(
  ctx: OpContext,
  held: HeldWrites,
  hidden: HiddenNotes,
): Partial<Record<number, Handler>> {
  const { native, vfs, kernel, nodes, names, opens, log } = ctx;
  /** Handles that may change their note (written through, O_TRUNC), by handle: their node. */
  const writing = new Map<number, KernelNode>();

  /** OpenFlag.HOLD_WRITES when C may hold the handle's writes (KernelView.writesCannotFail). */
  const holdFlag = (fd: number) =>
    ctx.holding && kernel.writesCannotFail(fd, HELD_WRITES_MAX_BYTES) ? OpenFlag.HOLD_WRITES : 0;

  /**
   * auto_cache: the kernel keeps a note's pages across opens while its mtime and size stay the
   * same (every version a note shows changes one of them); direct I/O when `direct`.
   */
  const cacheFlag = (node: KernelNode | undefined, path: string, direct: boolean): number => {
    if (direct) return OpenFlag.DIRECT_IO;
    const st = kernel.statIfKnown(path);
    if (!node || !st || (st.mode & fs.S_IFMT) !== fs.S_IFREG) return 0;
    return native.opened(node.ino, st.mtime.getTime(), st.size) ? OpenFlag.KEEP_CACHE : 0;
  };

  /**
   * Opens `path`. The kernel opens by a name it still remembers (it keeps names for a second);
   * when that name is gone here, ESTALE has it look the name up again and go on with what it
   * finds, as on a local disk: `> n.md.meta.json` right after n.md left creates the file instead
   * of failing with ENOENT. Any other ENOENT stands (the kernel retries once; a second ESTALE would
   * reach the program).
   */
  const openByName = async (path: string, flags: number): Promise<number> => {
    try {
      return await vfs.open(path, flags);
    } catch (err) {
      if (!(err instanceof VfsError) || err.errno !== "ENOENT") throw err;
      const gone = await vfs.getattr(path).then(
        () => false,
        (e: unknown) => e instanceof VfsError && e.errno === "ENOENT",
      );
      throw gone ? fail("ESTALE", "the kernel remembered a name that is gone") : err;
    }
  };

  /** The errno of a flush, fsync or release (0: it succeeded), logged as the dispatcher would. */
  const outcome = async (
    op: string,
    path: string,
    step: () => Promise<void> | undefined,
  ): Promise<number> => {
    try {
      await step();
      return 0;
    } catch (err) {
      return errnoOf(err, log, op, path);
    }
  };

  return {
    async [Op.OPEN](request, ino, flags: number) {
      const path = ctx.pathOf(ino);
      const node = nodes.get(ino);
      // A read-only handle never wrote: its close needs no FLUSH (saves go with the writer's own
      // close or fsync), which spares a round trip per file. Not with O_TRUNC (Linux truncates
      // through a read-only open): that close saves the emptied note.
      const readOnly = (flags & O_ACCMODE) === fs.O_RDONLY && (flags & fs.O_TRUNC) === 0;
      if (!readOnly && node) {
        opens.withdraw(node);
        node.writers++;
      }
      let fd: number;
      try {
        ctx.trace("open", path);
        fd = await openByName(path, flags);
      } catch (err) {
        if (!readOnly && node) node.writers--;
        throw err;
      }
      const direct = ctx.directIo(path, flags);
      const hold = holdFlag(fd);
      if (node) node.opens++;
      ctx.handles.opened(ino, fd);
      if (!readOnly && node) writing.set(fd, node);
      native.replyOpen(
        request,
        fd,
        cacheFlag(node, path, direct) | (readOnly ? OpenFlag.NO_FLUSH : 0) | hold,
      );
      // The next read-only opens may be answered in C (a note opened before the kernel had its
      // attributes from us, or while a writer had it open).
      const known = kernel.nativeStat(path);
      if (readOnly && !direct && node?.kept && known) opens.offer(node, path, known, known.openable);
    },

    async [Op.CREATE](request, parent, name: string, mode: number, flags: number, uid: number, gid: number) {
      const path = ctx.childPath(parent, name);
      names.named(parent, name);
      ctx.trace("create", path);
      const fd = await vfs.create(path, mode, { uid, gid });
      // The new file's stat comes along: the answer carries it.
      let st: Stat | undefined = kernel.nativeStat(path);
      const hold = holdFlag(fd);
      if (!st) {
        try {
          st = await ctx.fetch(path);
        } catch (err) {
          ctx.trace("release", path);
          await vfs.release(fd).catch(() => undefined); // the kernel will never release what it never got
          throw err;
        }
      }
      ctx.kernelMade(parent);
      nodes.absentGone(parent, name);
      const node = nodes.ensure(parent, name, false);
      nodes.counted(node);
      node.opens++;
      node.writers++;
      ctx.handles.opened(node.ino, fd);
      writing.set(fd, node);
      const s = ctx.told(node, path, st);
      native.replyCreate(
        request,
        node.ino,
        ctx.shown(st),
        s,
        s,
        fd,
        cacheFlag(node, path, ctx.directIo(path, flags)) | hold,
      );
    },

    async [Op.READ](request, ino, fh: number, size: number, offset: number) {
      const path = ctx.pathOf(ino);
      ctx.traceIo("read", path, size, offset);
      const data = await (fh >= NATIVE_FH ? kernel.readPath(path, size, offset) : vfs.read(fh, size, offset));
      native.replyBuf(request, data, Math.min(size, data.length));
    },

    async [Op.WRITE](request, ino, fh: number, data: Buffer, offset: number) {
      const path = ctx.pathOf(ino);
      ctx.traceIo("write", path, data.length, offset);
      if (fh >= NATIVE_FH) return native.replyErr(request, EBADF); // read-only (the kernel says so first)
      let n: number;
      try {
        n = await vfs.write(fh, data, offset);
      } catch (err) {
        // A refused save (past the largest note) refuses the handle's later writes too: C must
        // not answer them as kept.
        if (ctx.holding && !kernel.writesCannotFail(fh, HELD_WRITES_MAX_BYTES)) native.holdable(fh, false);
        throw err;
      }
      ctx.kernelMade(ino); // a write drops the kernel's size and times of the note
      native.replyWrite(request, n);
    },

    async [Op.FLUSH](request, ino, fh: number) {
      const path = nodes.pathOf(ino) ?? "";
      ctx.trace("flush", path);
      const errno = await outcome("flush", path, () => (fh >= NATIVE_FH ? undefined : vfs.flush(fh)));
      native.replyErr(request, held.takeFailure(fh) || errno);
    },

    async [Op.FSYNC](request, ino, fh: number) {
      const path = nodes.pathOf(ino) ?? "";
      ctx.trace("fsync", path);
      const errno = await outcome("fsync", path, () =>
        fh >= NATIVE_FH ? kernel.fsyncPath(path) : vfs.fsync(fh),
      );
      native.replyErr(request, held.takeFailure(fh) || errno);
    },

    async [Op.RELEASE](request, ino, fh: number) {
      // A handle made in C comes here only as the last of a note kept hidden while open.
      const path = nodes.pathOf(ino) ?? "";
      ctx.trace("release", path);
      const errno = await outcome("release", path, () => (fh >= NATIVE_FH ? undefined : vfs.release(fh)));
      held.released(fh);
      ctx.handles.released(ino, fh);
      const writer = writing.get(fh);
      if (writer) {
        writing.delete(fh);
        writer.writers = Math.max(0, writer.writers - 1);
      }
      const node = nodes.get(ino);
      if (node) {
        if (fh < NATIVE_FH) node.opens = Math.max(0, node.opens - 1);
        if (node.hidden && opens.count(node) === 0) await hidden.remove(node);
        else if (node.opens === 0 && node.parent === 0) nodes.forget(ino, 0);
      }
      native.replyErr(request, errno);
    },
  };
}
