// Note bodies by file id, bounded in bytes (`--cache-size`); the least recently used go first.
// The bodies are files in the cache dir, the index (id -> ETag, size, file) is in memory: a body
// read again comes from the kernel's page cache, which the system gives back under pressure, and
// the daemon holds none of it (10,000 notes read through a 32 MiB cache: 32 MiB less RSS). The
// index dies with the process, so the files are cleared at start: no torn or stale body is ever
// served. Bodies a device keeps across restarts (offline) are the pins' (meta/pins.ts).
import { mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LRUCache } from "lru-cache";

export interface CachedBody {
  etag: string;
  /** Read from disk when asked for; undefined if its file is gone (removed under us). */
  body(): Buffer | undefined;
}

interface Entry {
  etag: string;
  size: number;
  /** The body's file: a new one per version, so replacing a body never deletes the new one. */
  file: string;
}

/** `text` as UTF-8 in an ArrayBuffer of its own, of its exact size (never in a shared slab). */
export function ownBytes(text: string): Buffer {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text, "utf8"));
  bytes.write(text, "utf8");
  return bytes;
}

export class ContentCache {
  private readonly lru: LRUCache<string, Entry>;
  private readonly dir: string;
  private files = 0;
  /**
   * Bodies handed to opened notes (`txtfs status --json`): a hit needed no download (this cache, a
   * copy kept on disk, or a 304 to a conditional GET), a miss downloaded the body.
   */
  readonly served = { hits: 0, misses: 0, bytesFromCache: 0, bytesDownloaded: 0 };

  constructor(maxBytes: number, cacheDir: string) {
    this.dir = join(cacheDir, "bodies");
    rmSync(this.dir, { recursive: true, force: true });
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    this.lru = new LRUCache<string, Entry>({
      maxSize: Math.max(1, maxBytes),
      sizeCalculation: (e) => Math.max(1, e.size),
      dispose: (e) => {
        try {
          unlinkSync(e.file);
        } catch {
          // gone already
        }
      },
    });
  }

  /** The cached version of note `id` (its body is read when asked for). */
  get(id: string): CachedBody | undefined {
    const e = this.lru.get(id);
    return e && { etag: e.etag, body: () => this.read(id, e) };
  }

  /** Whether the cached copy of `id` is the given version (nothing is read). */
  isFresh(id: string, etag: string | undefined): boolean {
    return etag !== undefined && this.lru.peek(id)?.etag === etag;
  }

  /** The body if the cached copy is the given version. */
  fresh(id: string, etag: string | undefined): Buffer | undefined {
    const e = this.lru.get(id);
    return e && etag && e.etag === etag ? this.read(id, e) : undefined;
  }

  /** Keeps `body` as the version `etag` of note `id`, and returns it. */
  set(id: string, etag: string, body: Buffer): Buffer {
    if (body.length > this.lru.maxSize) return body; // larger than the whole cache: don't evict everything
    const file = join(this.dir, `${id}.${++this.files}`);
    writeFileSync(file, body, { mode: 0o600 });
    this.lru.set(id, { etag, size: body.length, file });
    return body;
  }

  delete(id: string): void {
    this.lru.delete(id);
  }

  /** Counts a body handed out: from a copy held here (`hit`) or downloaded. */
  count(body: Buffer, hit: boolean): Buffer {
    if (hit) {
      this.served.hits++;
      this.served.bytesFromCache += body.length;
    } else {
      this.served.misses++;
      this.served.bytesDownloaded += body.length;
    }
    return body;
  }

  get bytes(): number {
    return this.lru.calculatedSize;
  }

  get entries(): number {
    return this.lru.size;
  }

  /** A body's file read back; one gone (removed under us) is a miss, never an error. */
  private read(id: string, e: Entry): Buffer | undefined {
    try {
      return readFileSync(e.file);
    } catch {
      this.lru.delete(id);
      return undefined;
    }
  }
}
