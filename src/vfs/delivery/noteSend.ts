// One note's save to the service, sent on its own, and what its answer means: a conflict copy (a
// 412), a create again (deleted remotely), a refusal kept as a local file, a create bound to the note.
import { randomUUID } from "node:crypto";
import { ApiError, madeBefore, withoutContent } from "../../client/api.ts";
import type { TxtFile } from "../../lib/apiTypes.ts";
import { contentHash } from "../../lib/contentHash.ts";
import { type Base, baseOf } from "../base.ts";
import { isoNow } from "../clock.ts";
import type { Conflicts } from "../conflicts.ts";
import type { VfsCore } from "../core.ts";
import type { Claims } from "../local/claims.ts";
import { unsentName } from "../names.ts";
import { revisionOf } from "../revisions.ts";
import type { FileNode, PendingMeta } from "../tree.ts";
import { createOnItsWay } from "./createsOnTheirWay.ts";
import type { JournalEntry } from "./journal.ts";
import { landedOnBase } from "./landedOnBase.ts";
import type { RunningRound } from "./runningRound.ts";

/** The parts a note's send calls: conflicts met, a create bound locally, the round's held deletes. */
export interface NoteSendParts {
  claims: Pick<Claims, "created">;
  conflicts: Pick<Conflicts, "afterPreconditionFailed" | "ownSuccessor" | "replaced">;
  round: Pick<RunningRound, "noteDeletedMeanwhile">;
}

export type NoteSendCore = Pick<
  VfsCore,
  | "cache"
  | "client"
  | "clock"
  | "createsOnTheirWay"
  | "follower"
  | "freeName"
  | "journal"
  | "localNodes"
  | "log"
  | "notes"
  | "reports"
  | "unshadowNote"
  | "tree"
>;

export class NoteSend {
  private readonly c: NoteSendCore;
  private readonly claims: NoteSendParts["claims"];
  private readonly conflicts: NoteSendParts["conflicts"];
  private readonly round: NoteSendParts["round"];

  constructor(c: NoteSendCore, parts: NoteSendParts) {
    this.c = c;
    this.claims = parts.claims;
    this.conflicts = parts.conflicts;
    this.round = parts.round;
  }

  /**
   * One note's content to the service: a create (with its Idempotency-Key) or a PUT with If-Match.
   * A 412 keeps both versions; a note deleted remotely since its base is created again. Returns the
   * note's record and the body it now has.
   */
  async send(
    node: FileNode,
    content: string | undefined,
    given: Base,
    move = false,
    superseded?: string[],
  ): Promise<{ meta: TxtFile; body: string | undefined }> {
    let meta: TxtFile;
    let body = content;
    if (node.id && move && content === undefined) {
      // A rename or move alone: its new name and folder (a rename never conflicts).
      meta = withoutContent(await this.c.client.updateFile(node.id, this.placeOf(node)));
      // A version of ours only if it landed on the content it was based on (see landedOnBase).
      const base = this.conflicts.ownSuccessor(node.id, given);
      const ours = landedOnBase(meta, base);
      if (ours) this.conflicts.replaced(node.id, base, meta);
      this.c.tree.upsertFile(meta, ours); // else its content is an edit made elsewhere: shown as one
      this.c.notes.of(node).refreshSize();
      return { meta, body };
    }
    const base = node.id ? this.conflicts.ownSuccessor(node.id, given) : given;
    if (!node.id) {
      const sent = node.note?.pendingMeta;
      const made = await this.createNote(node, content, sent);
      node.note?.metaDelivered(sent); // it went with the create
      meta = made.meta;
      body = content ?? "";
      // What its key made first holds other bytes, or is elsewhere (madeBefore): ours go on top.
      const changed = meta.contentHash !== contentHash(body);
      if (changed || made.moved) return this.send(node, changed ? body : undefined, baseOf(meta), made.moved);
    } else if (content === undefined) {
      throw new Error("unreachable: a journal entry with neither a body nor a move");
    } else {
      try {
        ({ meta, body } = await this.update(node, content, base, move, superseded));
      } catch (err) {
        // Deleted remotely (also while a conflict was being resolved): our save creates it again.
        if (!(err instanceof ApiError && err.status === 404)) throw err;
        this.c.log.warn({ path: this.c.tree.pathOf(node) }, "note was deleted remotely; saving it again");
        this.c.tree.removeFile(node.id);
        const createKey = randomUUID();
        node.id = null;
        node.createKey = createKey;
        // Beside the other note of its name, if one took that name when this one left the tree
        // (put in its place, that note would vanish from the listing).
        this.c.tree.addChild(node.parent, node, true);
        const sent = await this.send(node, content, null);
        // A save made during the send was keyed by this create: it builds on what it made.
        await this.c.journal.rekeyCreated(createKey, sent.meta);
        return sent;
      }
    }
    this.c.cache.set(meta.id, meta.etag, Buffer.from(body!, "utf8"));
    this.c.notes.of(node).refreshSize();
    return { meta, body };
  }

  /**
   * A note made here, to the service. Its folder removed elsewhere meanwhile (empty there; this
   * mount has not heard yet): the service moved what that folder held up a level, and the note goes
   * there too, as the feed's tombstone will move it here, rather than be refused and kept aside.
   */
  private async createNote(
    node: FileNode,
    content: string | undefined,
    sent: PendingMeta | undefined,
  ): Promise<{ meta: TxtFile; moved: boolean }> {
    for (;;) {
      const folderId = node.parent.id;
      try {
        const meta = await createOnItsWay(this.c, "file", node.remoteName, folderId, async () => {
          const made = withoutContent(
            await this.c.client.createFile(
              // Metadata set before the first upload (cp -a copies xattrs onto the new file) goes along.
              {
                name: node.remoteName,
                content: content ?? "",
                folderId,
                ...sent,
              },
              node.createKey,
            ),
          );
          await this.created(node, made);
          return made;
        });
        return { meta, moved: false };
      } catch (err) {
        const made = madeBefore<TxtFile>(err, "file");
        if (made) {
          this.c.log.warn(
            { path: this.c.tree.pathOf(node) },
            "its create went before with other bytes (an answer lost, or the journal taken back): bound to the note it made",
          );
          // Bound where it is here: renamed since the first went, the rename goes next.
          const here = { name: node.remoteName, folderId };
          await this.created(node, { ...made, ...here });
          return { meta: made, moved: made.name !== here.name || made.folderId !== here.folderId };
        }
        const folderGone = err instanceof ApiError && err.status === 404 && /^folderId\b/.test(err.message);
        if (!folderGone || folderId === null) throw err;
        // Moved since it went (the feed brought that folder's delete meanwhile): sent where it is
        // now. The folder it is in now is not the one the service said is gone.
        if (node.parent.id !== folderId) continue;
        if (!this.c.tree.dirs.has(folderId)) throw err;
        this.c.log.warn(
          { path: this.c.tree.pathOf(node) },
          "its folder was removed elsewhere; the note goes a level up, as what the folder held did",
        );
        this.c.tree.removeFolder(folderId);
      }
    }
  }

  /**
   * A note made here got its id. A note of its name it took the name from at a restart (see
   * VfsCore.shadowedBy) and is not what the create made shows again beside it; a note kept local
   * while the create was on its way is bound to it (Claims.created).
   */
  async created(node: FileNode, meta: TxtFile): Promise<void> {
    // An answer replayed for a create sent again (its Idempotency-Key, after a lost answer) is the
    // note as it was made: a newer version the listing or the feed brought meanwhile stands.
    const known = this.c.tree.files.get(meta.id)?.meta;
    const newer = known && revisionOf(known.etag) > revisionOf(meta.etag);
    this.c.tree.bindFile(node, newer ? { ...meta, ...known } : meta);
    // Deleted elsewhere since (the answer came again after a lost one, the feed's delete before it).
    this.round.noteDeletedMeanwhile(meta.id);
    this.c.unshadowNote(node, meta.id);
    await this.claims.created(node, meta);
  }

  /** The name and folder a note has here, to send when it was renamed or moved. */
  private placeOf(node: FileNode): { name: string; folderId: string | null } {
    return { name: node.remoteName, folderId: node.parent.id };
  }

  /**
   * One note's new content (If-Match its base), with its new name and folder when it moved: one
   * request (vim's save, which renames, waited in `fsync` for two). A 412 keeps both, or applies
   * ours on a metadata-only change; the move is applied first then (a rename never conflicts).
   * Sent apart before, the rename's new version stood for our base, so the body then overwrote an
   * edit made elsewhere since the base was read (a regression test has it).
   */
  private async update(
    node: FileNode,
    content: string,
    base: Base,
    move: boolean,
    superseded?: string[],
  ): Promise<{ meta: TxtFile; body: string }> {
    const sent = node.note?.pendingMeta;
    const place = move ? this.placeOf(node) : {};
    try {
      const meta = withoutContent(
        await this.c.client.updateFile(node.id!, { content, ...sent, ...place }, { ifMatch: base?.etag }),
      );
      node.note?.metaDelivered(sent);
      this.conflicts.replaced(node.id!, base, meta);
      this.c.tree.upsertFile(meta, true);
      return { meta, body: content };
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 412)) throw err;
      if (move) {
        const moved = withoutContent(await this.c.client.updateFile(node.id!, place));
        this.c.tree.upsertFile(moved, landedOnBase(moved, base));
      }
      return this.conflicts.afterPreconditionFailed(node, content, base, superseded);
    }
  }

  /**
   * A rename alone (no body waiting) of a note deleted elsewhere before it went: the delete
   * stands, as for a note with nothing waiting (lifecycle.ts); kept as a refused save, the note
   * would stay listed under its new name for good and every open of it fail with ENOENT. A save
   * made since is a newer entry: it keeps the note in view and creates it again when delivered.
   */
  async renamedButDeleted(entry: JournalEntry, node: FileNode): Promise<void> {
    this.c.log.info(
      { path: entry.path },
      "renamed here and deleted elsewhere before the rename went: the delete stands",
    );
    await this.c.journal.done(entry);
    if (node.id) this.c.tree.remoteDelete(node.id);
  }

  /**
   * The service refused a save for good (e.g. a limit): its bytes are kept as a local file,
   * visibly, and it is said in the log, `txtfs sync` (which then fails) and `txtfs status`.
   */
  async refused(entry: JournalEntry, node: FileNode, err: Error): Promise<void> {
    const reason = err.message;
    let keptAs: string | undefined;
    if (entry.content !== undefined) {
      const kept = this.c.localNodes.make(
        node.parent,
        this.c.freeName(node.parent, unsentName(node.name)),
        0o644,
        Buffer.from(entry.content, "utf8"),
      );
      keptAs = this.c.tree.pathOf(kept);
    }
    this.c.log.error(
      { err, path: entry.path, keptAs },
      "the service refused a save; its bytes are kept as a local file",
    );
    this.c.reports.saveRefused({ path: entry.path, reason, keptAs, at: isoNow(this.c.clock) });
    await this.c.journal.done(entry);
    this.c.notes.of(node).refused();
    if (!node.id) this.c.tree.detach(node); // never created: its bytes are in the kept file
    // A refused rename: show the note where the service has it.
    if (entry.move && node.id) await this.reloadNote(node.id);
  }

  /** Shows a note as the service has it now (a refused rename or delete). */
  async reloadNote(id: string): Promise<void> {
    const remote = await this.c.client.readFile(id).catch(() => undefined);
    if (remote) this.c.tree.upsertFile(withoutContent(remote));
  }
}
