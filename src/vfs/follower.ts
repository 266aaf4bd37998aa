// Keeps the tree current: long-polls the change feed and applies each change (the mount's
// "ChangeNotify"). Content is not fetched here; a changed ETag makes the next open revalidate.
import { ApiError, type ChangeRecord, type TxtfsClient } from "../client/api.ts";
import type { Logger } from "../lib/logger.ts";
import { BoundedMap } from "./boundedMap.ts";
import type { ContentCache } from "./contentCache.ts";
import type { Tree } from "./tree.ts";

const BATCH_MS = 250;

export class ChangeFollower {
  cursor = 0;
  private running = false;
  private loop: Promise<void> | undefined;
  private readonly client: TxtfsClient;
  private readonly tree: Tree;
  private readonly cache: ContentCache;
  private readonly log: Logger;
  private readonly waitSeconds: number;
  private wake: (() => void) | undefined;
  private abort = new AbortController();
  /** When the feed last answered with every change there was (hasMore false); 0: never. */
  private caughtUpAt = 0;
  /** A long-poll is waiting right after such an answer: nothing is missed while it waits. */
  private waitingCurrent = false;
  /** Asked to list the whole account again (SIGHUP), before the next poll. */
  private relistWanted = false;
  /** Told whether each poll reached the service (a network failure or a 5xx: not). */
  onReach: (reachable: boolean) => void = () => {};
  /**
   * Whether a record may be what a create of ours on its way made (delivery/createsOnTheirWay.ts):
   * it waits, with every later record of the same item, until `releaseHeld` (the answer applied).
   */
  holds: (change: ChangeRecord) => boolean = () => false;
  /**
   * The service's attachments, when it keeps them (attachments/attachments.ts): their records
   * come with the feed's and go there, and a relisting lists them too.
   */
  attachments?: { change(change: ChangeRecord): void; folderKnown(): void; relist(): Promise<void> };
  private held: ChangeRecord[] = [];
  private readonly heldIds = new Set<string>();
  /**
   * Deletes of notes and folders this mount did not know when they came: a create of ours whose
   * answer was lost may have made one, and its answer, replayed later, names a deleted item
   * (takeDeleteOf). Bounded: such an answer comes within a few delivery rounds.
   */
  private readonly unknownDeletes = new BoundedMap<string, ChangeRecord>(10_000);

  constructor(client: TxtfsClient, tree: Tree, cache: ContentCache, log: Logger, waitSeconds: number) {
    this.client = client;
    this.tree = tree;
    this.cache = cache;
    this.log = log;
    this.waitSeconds = waitSeconds;
  }

  start(cursor: number): void {
    this.cursor = cursor;
    this.caughtUpAt = this.tree.clock.now(); // the listing just loaded was complete as of `cursor`
    this.running = true;
    this.loop = this.run();
  }

  /**
   * Ends following at once: the long-poll in flight is aborted, and whatever it or a relisting
   * still brings is dropped (the loop checks `running` after every wait), so the stop need not
   * wait for the abort to travel through the HTTP client (3.7 ms measured; an unmount's total did
   * not move beyond its noise: the delivery of what is pending runs while it waits).
   */
  stop(): void {
    this.running = false;
    this.abort.abort(); // end the long-poll in flight now, not when it times out
    this.wake?.();
    this.loop?.catch(() => {});
  }

  private async run(): Promise<void> {
    let backoff = 500;
    while (this.running) {
      const poll = this.abort.signal;
      try {
        if (this.relistWanted) {
          this.relistWanted = false;
          await this.relist("asked to list again (SIGHUP)").catch((err) => {
            this.relistWanted = true; // once the service answers again
            throw err;
          });
        }
        this.waitingCurrent = this.caughtUpAt > 0;
        const include = this.attachments ? "attachments" : undefined;
        const page = await this.client.changes(this.cursor, this.waitSeconds, 1000, poll, include);
        this.waitingCurrent = false;
        if (!this.running) return;
        this.onReach(true);
        for (const change of page.changes) this.apply(change);
        this.cursor = page.cursor;
        if (!page.hasMore) this.caughtUpAt = this.tree.clock.now();
        backoff = 500;
        // After a change, gather for a moment before asking again: a burst of writes (ours, mostly)
        // then costs one poll instead of one per write, and changes still show within ~0.5 s.
        if (page.changes.length && !page.hasMore) await this.pause(BATCH_MS);
      } catch (err) {
        this.waitingCurrent = false;
        if (!this.running) return;
        // The poll in flight was ended by requestRelist: not a failure of the service.
        if (poll.aborted) continue;
        if (err instanceof ApiError && err.status === 410) {
          await this.relist();
          continue;
        }
        if (!(err instanceof ApiError) || err.status >= 500) this.onReach(false);
        this.log.debug({ err }, "change feed unreachable; retrying");
        await this.pause(backoff);
        backoff = Math.min(backoff * 2, 10_000);
      }
    }
  }

  /**
   * Where the mount is in the change feed: its cursor, when it last had every change, and how far
   * behind it may be (0 while a long-poll waits right after such an answer: the service answers it
   * at the next change; otherwise the seconds since then).
   */
  position(now = this.tree.clock.now()): {
    cursor: number;
    currentAt: string | null;
    lagSeconds: number | null;
  } {
    return {
      cursor: this.cursor,
      currentAt: this.caughtUpAt ? new Date(this.caughtUpAt).toISOString() : null,
      lagSeconds: this.caughtUpAt === 0 ? null : this.waitingCurrent ? 0 : (now - this.caughtUpAt) / 1000,
    };
  }

  /**
   * Lists the account again before the next poll (SIGHUP: "drop the directory cache", as rclone
   * does): what the feed may have missed is fetched, what is gone is dropped. The long-poll in
   * flight is ended so this happens now.
   */
  requestRelist(): void {
    this.relistWanted = true;
    const inFlight = this.abort;
    this.abort = new AbortController();
    inFlight.abort();
    this.wake?.();
  }

  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wake = resolve;
      setTimeout(resolve, ms).unref();
    });
  }

  apply(change: ChangeRecord): void {
    if (change.kind === "share") {
      // Who shares with us: names their folder under `Shared with me/` (the items follow).
      const share = change.share as { ownerId?: string; ownerEmail?: string | null } | undefined;
      if (share?.ownerId && share.ownerEmail) this.tree.setOwner(share.ownerId, share.ownerEmail);
      return;
    }
    if (change.kind === "attachment") {
      this.attachments?.change(change);
      return;
    }
    if (change.kind !== "file" && change.kind !== "folder") return; // comments, suggestions, versions
    if (this.heldIds.has(change.id) || this.holds(change)) {
      this.held.push(change);
      this.heldIds.add(change.id);
      return;
    }
    this.tree.sawChange(change.changedAt); // a delete too: the root's mtime
    if (change.deleted && !(change.kind === "file" ? this.tree.files : this.tree.dirs).has(change.id))
      this.unknownDeletes.set(change.id, change);
    if (change.kind === "file") {
      if (change.deleted) {
        this.tree.withheld.deleteSeen(change.id); // no earlier record of it comes after this one
        this.tree.remoteDelete(change.id);
        this.cache.delete(change.id);
      } else if (change.file) {
        this.tree.upsertFile(change.file);
      }
    } else if (change.deleted) {
      this.tree.removeFolder(change.id);
    } else if (change.folder) {
      this.tree.upsertFolder(change.folder);
      this.attachments?.folderKnown();
    }
  }

  /** The feed's delete of `id`, if it came before this mount knew the id (see unknownDeletes). */
  takeDeleteOf(id: string): ChangeRecord | undefined {
    const change = this.unknownDeletes.get(id);
    this.unknownDeletes.delete(id);
    return change;
  }

  /** The records held so far are applied in their order (those that still may be ours wait on). */
  releaseHeld(): void {
    if (this.held.length === 0) return;
    const held = this.held;
    this.held = [];
    this.heldIds.clear();
    for (const change of held) this.apply(change);
  }

  /** List again and drop what is gone: our cursor is older than the retained history, or SIGHUP. */
  private async relist(why = "change feed cursor expired"): Promise<void> {
    this.log.warn(`${why}; re-listing`);
    const index = await this.client.flatIndex();
    if (!this.running) return;
    for (const o of index.owners ?? []) this.tree.setOwner(o.id, o.email);
    const files = new Set(index.files.map((f) => f.id));
    const folders = new Set(index.folders.map((f) => f.id));
    for (const f of index.folders) this.tree.upsertFolder(f);
    for (const f of index.files) this.tree.upsertFile(f);
    for (const id of [...this.tree.files.keys()]) if (!files.has(id)) this.tree.remoteDelete(id);
    for (const id of [...this.tree.dirs.keys()]) if (!folders.has(id)) this.tree.removeFolder(id);
    await this.attachments?.relist();
    if (!this.running) return;
    this.cursor = index.cursor;
    this.caughtUpAt = this.tree.clock.now();
  }
}
