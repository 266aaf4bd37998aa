// What changes a folder's names: mkdir, symlink, mknod, unlink, rmdir, rename. Each name an
// operation may make is added to C's names before the change (FolderNames.named), and the kernel,
// which drops what it kept of the folders it changed, is not told of them again (kernelMade).
import { constants } from "node:os";
import type { Owner } from "../../vfs/local/specialFiles.ts";
import { Errno, errnoOf } from "../errno.ts";
import { Op } from "../protocol.ts";
import { type Handler, isDir, type OpContext } from "./context.ts";
import type { HiddenNotes } from "./hiddenNotes.ts";

const { EINVAL, EEXIST, EISDIR, ENOENT } = constants.errno;
/** renameat2's flags (linux/fs.h): RENAME_EXCHANGE and RENAME_WHITEOUT are refused. */
const RENAME_NOREPLACE = 1;

export function entryOps(ctx: OpContext, hidden: HiddenNotes): Partial<Record<number, Handler>> {
  const { native, vfs, kernel, nodes, names, opens, log } = ctx;

  /** A new name `name` in `parent`, made by `make`: answered as its entry. */
  const made = async (
    request: number,
    parent: number,
    name: string,
    op: string,
    make: (path: string) => Promise<void>,
  ) => {
    const path = ctx.childPath(parent, name);
    names.named(parent, name);
    ctx.trace(op, path);
    await make(path);
    ctx.kernelMade(parent);
    ctx.entry(request, parent, name, path, await ctx.stat(path));
  };
  const owner = (uid: number, gid: number): Owner => ({ uid, gid });

  /** Whether the folder `parent` has no `name`, known without asking (`mv`'s RENAME_NOREPLACE). */
  const certainlyAbsent = (parent: number, name: string) => {
    const path = nodes.pathOf(parent);
    return path !== undefined && kernel.lacksName(path, name);
  };

  return {
    [Op.MKDIR]: (request, parent, name: string, mode: number, uid: number, gid: number) =>
      made(request, parent, name, "mkdir", (path) => vfs.mkdir(path, mode, owner(uid, gid))),

    [Op.SYMLINK]: (request, parent, name: string, target: string, uid: number, gid: number) =>
      made(request, parent, name, "symlink", (path) => vfs.symlink(target, path, owner(uid, gid))),

    [Op.MKNOD]: (request, parent, name: string, mode: number, uid: number, gid: number, rdev: number) =>
      made(request, parent, name, "mknod", (path) => vfs.mknod(path, mode, rdev, owner(uid, gid))),

    async [Op.UNLINK](request, parent, name: string) {
      const path = ctx.childPath(parent, name);
      const node = nodes.child(parent, name);
      opens.withdraw(node); // before counting: no open in C after that
      if (node && !node.dir && opens.openWatched(node)) await hidden.hide(node, path);
      else {
        ctx.trace("unlink", path);
        await vfs.unlink(path);
        if (node) nodes.detach(node);
      }
      ctx.kernelMade(parent);
      native.replyErr(request, 0);
    },

    async [Op.RMDIR](request, parent, name: string) {
      const path = ctx.childPath(parent, name);
      ctx.trace("rmdir", path);
      await vfs.rmdir(path);
      const node = nodes.child(parent, name);
      if (node) nodes.detach(node);
      ctx.kernelMade(parent);
      native.replyErr(request, 0);
    },

    async [Op.RENAME](request, parent, name: string, newParent: number, newName: string, flags: number) {
      if (flags & ~RENAME_NOREPLACE) throw new Errno(EINVAL);
      const from = ctx.childPath(parent, name);
      const to = ctx.childPath(newParent, newName);
      names.named(newParent, newName);
      if (flags & RENAME_NOREPLACE && !certainlyAbsent(newParent, newName)) {
        let exists = true;
        try {
          await ctx.stat(to);
        } catch (err) {
          const errno = errnoOf(err, log, "getattr", to);
          if (errno !== ENOENT) throw new Errno(errno);
          exists = false;
        }
        if (exists) throw new Errno(EEXIST);
      }
      const target = nodes.child(newParent, newName);
      opens.withdraw(target);
      opens.withdraw(nodes.child(parent, name));
      if (target && target !== nodes.child(parent, name) && !target.dir && opens.openWatched(target)) {
        // POSIX checks first: a folder can replace only a folder (the vfs's rename would say so too).
        if (isDir(await ctx.stat(from))) throw new Errno(EISDIR);
        await hidden.hide(target, to);
      }
      ctx.trace("rename", from);
      await vfs.rename(from, to);
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
      ctx.kernelMade(parent);
      ctx.kernelMade(newParent);
      if (node) ctx.kernelMade(node.ino);
      native.replyErr(request, 0);
    },
  };
}
