// Puts the whole tree's attributes and listings into the native cache before anyone asks: the
// mount holds its tree in memory from the first listing, so a first `ls -lR` or `find` is answered
// in C as a warm one is, instead of crossing into JavaScript once per file. Done at mount and again
// (debounced) after a change dropped everything (a feed batch, a rename of a folder).
import { constants } from "node:fs";
import type { Vfs } from "../vfs/vfs.ts";

const { S_IFMT, S_IFDIR } = constants;

interface NativeCache {
  putAttrs?: (path: string, stat: object) => void;
  putDir?: (path: string, names: string[], kinds?: string[]) => void;
}

/** After a change dropped everything, the tree is put there again once changes pause this long. */
const AGAIN_AFTER_MS = 200;

/** Folders put in the native cache per turn of the event loop (a few milliseconds each). */
const FOLDERS_PER_TURN = 100;

export class NativePrefill {
  private readonly vfs: Vfs;
  private readonly native: NativeCache;
  private readonly statOf: (path: string) => ReturnType<Vfs["nativeStat"]>;
  private timer: NodeJS.Timeout | undefined;
  /** Counts walks: a newer one stops an older one. */
  private run = 0;

  constructor(vfs: Vfs, native: NativeCache, statOf = (path: string) => vfs.nativeStat(path)) {
    this.vfs = vfs;
    this.native = native;
    this.statOf = statOf;
  }

  /**
   * Everything, a few hundred folders per turn of the event loop: a mount of 100,000 notes answers
   * at once, and each folder's listing and attributes are put in one synchronous step (so they
   * agree with each other; a change after it drops them natively, a change that drops everything
   * starts the walk again).
   */
  now(): void {
    const { putAttrs, putDir } = this.native;
    if (!putAttrs || !putDir) return;
    const run = ++this.run;
    const root = this.statOf("/");
    if (root) putAttrs("/", root);
    const dirs = this.vfs.folderPaths();
    let next = 0;
    const step = () => {
      if (run !== this.run) return; // started again
      for (const end = Math.min(dirs.length, next + FOLDERS_PER_TURN); next < end; next++) {
        const dir = dirs[next]!;
        let names: string[];
        try {
          names = [".", "..", ...this.vfs.readdir(dir)]; // as ops.readdir answers (`ls -a`)
        } catch {
          continue; // gone meanwhile
        }
        const prefix = dir === "/" ? "/" : `${dir}/`;
        // Each entry's type goes with the listing (d_type): `find -name` needs no lookup of a file.
        const kinds: string[] = [];
        for (const name of names) {
          if (name === "." || name === "..") {
            kinds.push("d");
            continue;
          }
          const st = this.statOf(prefix + name);
          kinds.push(st ? ((st.mode & S_IFMT) === S_IFDIR ? "d" : "f") : "-");
          if (st) putAttrs(prefix + name, st);
        }
        putDir(dir, names, kinds);
      }
      if (next < dirs.length) setImmediate(step);
    };
    step();
  }

  soon(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.now(), AGAIN_AFTER_MS);
    this.timer.unref();
  }
}
