// An attachment's bytes read from the service: at the first open of a file only listed so far,
// and at once for files under a folder pinned on this device; what was read stays within the
// cache's size (attachmentEviction.ts), least recently used first.
import { ApiError } from "../../client/api.ts";
import type { VfsCore } from "../core.ts";
import { fail } from "../errors.ts";
import type { LocalNode } from "../tree.ts";
import type { AttachmentBytes } from "./attachmentBytes.ts";
import type { AttachmentEviction } from "./attachmentEviction.ts";
import type { AttachmentPlaces } from "./attachmentPlaces.ts";

export type AttachmentDownloadsCore = Pick<VfsCore, "client" | "localNodes" | "log" | "pins" | "tree">;

export class AttachmentDownloads {
  private readonly c: AttachmentDownloadsCore;
  private readonly places: AttachmentPlaces;
  private readonly bytes: AttachmentBytes;
  private readonly eviction: () => AttachmentEviction;
  /** Reads of bytes from the service under way, one per file. */
  private readonly fetching = new Map<LocalNode, Promise<void>>();
  /** The round of `keepPinned` running, and whether another was asked for meanwhile. */
  private keeping: Promise<void> | undefined;
  private keepAgain = false;

  /** `eviction`: made after this (its `busy` asks `isFetching`). */
  constructor(
    c: AttachmentDownloadsCore,
    places: AttachmentPlaces,
    bytes: AttachmentBytes,
    eviction: () => AttachmentEviction,
  ) {
    this.c = c;
    this.places = places;
    this.bytes = bytes;
    this.eviction = eviction;
  }

  isFetching(node: LocalNode): boolean {
    return this.fetching.has(node);
  }

  /**
   * Files under a folder pinned on this device are kept complete for offline use, as its notes
   * are: bytes not read yet (listed, made or changed elsewhere since) are read now, one at a time.
   * A failure waits for the next round (the service unreachable, the file gone meanwhile).
   */
  keepPinned(): Promise<void> {
    if (this.keeping) {
      this.keepAgain = true;
      return this.keeping;
    }
    this.keeping = this.readPinned().finally(() => {
      this.keeping = undefined;
      if (this.keepAgain) {
        this.keepAgain = false;
        void this.keepPinned();
      }
    });
    return this.keeping;
  }

  private async readPinned(): Promise<void> {
    for (const node of [...this.places.byId.values()]) {
      if (!node.attachment?.remoteOnly || !this.c.tree.locals.has(node)) continue;
      if (this.c.pins.stateOf(node.parent) !== "pinned") continue;
      try {
        await this.ensureBytes(node);
      } catch (err) {
        this.c.log.debug({ err, path: this.c.tree.pathOf(node) }, "a pinned attachment is not read yet");
        return;
      }
    }
  }

  /** Back within the cache's size (least recently used clean bytes go). */
  trim(): void {
    const evicted = this.eviction().trim();
    if (evicted === 0) return;
    this.c.localNodes.save();
    this.c.log.debug(
      { evicted, kept: this.eviction().bytesOnDisk },
      "attachments' bytes evicted from the cache",
    );
  }

  /**
   * Its bytes are here (read from the service at the first open of a file only listed so far).
   * `emptied`: it is being truncated to nothing, so none are read.
   */
  async ensureBytes(node: LocalNode, emptied = false): Promise<void> {
    const b = node.attachment;
    if (!b?.remoteOnly) {
      if (b) this.eviction().used(node, node.size); // used again: the last to go
      return;
    }
    if (emptied && !this.fetching.has(node)) {
      await this.bytes.fill(node.blob, Buffer.alloc(0));
      if (node.attachment === b) b.remoteOnly = undefined;
      this.eviction().used(node, 0);
      return;
    }
    let reading = this.fetching.get(node);
    if (!reading) {
      reading = this.fetch(node).finally(() => this.fetching.delete(node));
      this.fetching.set(node, reading);
    }
    await reading;
    // Evicted again between its read and its reader (another file's read trimmed the cache).
    if (node.attachment?.remoteOnly) return this.ensureBytes(node, emptied);
  }

  private async fetch(node: LocalNode): Promise<void> {
    const b = node.attachment!;
    const blob = node.blob;
    let got: Awaited<ReturnType<typeof this.c.client.attachments.read>>;
    try {
      got = await this.c.client.attachments.read(b.id!);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) throw fail("ENOENT");
      throw fail("EIO", `could not read the attachment: ${(err as Error).message}`);
    }
    if (!got) throw fail("EIO");
    // A newer version came while it was read: that one is read (the next open, or a retry now).
    if (node.attachment !== b || node.blob !== blob || !b.remoteOnly) return this.ensureBytes(node);
    await this.bytes.fill(blob, got.bytes);
    b.remoteOnly = undefined;
    if (got.etag && got.etag !== b.etag) {
      b.etag = got.etag;
      b.hash = null;
    }
    node.size = got.bytes.length;
    this.c.tree.onChange(node);
    this.eviction().used(node, got.bytes.length);
    this.trim(); // (this one is busy until its read ends: never the one evicted)
    this.c.localNodes.save();
  }
}
