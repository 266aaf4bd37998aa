// Listings: readdirplus (every name with its attributes; opendir is answered ENOSYS in C, so the
// kernel keeps each listing until told).
import type { Stat } from "../../vfs/vfs.ts";
import { listKey } from "../kernelCache/fingerprint.ts";
import type { KernelNode } from "../kernelCache/nodes.ts";
import { KEPT_S, SHORT_S } from "../kernelCache/timeouts.ts";
import { Op } from "../protocol.ts";
import { type Handler, isDir, type OpContext } from "./context.ts";

/** struct fuse_direntplus without its name: a listing's entry takes at least this much. */
const DIRENTPLUS_MIN_BYTES = 152;

export function dirOps(ctx: OpContext): Partial<Record<number, Handler>> {
  const { native, vfs, kernel, nodes, names, shown } = ctx;

  return {
    async [Op.READDIRPLUS](request, ino, _fh: number, size: number, offset: number) {
      const path = ctx.pathOf(ino);
      // The folder's names (the binding adds `.` and `..`): the tree's synchronously, `.txtfs/`'s not.
      let listed: string[];
      if (vfs.isControl(path)) {
        ctx.trace("readdir", path);
        listed = await vfs.readdirControl(path);
      } else {
        listed = vfs.readdir(path);
        ctx.trace("readdir", path, true);
      }
      const listedNames = listed.filter((n) => n !== "." && n !== "..");
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
        const known = kernel.nativeStat(child);
        const st = known ?? (await vfs.getattr(child).catch(() => undefined));
        if (!st) continue; // gone before its stat came
        if (!known) allKept = false;
        shownNames.push(name);
        stats.push(st);
        kids.push(nodes.ensure(ino, name, isDir(st)));
      }
      const kept = dir?.kept ?? false;
      const added = native.replyDir(
        request,
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
        ctx.told(kid, path === "/" ? `/${shownNames[i]}` : `${path}/${shownNames[i]}`, stats[i]!);
      }
      if (dir && offset === 0) {
        dir.toldList = dir.kept ? listKey(listedNames) : undefined;
        names.listed(dir, listedNames);
      }
      // The kernel keeps every listing until told (what an ENOSYS opendir implies): one that changes
      // without reports (`.txtfs/`) is dropped again as soon as it was read.
      if (!kept) native.notifyInode(ino, 0, 0);
    },
  };
}
