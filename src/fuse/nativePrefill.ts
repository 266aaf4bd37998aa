// Puts the whole tree's attributes and listings into the native cache before anyone asks: the
// mount holds its tree in memory from the first listing, so a first `ls -lR` or `find` is answered
// in C as a warm one is, instead of crossing into JavaScript once per file. Done at mount and again
// (debounced) after a change dropped everything (a feed batch, a rename of a folder).
import type { Vfs } from "../vfs/vfs.ts";

interface NativeCache {
  putAttrs?: (path: string, stat: object) => void;
  putDir?: (path: string, names: string[]) => void;
}

/** After a change dropped everything, the tree is put there again once changes pause this long. */
const AGAIN_AFTER_MS = 200;

export class NativePrefill {
  private readonly vfs: Vfs;
  private readonly native: NativeCache;
  private timer: NodeJS.Timeout | undefined;

  constructor(vfs: Vfs, native: NativeCache) {
    this.vfs = vfs;
    this.native = native;
  }

  /** Everything, now (synchronously: nothing changes meanwhile). */
  now(): void {
    const { putAttrs, putDir } = this.native;
    if (!putAttrs || !putDir) return;
    const root = this.vfs.statIfKnown("/");
    if (root) putAttrs("/", { ...root, cacheable: true });
    for (const dir of this.vfs.folderPaths()) {
      const names = this.vfs.readdir(dir);
      putDir(dir, names);
      const prefix = dir === "/" ? "/" : `${dir}/`;
      for (const name of names) {
        if (name === "." || name === "..") continue;
        const st = this.vfs.statIfKnown(prefix + name);
        if (st) putAttrs(prefix + name, { ...st, cacheable: true });
      }
    }
  }

  soon(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.now(), AGAIN_AFTER_MS);
    this.timer.unref();
  }
}
