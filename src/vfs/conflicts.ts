import { randomBytes, randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { ApiError, withoutContent } from "../client/api.ts";
import type { TxtFile } from "../lib/apiTypes.ts";
import { type Base, baseOf } from "./base.ts";
import { BoundedMap } from "./boundedMap.ts";
import { type Clock, isoNow } from "./clock.ts";
import type { VfsCore } from "./core.ts";
import { revisionOf } from "./revisions.ts";
import type { FileNode, NoteMeta } from "./tree.ts";

/**
 * `note.md` -> `note.conflict-host-20261121T223000-k3f9q2.md`: the time says when, the random tail
 * keeps two copies made in the same second apart (each one must be findable; none may replace
 * another). Within the 255 bytes a name may have.
 */
export function conflictName(name: string, clock: Clock): string {
  const stamp = isoNow(clock).replace(/[-:]/g, "").slice(0, 15);
  const tail = randomBytes(4).readUInt32BE(0).toString(36).padStart(6, "0").slice(-6);
  const tag = `conflict-${hostname()
    .replace(/[^\w-]/g, "")
    .slice(0, 40)}-${stamp}-${tail}`;
  const dot = name.lastIndexOf(".");
  let [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ""];
  while (Buffer.byteLength(`${stem}.${tag}${ext}`, "utf8") > 255) stem = stem.slice(0, -1);
  return `${stem}.${tag}${ext}`;
}

/** What conflicts use of the mount's shared state. */
export type ConflictsCore = Pick<VfsCore, "cache" | "client" | "clock" | "conflictCopies" | "log" | "tree">;

export class Conflicts {
  readonly c: ConflictsCore;

  constructor(c: ConflictsCore) {
    this.c = c;
  }

  /** "id etag" -> the version our own save made of it (see ownSuccessor); bounded, oldest dropped. */
  readonly superseded = new BoundedMap<string, NonNullable<Base>>(10_000);
  /**
   * Saves of one note in this mount form one line (its open handles share a buffer), so a save
   * based on a version that an earlier save of ours replaced builds on our version, not on a
   * remote change: it must not become a conflict copy. (Write-behind captures a save's base before
   * the save ahead of it is delivered.)
   */
  ownSuccessor(id: string, base: Base): Base {
    let current = base;
    // Bounded: an update that changed nothing keeps its ETag, and the map must never loop.
    for (let hops = 0; current && hops < 1000; hops++) {
      const next = this.superseded.get(`${id} ${current.etag}`);
      if (!next || next.etag === current.etag) break;
      current = next;
    }
    return current;
  }

  /** Told of every version our own saves make (claims.ts: a note kept local builds on it). */
  private readonly ownVersionListeners: ((id: string, meta: NoteMeta) => void)[] = [];

  onOwnVersion(listener: (id: string, meta: NoteMeta) => void): void {
    this.ownVersionListeners.push(listener);
  }

  /** Our save turned version `base` of note `id` into `meta` (see ownSuccessor). */
  replaced(id: string, base: Base, meta: NoteMeta): void {
    if (base && base.etag !== meta.etag) this.superseded.set(`${id} ${base.etag}`, baseOf(meta)!);
    for (const listener of this.ownVersionListeners) listener(id, meta);
  }

  /**
   * The note changed remotely since our edit began. If only its metadata changed (same content as
   * our base), our content applies on top; otherwise both are kept.
   */
  async afterPreconditionFailed(node: FileNode, content: string, base: Base, superseded?: string[]) {
    const remote = await this.c.client.readFile(node.id!);
    // Already exactly our bytes: this save reached the service before (its answer was lost to a
    // kill -9 of the daemon, and the journal sent it again). Nothing to keep apart.
    if (remote && remote.content === content) {
      const meta = withoutContent(remote);
      this.c.tree.upsertFile(meta, true);
      return { meta, body: content };
    }
    // One version past the base, with the bytes of a save of ours this one replaced in the journal
    // while it was on its way (its answer lost to a kill -9: `echo x > note`'s empty first step,
    // delivered alone): that version is ours, so this save goes on top of it, not beside it.
    const ownStep =
      !!remote &&
      !!base &&
      !!superseded?.includes(remote.contentHash) &&
      revisionOf(remote.etag) === revisionOf(base.etag) + 1;
    if (remote && ((base?.hash && remote.contentHash === base.hash) || ownStep)) {
      try {
        const meta = withoutContent(
          await this.c.client.updateFile(node.id!, { content }, { ifMatch: remote.etag }),
        );
        this.c.tree.upsertFile(meta, true);
        return { meta, body: content };
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 412)) throw err;
      }
    }
    return this.keepBoth(node, content);
  }

  /** The note's content changed remotely since we read it: the remote stays, ours is saved beside it. */
  async keepBoth(node: FileNode, content: string): Promise<{ meta: TxtFile; body: string }> {
    const name = conflictName(node.remoteName, this.c.clock);
    const copy = withoutContent(
      await this.c.client.createFile({ name, content, folderId: node.parent.id }, randomUUID()),
    );
    const path = `${this.c.tree.pathOf(node.parent)}/${name}`.replace(/^\/\//, "/");
    this.c.tree.upsertFile(copy, true);
    this.c.cache.set(copy.id, copy.etag, Buffer.from(content, "utf8"));
    this.c.conflictCopies.push(path);
    this.c.log.warn(
      { path: this.c.tree.pathOf(node), copy: path },
      "conflict: the note changed remotely; kept ours as a copy",
    );
    const remote = await this.c.client.readFile(node.id!);
    if (!remote) throw new Error("unreachable: unconditional read answered 304");
    const meta = withoutContent(remote);
    this.c.tree.upsertFile(meta);
    return { meta, body: remote.content };
  }
}
