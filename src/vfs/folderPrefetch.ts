// A cold `grep -r` or `cat */*` opens every note of a folder in turn, folder after folder. The
// first body missing in a folder fetches all of the folder's bodies in one request, so the next
// opens find them cached; once the reader is seen going from one folder to the next in listing
// order (a walk), the folder after the one it is in is fetched too, while it reads this one, as
// mountpoint-s3 and gcsfuse read ahead of a sequential reader. Only on open: `ls -lR` and `find`
// never fetch bodies.
import type { TxtfsClient } from "../client/api.ts";
import type { Logger } from "../lib/logger.ts";
import { type ContentCache, ownBytes } from "./contentCache.ts";
import type { Pins } from "./meta/pins.ts";
import type { DirNode, FileNode, Tree } from "./tree.ts";

/** A folder is fetched whole only up to this many bytes of missing bodies (and half the cache). */
const FOLDER_PREFETCH_MAX_BYTES = 8 * 1024 * 1024;
/** Ahead of a walk, a quarter of the cache at most: what is read now must not be pushed out. */
const AHEAD_CACHE_SHARE = 4;
/** Siblings looked through for the next folder (a folder of 100,000 notes is no walk worth it). */
const SCAN_LIMIT = 10_000;

interface Deps {
  client: TxtfsClient;
  cache: ContentCache;
  tree: Tree;
  pins: Pins;
  log: Logger;
  cacheSize: number;
}

export class FolderPrefetch {
  private readonly c: Deps;
  private readonly running = new Map<string, Promise<void>>();
  /** The folder whose notes were opened last. */
  private current: DirNode | undefined;

  constructor(deps: Deps) {
    this.c = deps;
  }

  /**
   * A note of `dir` is opened (its body cached or not): a reader that came from the folder before
   * it in listing order is walking through them, and the next one is fetched while it reads.
   */
  opened(node: FileNode): void {
    const dir = node.parent;
    if (dir === this.current) return;
    const from = this.current;
    this.current = dir;
    if (!from || from.parent !== dir.parent || nextFolder(from) !== dir) return;
    const next = nextFolder(dir);
    if (next) this.fetch(next, Math.min(FOLDER_PREFETCH_MAX_BYTES, this.c.cacheSize / AHEAD_CACHE_SHARE));
  }

  /** The body of a note of `dir` is missing: all the folder's bodies, or undefined if not worth it. */
  missing(dir: DirNode): Promise<void> | undefined {
    return this.fetch(dir, Math.min(FOLDER_PREFETCH_MAX_BYTES, this.c.cacheSize / 2));
  }

  private fetch(dir: DirNode, maxBytes: number): Promise<void> | undefined {
    const { cache, tree } = this.c;
    if (!dir.id && dir !== tree.root) return undefined; // `Shared with me/` folders: nothing to fetch
    const id = dir.id ?? "root";
    const running = this.running.get(id);
    if (running) return running;
    let missing = 0;
    let bytes = 0;
    for (const child of dir.children.values()) {
      if (child.kind === "file" && child.id && child.meta && !cache.isFresh(child.id, child.meta.etag)) {
        missing++;
        bytes += child.meta.size;
      }
    }
    if (missing < 2 || bytes > maxBytes) return undefined;
    const job = this.c.client
      .readFolderWithBodies(id)
      .then((folder) => {
        for (const f of folder.files) {
          const body = cache.set(f.id, f.etag, ownBytes(f.content));
          const node = tree.files.get(f.id);
          // Kept on disk when available/pinned; a disk that refuses it (full) costs only the copy.
          if (node)
            this.c.pins
              .remember(node, f.etag, body)
              .catch((err) =>
                this.c.log.warn({ err: (err as Error).message }, "a pinned note's body was not kept"),
              );
        }
      })
      .catch((err) => this.c.log.debug({ err, folder: id }, "folder prefetch failed"))
      .finally(() => this.running.delete(id));
    this.running.set(id, job);
    return job;
  }
}

/** The folder listed after `dir` in its parent (the order `readdir` gives, which a walk follows). */
function nextFolder(dir: DirNode): DirNode | undefined {
  const siblings = dir.parent?.children;
  if (!siblings || siblings.size > SCAN_LIMIT) return undefined;
  let seen = false;
  for (const node of siblings.values()) {
    if (node === dir) seen = true;
    else if (seen && node.kind === "dir" && !node.localOnly) return node;
  }
  return undefined;
}
