// `df` of the mount: the disk holding the cache dir, which is what a write can fill here.
import { statfs } from "node:fs/promises";
import type { VfsCore } from "../core.ts";

export type DiskSpaceCore = Pick<VfsCore, "opts" | "tree">;

/**
 * `df`: the free space of the disk holding the cache dir, which is what a write can fill here —
 * every save is journalled there before it is delivered, local-only files live there, and the
 * service has no storage quota to report. Files: the notes and folders, plus the disk's free inodes.
 */
export async function diskSpace(c: DiskSpaceCore) {
  const disk = await statfs(c.opts.cacheDir);
  const MAX = 0xffff_ffff; // counts kept within 32 bits (older tools print them so): bigger disks count bigger blocks
  let frsize = disk.bsize;
  while (disk.blocks * (disk.bsize / frsize) > MAX) frsize *= 2;
  const scale = (n: number) => Math.min(MAX, Math.floor((n * disk.bsize) / frsize));
  const items = c.tree.files.size + c.tree.dirs.size + c.tree.locals.size;
  return {
    bsize: disk.bsize,
    frsize,
    blocks: scale(disk.blocks),
    bfree: scale(disk.bfree),
    bavail: scale(disk.bavail),
    files: Math.min(MAX, items + disk.ffree),
    ffree: Math.min(MAX, disk.ffree),
    favail: Math.min(MAX, disk.ffree),
    fsid: 0x7874,
    flag: 0,
    namemax: 255,
  };
}
