// Extended attributes: only `user.txtfs.*` exists (meta/xattrs.ts). C answers the other
// namespaces itself; the checks here are for a caller that asks anyway.
import { constants } from "node:os";
import { Errno } from "../errno.ts";
import { Op } from "../protocol.ts";
import type { Handler, OpContext } from "./context.ts";

const { ENODATA, EOPNOTSUPP, ENOTSUP, ERANGE } = constants.errno;

export function xattrOps(ctx: OpContext): Partial<Record<number, Handler>> {
  const { native, vfs } = ctx;

  /** getxattr and listxattr: size 0 asks how big, a smaller buffer gets ERANGE. */
  const replySized = (request: number, data: Buffer, size: number) => {
    if (size === 0) native.replyXattrSize(request, data.length);
    else if (size < data.length) throw new Errno(ERANGE);
    else native.replyBuf(request, data, data.length);
  };

  return {
    async [Op.GETXATTR](request, ino, name: string, size: number) {
      const path = ctx.pathOf(ino);
      // ls -l asks every file for its SELinux label and ACL, the kernel asks security.capability
      // before every write: other namespaces are unsupported (EOPNOTSUPP: ls remembers that per
      // device and stops asking), other user.* names simply absent.
      if (!name.startsWith("user.")) throw new Errno(EOPNOTSUPP);
      if (!name.startsWith("user.txtfs.")) throw new Errno(ENODATA);
      ctx.trace("getxattr", path);
      const value = await vfs.getxattr(path, name);
      if (value == null) throw new Errno(ENODATA);
      replySized(request, Buffer.from(value), size);
    },

    async [Op.LISTXATTR](request, ino, size: number) {
      const path = ctx.pathOf(ino);
      ctx.trace("listxattr", path);
      const names = vfs.listxattr(path);
      replySized(request, Buffer.from(names.map((n) => `${n}\0`).join("")), size);
    },

    async [Op.SETXATTR](request, ino, name: string, value: Buffer) {
      const path = ctx.pathOf(ino);
      ctx.trace("setxattr", path);
      await vfs.setxattr(path, name, value); // `value` is JavaScript's own (the binding copied it)
      native.replyErr(request, 0);
    },

    async [Op.REMOVEXATTR](request, ino) {
      ctx.pathOf(ino); // a node without a name: ENOENT, as for every other operation
      native.replyErr(request, ENOTSUP);
    },
  };
}
