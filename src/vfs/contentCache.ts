// Note bodies by file id, bounded in bytes (`--cache-size`). Two tiers:
// - the bodies used last, up to HOT_MAX_BYTES, in memory (least recently used first out): a burst
//   of saves and reads of the same notes (appends, `sed -i`, new notes read back) stays here;
// - the rest in one ring file in the cache dir (`CACHE/bodies.ring`), written in turn and wrapping
//   around, so the oldest written is the first overwritten. A body pushed out of memory is
//   appended there with one pwrite: no file made or removed per body (creating 500 small files
//   costs ~270 ms on this machine's disk). A body read again comes from the kernel's page cache,
//   which the system reclaims under pressure, and the daemon's RSS does not hold the cache
//   (10,000 notes read through a 32 MiB cache: ~105 MiB, was ~130).
// The index (id -> ETag, place in the ring) is in memory and dies with the process, so the ring is
// emptied at start: nothing torn or stale is ever served. Bodies a device keeps across restarts
// (offline) are the pins' (meta/pins.ts).
import { closeSync, openSync, readSync, writeSync } from "node:fs";
import { join } from "node:path";
import { LRUCache } from "lru-cache";

export interface CachedBody {
  etag: string;
  /** Read from the ring when asked for; undefined if it was overwritten since. */
  body(): Buffer | undefined;
}

/** A body in the ring: `start` counts every byte ever written (the ring's offset is start % size). */
interface RingEntry {
  id: string;
  etag: string;
  start: number;
  length: number;
}

/** The in-memory tier (a quarter of a smaller cache). */
const HOT_MAX_BYTES = 8 << 20;

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

export class ContentCache {
  /** The bodies used last; the ones pushed out go to the ring. */
  private readonly hot: LRUCache<string, { etag: string; body: Buffer }>;
  /** What the ring holds, by note: an entry goes as soon as a write overwrites its bytes. */
  private readonly ring = new Map<string, RingEntry>();
  /** Ring entries in the order written: the oldest are forgotten once overwritten. */
  private written: RingEntry[] = [];
  private oldest = 0;
  private readonly ringSize: number;
  private readonly fd: number;
  /** Bytes ever written to the ring: the next body goes at `head % ringSize`. */
  private head = 0;
  /**
   * Bodies handed to opened notes (`txtfs status --json`): a hit needed no download (this cache, a
   * copy kept on disk, or a 304 to a conditional GET), a miss downloaded the body.
   */
  readonly served = { hits: 0, misses: 0, bytesFromCache: 0, bytesDownloaded: 0 };

  constructor(maxBytes: number, cacheDir: string) {
    const hotBytes = Math.min(HOT_MAX_BYTES, Math.floor(maxBytes / 4));
    this.ringSize = Math.max(1, maxBytes - hotBytes);
    // An earlier daemon's ring is emptied (its index died with it).
    this.fd = openSync(join(cacheDir, "bodies.ring"), "w+", 0o600);
    this.hot = new LRUCache<string, { etag: string; body: Buffer }>({
      maxSize: Math.max(1, hotBytes),
      sizeCalculation: (e) => Math.max(1, e.body.length),
      // Pushed out by newer bodies: to the ring (not when replaced or deleted).
      dispose: (e, id, reason) => {
        if (reason === "evict") this.spill(id, e.etag, e.body);
      },
    });
  }

  /** The cached version of note `id` (a body in the ring is read when asked for). */
  get(id: string): CachedBody | undefined {
    const h = this.hot.get(id);
    if (h) return { etag: h.etag, body: () => h.body };
    const e = this.ring.get(id);
    return e && { etag: e.etag, body: () => this.read(id, e) };
  }

  /** Whether the cached copy of `id` is the given version (nothing is read). */
  isFresh(id: string, etag: string | undefined): boolean {
    return etag !== undefined && (this.hot.peek(id) ?? this.ring.get(id))?.etag === etag;
  }

  /** The body if the cached copy is the given version. */
  fresh(id: string, etag: string | undefined): Buffer | undefined {
    if (!etag) return undefined;
    const h = this.hot.get(id);
    if (h) return h.etag === etag ? h.body : undefined;
    const e = this.ring.get(id);
    return e?.etag === etag ? this.read(id, e) : undefined;
  }

  /**
   * `length` bytes at `position` of the cached version `etag` of note `id`, or undefined when that
   * version is not here. A note read piece by piece (a reader opened natively reads by path, 128 KiB
   * a call) costs each piece, not the whole body again: from the ring, only those bytes are read.
   */
  freshRange(id: string, etag: string | undefined, position: number, length: number): Buffer | undefined {
    if (!etag) return undefined;
    const h = this.hot.get(id);
    if (h) return h.etag === etag ? h.body.subarray(position, position + length) : undefined;
    const e = this.ring.get(id);
    return e?.etag === etag ? this.read(id, e, position, length) : undefined;
  }

  /** Keeps `body` as the version `etag` of note `id`, and returns the copy kept. */
  set(id: string, etag: string, body: Buffer): Buffer {
    this.ring.delete(id); // an older version
    if (body.length > this.hot.maxSize) {
      this.hot.delete(id);
      this.spill(id, etag, body);
      return body;
    }
    // A small Buffer is often a view into a shared slab (Buffer.from pools them): keeping the view
    // would keep the whole slab alive, so an exact-size copy is kept instead.
    const kept = body.byteLength === body.buffer.byteLength ? body : ownCopy(body);
    this.hot.set(id, { etag, body: kept });
    return kept;
  }

  delete(id: string): void {
    this.hot.delete(id);
    this.ring.delete(id);
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

  /** Bytes held: the memory tier, and what of the ring is not overwritten yet. */
  get bytes(): number {
    return this.hot.calculatedSize + Math.min(this.head, this.ringSize);
  }

  get entries(): number {
    return this.hot.size + this.ring.size;
  }

  close(): void {
    closeSync(this.fd);
  }

  /** Appends `body` to the ring (one larger than the ring is not kept). */
  private spill(id: string, etag: string, body: Buffer): void {
    if (body.length > this.ringSize) return;
    let at = this.head % this.ringSize;
    if (at + body.length > this.ringSize) {
      this.head += this.ringSize - at; // wrap: the tail is left unused this lap
      at = 0;
    }
    try {
      writeSync(this.fd, body, 0, body.length, at);
    } catch {
      return; // not kept (disk full): a miss later
    }
    const entry = { id, etag, start: this.head, length: body.length };
    this.ring.set(id, entry);
    this.written.push(entry);
    this.head += body.length;
    // The index forgets what this write (or an earlier one) overwrote.
    while (
      this.oldest < this.written.length &&
      this.written[this.oldest]!.start < this.head - this.ringSize
    ) {
      const gone = this.written[this.oldest++]!;
      if (this.ring.get(gone.id) === gone) this.ring.delete(gone.id);
    }
    if (this.oldest > 1024 && this.oldest * 2 > this.written.length) {
      this.written = this.written.slice(this.oldest);
      this.oldest = 0;
    }
  }

  /**
   * A body read back from the ring (or `length` bytes of it at `position`); one cut short (the file
   * truncated under us) is a miss.
   */
  private read(id: string, e: RingEntry, position = 0, length = e.length): Buffer | undefined {
    const n = Math.max(0, Math.min(length, e.length - position));
    const body = Buffer.allocUnsafeSlow(n);
    try {
      if (n === 0 || readSync(this.fd, body, 0, n, (e.start % this.ringSize) + position) === n) return body;
    } catch {
      // unreadable: a miss
    }
    this.ring.delete(id);
    return undefined;
  }
}
