import { LRUCache } from "lru-cache";

export interface CachedBody {
  etag: string;
  body: Buffer;
}

/** Note bodies by file id, bounded in bytes (`--cache-size`); the least recently used go first. */
export class ContentCache {
  private readonly lru: LRUCache<string, CachedBody>;
  /**
   * Bodies handed to opened notes (`txtfs status --json`): a hit needed no download (this cache, a
   * copy kept on disk, or a 304 to a conditional GET), a miss downloaded the body.
   */
  readonly served = { hits: 0, misses: 0, bytesFromCache: 0, bytesDownloaded: 0 };

  constructor(maxBytes: number) {
    this.lru = new LRUCache<string, CachedBody>({
      maxSize: Math.max(1, maxBytes),
      sizeCalculation: (v) => Math.max(1, v.body.length),
    });
  }

  get(id: string): CachedBody | undefined {
    return this.lru.get(id);
  }

  /** The body if the cached copy is the given version. */
  fresh(id: string, etag: string | undefined): Buffer | undefined {
    const hit = this.lru.get(id);
    return hit && etag && hit.etag === etag ? hit.body : undefined;
  }

  set(id: string, etag: string, body: Buffer): void {
    if (body.length > this.lru.maxSize) return; // larger than the whole cache: don't evict everything
    this.lru.set(id, { etag, body });
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
}
