import { LRUCache } from "lru-cache";

export interface CachedBody {
  etag: string;
  body: Buffer;
}

/** `text` as UTF-8 in an ArrayBuffer of its own, of its exact size (never in a shared slab). */
export function ownBytes(text: string): Buffer {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text, "utf8"));
  bytes.write(text, "utf8");
  return bytes;
}

/** `body` in an ArrayBuffer of its own, of its exact size. */
function ownCopy(body: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(body.length);
  body.copy(copy);
  return copy;
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

  /**
   * Keeps `body` and returns the copy kept. A small Buffer is usually a view into a shared 64 KiB
   * slab (Buffer.from(string) pools them): keeping the view would keep the whole slab alive, so
   * the cache keeps an exact-size copy instead.
   */
  set(id: string, etag: string, body: Buffer): Buffer {
    if (body.length > this.lru.maxSize) return body; // larger than the whole cache: don't evict everything
    const kept = body.byteLength === body.buffer.byteLength ? body : ownCopy(body);
    this.lru.set(id, { etag, body: kept });
    return kept;
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
