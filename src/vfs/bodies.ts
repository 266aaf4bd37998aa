// Where a note's current body comes from: the save on its way, the cache, the kept copy, or the
// service (a conditional GET). Every reader of a note's bytes asks here.
import { ApiError, withoutContent } from "../client/api.ts";
import { handlingBody } from "../lib/memoryMode.ts";
import { baseOf } from "./base.ts";
import { ownBytes } from "./contentCache.ts";
import type { VfsCore } from "./core.ts";
import type { Delivery } from "./delivery/deliver.ts";
import { journalKey } from "./delivery/journalKeys.ts";
import { isTransient, toVfsError } from "./errors.ts";
import type { FileNode } from "./tree.ts";

/** What a body read needs of delivery: appends on their way go first. */
export type BodiesDelivery = Pick<Delivery, "inRound" | "journalSave" | "settle">;

/** What a body read needs of the mount's state. */
export type BodiesCore = Pick<VfsCore, "cache" | "client" | "journal" | "pins" | "prefetch" | "tree">;

export class Bodies {
  private readonly c: BodiesCore;
  private readonly delivery: BodiesDelivery;

  constructor(c: BodiesCore, delivery: BodiesDelivery) {
    this.c = c;
    this.delivery = delivery;
  }

  /**
   * A piece of the current body of a note when it is at hand (its save on its way, or the cached
   * version it has now), without reading the rest; undefined otherwise (then `body`).
   */
  bodyPiece(node: FileNode, position: number, length: number): Buffer | undefined {
    const journalled = node.note?.journalled;
    if (journalled) return journalled.subarray(position, position + length);
    if (!node.id || this.c.journal.get(journalKey(node))?.append) return undefined;
    return this.c.cache.freshRange(node.id, node.meta?.etag, position, length);
  }

  /**
   * The current body of a note: cache, or a conditional GET (304 moves no body). Appends on their
   * way (`file.append`) go first, and the body is the version they made on the service: what a
   * reader sees is never a version the service does not have (a remote edit may have come
   * between). That version is cached when they went onto the cached one (appendDelivered).
   */
  async body(node: FileNode): Promise<Buffer> {
    handlingBody(node.note?.dirtySize ?? node.meta?.size ?? 0);
    const journalled = node.note?.journalled;
    if (journalled) return journalled;
    if (this.c.journal.get(journalKey(node))?.append) {
      const shown = await this.delivery.settle(node).then(
        () => undefined,
        (err: unknown) => this.appendsAsWhole(node, err),
      );
      if (shown) return shown;
    }
    if (!node.id) return node.note?.open?.content ?? Buffer.alloc(0);
    this.c.prefetch.opened(node);
    const etag = node.meta?.etag;
    const cached = this.c.cache.fresh(node.id, etag);
    if (cached) return this.c.cache.count(cached, true);
    const kept = await this.c.pins.read(node.id, etag);
    if (kept && etag) {
      this.c.cache.set(node.id, etag, kept);
      return this.c.cache.count(kept, true);
    }
    const pending = this.c.prefetch.missing(node.parent);
    if (pending) {
      await pending;
      const now = this.c.cache.fresh(node.id, node.meta?.etag);
      if (now) return this.c.cache.count(now, false); // downloaded with its folder
    }
    const old = this.c.cache.get(node.id);
    try {
      let detail = await this.c.client.readFile(node.id, old?.etag);
      const current = detail ? undefined : old!.body();
      if (current) return this.c.cache.count(current, true); // 304: our copy is current
      // ... but overwritten in the ring since: the body again (no 304 without an ETag)
      detail ??= (await this.c.client.readFile(node.id))!;
      const body = this.c.cache.set(node.id, detail.etag, ownBytes(detail.content));
      this.c.tree.upsertFile(withoutContent(detail));
      await this.c.pins.remember(node, detail.etag, body);
      return this.c.cache.count(body, false);
    } catch (err) {
      // Offline: an older cached copy is better than no copy; a pinned note's kept body is one.
      const older = old && isTransient(err) ? old.body() : undefined;
      if (older) return this.c.cache.count(older, true);
      const keptAny = isTransient(err) ? await this.c.pins.read(node.id, undefined, true) : undefined;
      if (keptAny) return this.c.cache.count(keptAny, true);
      // Gone from the service: its delete was not seen here (the feed has not brought it yet). It
      // goes as the feed's would (lifecycle.ts: a note with a save of ours waiting stays, and that
      // save creates it again), so no name stays listed that no open can ever read.
      if (err instanceof ApiError && err.status === 404) this.c.tree.remoteDelete(node.id);
      throw toVfsError(err);
    }
  }

  /**
   * The service cannot be reached and appends to `node` wait: when the version they go onto is
   * cached, they become one save of the whole note on that version, so it reads as written here
   * offline too (and, should the note have changed remotely since, that save is kept as a
   * conflict copy, as any save built on an older version). Otherwise `err` stands.
   */
  private async appendsAsWhole(node: FileNode, err: unknown): Promise<Buffer> {
    const appends = this.c.journal.get(journalKey(node));
    const base = node.id && appends?.append ? this.c.cache.fresh(node.id, node.meta?.etag) : undefined;
    // Appends in a round still going (the service silent, not found unreachable) may land any
    // moment: a whole save built on the version before them would meet them as an edit made elsewhere.
    if (!base || this.delivery.inRound(journalKey(node))) throw err;
    const whole = Buffer.concat([base, Buffer.from(appends!.content ?? "", "utf8")]);
    await this.delivery.journalSave(node, whole, baseOf(node.meta));
    return whole;
  }
}
