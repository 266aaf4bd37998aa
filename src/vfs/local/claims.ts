// Claims: a note's identity left under a name (a ghost after a rename to a non-note name, content
// that cannot be a note, a delete still in the journal) and taken back by whatever next takes that
// name; and the moves between a note and a local-only file (adopt, keep local, become local).
import { isUtf8 } from "node:buffer";
import { withoutContent } from "../../client/api.ts";
import type { Attachments } from "../attachments/attachments.ts";
import { baseOf } from "../base.ts";
import type { Conflicts } from "../conflicts.ts";
import type { VfsCore } from "../core.ts";
import type { Delivery } from "../delivery/deliver.ts";
import { journalKey } from "../delivery/journalKeys.ts";
import { LocalHandle } from "../local/localFiles.ts";
import type { Attributes } from "../meta/attributes.ts";
import type { Creates } from "../namespace/creates.ts";
import type { OpenNote } from "../openNote.ts";
import { revisionOf } from "../revisions.ts";
import type { Claim, DirNode, FileNode, LocalNode, NoteMeta } from "../tree.ts";

/** The parts claims call: a claimed name becomes a note again through them. */
export interface ClaimsParts {
  attachments: Pick<Attachments, "unlinked">;
  attributes: Pick<Attributes, "continued">;
  conflicts: Pick<Conflicts, "onOwnVersion" | "ownSuccessor" | "replaced">;
  delivery: Pick<Delivery, "drain" | "journalSave" | "onItsWay">;
  creates: Pick<Creates, "materialize" | "newNote">;
}

/** What claims use of the mount's shared state. */
export type ClaimsCore = Pick<
  VfsCore,
  | "client"
  | "clock"
  | "localNodes"
  | "handles"
  | "isPending"
  | "journal"
  | "keptLocal"
  | "local"
  | "log"
  | "notes"
  | "tree"
  | "writeBehind"
>;

export class Claims {
  private readonly attachments: ClaimsParts["attachments"];
  private readonly attributes: ClaimsParts["attributes"];
  private readonly conflicts: ClaimsParts["conflicts"];
  private readonly delivery: ClaimsParts["delivery"];
  private readonly creates: ClaimsParts["creates"];
  readonly c: ClaimsCore;

  constructor(c: ClaimsCore, parts: ClaimsParts) {
    this.attachments = parts.attachments;
    this.c = c;
    this.attributes = parts.attributes;
    this.conflicts = parts.conflicts;
    this.delivery = parts.delivery;
    this.creates = parts.creates;
    this.conflicts.onOwnVersion((id, meta) => this.ownVersion(id, meta));
  }

  /**
   * A save of ours that was on its way when its note was kept local (becomeLocal) landed: the file
   * builds on that version now. On record at once, before the save leaves the journal: after a
   * kill -9 the file, text again, goes up over our version, not as a conflict copy beside it.
   */
  private ownVersion(id: string, meta: NoteMeta): void {
    if (!this.c.tree.withheld.isGhost(id)) return; // every save lands here: the walk only for a kept note's
    let changed = false;
    for (const local of this.c.tree.locals) {
      const claim = local.ghostOf;
      if (claim?.id !== id || revisionOf(claim.etag) >= revisionOf(meta.etag)) continue;
      local.ghostOf = { ...claim, etag: meta.etag, hash: meta.contentHash, name: meta.name, meta };
      changed = true;
    }
    if (!changed) return;
    this.c.localNodes.save();
    this.c.localNodes.flush();
  }

  /** Notes deleted here whose delete is still in the journal, by folder and name (see Claim). */
  readonly tombstones = new Map<DirNode, Map<string, Claim>>();
  /** Notes kept local (becomeLocal) while their create was on its way, and the file each became. */
  private readonly keptBeforeCreated = new Map<FileNode, LocalNode>();
  /**
   * Takes the identity left under `name` in `dir`, if any (see Claim): a ghost showing that name
   * (then it becomes a plain local file: vim's backup, sed's `.bak`), a delete of a note of
   * that name still waiting in the journal (then the delete is called off), or a file elsewhere
   * standing for a note that has this name here on the service. `onlyHidden`: only
   * what libfuse hid as `.fuse_hidden*` (a note moved onto a name held open: a rename over it).
   */
  async claimName(dir: DirNode, name: string, onlyHidden = false): Promise<Claim | undefined> {
    // Only a local file stands for a note: among those (few), not among all of the folder's
    // children (every create in a folder of 10,000 notes walked them all).
    for (const local of this.c.tree.locals) {
      if (local.parent !== dir || local.ghostOf?.shownAs !== name) continue;
      if (onlyHidden && !local.name.startsWith(".fuse_hidden")) continue;
      // Renamed here from another folder (`mv d/a.md old.md~`): the name it left is in that folder.
      if (!this.inFolder(local.ghostOf, dir)) continue;
      return this.takeGhost(local);
    }
    if (onlyHidden) return undefined;
    const claim = this.tombstones.get(dir)?.get(name);
    if (claim) {
      const entry = this.c.journal.get(claim.id);
      if (entry?.delete !== "file" || this.delivery.onItsWay(claim.id)) return undefined; // it went
      this.dropTombstone(claim.id);
      await this.c.journal.done(entry);
      this.c.tree.withheld.deleteEnded(claim.id, false);
      return claim;
    }
    // A note renamed to a name that is not a note's and moved to another folder since (`mv a.md
    // old/a.bak`) is still under this name on the service: it continues, or the service would hold
    // two notes of this name here.
    if (dir.id === null && dir !== this.c.tree.root) return undefined; // not a folder of the service
    if (!this.c.tree.withheld.anyGhost) return undefined; // (no file stands for a note: no walk)
    for (const local of this.c.tree.locals) {
      const ghost = local.ghostOf;
      if (ghost?.name === name && ghost.meta && this.inFolder(ghost, dir)) return this.takeGhost(local);
    }
    return undefined;
  }

  /** Whether the note a claim stands for is in `dir` on the service (as far as this mount knows). */
  private inFolder(claim: Claim, dir: DirNode): boolean {
    return !claim.meta || (claim.meta.folderId ?? null) === dir.id;
  }

  /** The note a local file stood for goes on elsewhere; the file stays, a plain local file. */
  private takeGhost(local: LocalNode): Claim {
    const claim = local.ghostOf!;
    local.ghostOf = undefined;
    this.c.localNodes.save();
    // Tags or context set on the file while it stood for the note go on with the note.
    return local.pendingMeta ? { ...claim, pendingMeta: local.pendingMeta } : claim;
  }

  dropTombstone(id: string): void {
    for (const [dir, names] of this.tombstones) {
      for (const [name, claim] of names) if (claim.id === id) names.delete(name);
      if (names.size === 0) this.tombstones.delete(dir);
    }
  }

  /**
   * A note whose content is no longer valid UTF-8 (a note is text: the service would have to alter
   * the bytes) becomes a local-only file holding exactly those bytes, still bound to the note (see
   * Claim), and every handle open on it now reads and writes that file. Written as text again, it
   * goes up as the same note. Returns that file.
   */
  async becomeLocal(open: OpenNote, content: Buffer): Promise<LocalNode> {
    const node = open.node;
    const dir = node.parent;
    let base = open.base ?? baseOf(node.meta);
    // Earlier (text) saves still waiting are moot now (`> note` sends its empty step first), unless
    // already on their way: the service keeps what it has, the claim is based on that.
    const pending = this.c.journal.get(journalKey(node));
    const moot = pending && !this.delivery.onItsWay(journalKey(node)) ? pending : undefined;
    if (moot) base = moot.baseEtag ? { etag: moot.baseEtag, hash: moot.baseHash ?? "" } : null;
    // A version our own save made of it since (an append that landed while a program held the note
    // open on the one before): the claim names ours, on disk, so it holds after a kill -9 too.
    if (node.id && base) base = this.conflicts.ownSuccessor(node.id, base);
    const claim: Claim | undefined = node.id
      ? {
          id: node.id,
          etag: base?.etag ?? "",
          hash: base?.hash,
          name: node.remoteName,
          shownAs: node.name,
          meta: node.meta ?? undefined,
        }
      : undefined;
    if (node.id) this.c.tree.removeFile(node.id);
    else this.c.tree.detach(node);
    const local = this.c.localNodes.make(dir, node.name, node.mode ?? 0o644, content);
    local.mtimeMs = local.ctimeMs = this.c.notes.timesOf(node)?.mtimeMs ?? this.c.clock.now();
    local.pendingMeta = node.note?.pendingMeta; // tags set before it was delivered go along
    if (!claim) local.keptNote = true; // with a claim, ghostOf says it was a note
    // Its create is on its way (not moot): the service gets the note anyway; the answer binds it here.
    if (!node.id && pending && !moot) this.keptBeforeCreated.set(node, local);
    this.attributes.continued(node, local);
    this.keepLocal(local, claim, "not valid UTF-8");
    // The program is told its save succeeded when this returns: the file is on record before the
    // saves it makes moot leave the journal, so a kill -9 at any moment keeps one or the other.
    this.c.localNodes.flush();
    for (const [fd, h] of this.c.handles) {
      if (h.kind !== "note" || h.open !== open) continue;
      const fh = LocalHandle.open(local.blob, h.writable);
      this.c.handles.set(fd, { kind: "local", node: local, fh, append: h.append });
    }
    this.c.notes.of(node).handedAway(open, false);
    if (moot) {
      node.note?.forgotten();
      await this.c.journal.done(moot);
      // Its move went with that save: the service still has the note where it was, and a note
      // made there next would be a second of that name. It moves now (as a kept note's rename does).
      if (moot.move && claim) await this.follow(local, true);
    }
    return local;
  }

  /** Whether `local` became a file while its note's create was on its way (that answer binds it). */
  createOnItsWay(local: LocalNode): boolean {
    for (const kept of this.keptBeforeCreated.values()) if (kept === local) return true;
    return false;
  }

  /**
   * A create on its way when its note became a local file (becomeLocal) was answered: the file
   * stands for that note from now on, as for a note the service had (written as text again it
   * saves over it, renamed it moves it). A file gone meanwhile takes the note with it, or the
   * service would keep a note of that name this mount no longer shows (a second one, once a new
   * note takes the name).
   */
  async created(node: FileNode, meta: NoteMeta): Promise<void> {
    const local = this.keptBeforeCreated.get(node);
    if (!local) return;
    this.keptBeforeCreated.delete(node);
    this.c.tree.removeFile(meta.id); // shown as the local file, never beside it
    if (this.c.tree.locals.has(local) && !local.ghostOf) {
      local.keptNote = undefined;
      const claim = {
        id: meta.id,
        etag: meta.etag,
        hash: meta.contentHash,
        name: meta.name,
        shownAs: local.name,
        meta,
      };
      this.keepLocal(local, claim, "not valid UTF-8");
      await this.follow(local); // moved or renamed meanwhile: the note goes there too
      return;
    }
    this.c.tree.withheld.deleteStarted(meta.id); // its feed record must not show it meanwhile
    let delivered = false;
    try {
      await this.c.client.deleteFile(meta.id, meta.etag);
      delivered = true;
    } catch (err) {
      this.c.log.warn({ err, id: meta.id }, "a note made for a file removed since stays on the service");
    } finally {
      this.c.tree.withheld.deleteEnded(meta.id, delivered && "note");
    }
  }

  /**
   * Another note took `name` in `dir` (moved there): a file made under that name later is a new
   * note, not the one deleted there before (`rm a.md`, another note moved onto a.md and away
   * again: rsync's file there must not continue the deleted note, tags and all).
   */
  nameTaken(dir: DirNode, name: string): void {
    const names = this.tombstones.get(dir);
    if (!names?.delete(name)) return;
    if (names.size === 0) this.tombstones.delete(dir);
  }

  /** A note deleted here, claimable by name until its delete leaves (git checkout, tar -x: delete, then create). */
  leaveTombstone(dir: DirNode, name: string, claim: Claim): void {
    const names = this.tombstones.get(dir) ?? new Map<string, Claim>();
    names.set(name, { ...claim, shownAs: name });
    this.tombstones.set(dir, names);
  }

  /**
   * At start: a note kept local whose bytes are text again goes up, as its last release would have
   * sent it. close(2) returns at FLUSH, before the kernel sends RELEASE, so a kill -9 in between
   * leaves the text here with nothing on its way; nothing open holds it now.
   */
  async adoptKeptText(): Promise<void> {
    for (const local of [...this.c.tree.locals]) {
      if (!local.ghostOf && !local.keptNote) continue;
      if (local.link !== undefined || local.special !== undefined) continue;
      if (local.attachment?.remoteOnly) continue; // its bytes are the service's: not written here
      if (local.parent.localOnly === "always" || this.c.keptLocal(local.parent, local.name)) continue;
      if (isUtf8(this.c.local.read(local.blob))) await this.adoptLocal(local, local.ghostOf);
    }
  }

  /**
   * A local file under a note name goes up as that note (write-behind, in order with everything
   * else), continuing `claim` if given. Content that is not valid UTF-8 cannot be a note: the file
   * stays local with exactly its bytes (and keeps the claim, for when it is text again).
   */
  async adoptLocal(src: LocalNode, claim: Claim | undefined): Promise<void> {
    const dir = src.parent;
    if (dir.localOnly === "always") return; // what is inside stays local (localDirs.ts)
    const content = this.c.local.read(src.blob);
    if (!isUtf8(content)) {
      if (!claim && !src.ghostOf) src.keptNote = true; // never a note: an attachment of that name
      this.keepLocal(src, claim, "not valid UTF-8");
      return;
    }
    await this.creates.materialize(dir);
    // Up as an attachment while its bytes were not text: that goes first (it holds the name there).
    await this.attachments.unlinked(src);
    this.c.tree.detach(src);
    const node = this.creates.newNote(dir, src.name, claim, src);
    this.attributes.continued(src, node);
    // A continued note takes this name and folder too (sent along with its content: newNote marks
    // it), and the context and tags set on the file (rsync -X).
    node.remoteName = src.name;
    if (src.pendingMeta) this.c.notes.of(node).metaSet(src.pendingMeta);
    const base = claim ? { etag: claim.etag, hash: claim.hash ?? "" } : null;
    await this.delivery.journalSave(node, content, base);
    // The save is on disk: now the file leaves the manifest, at once (a manifest written a moment
    // later would, after a kill -9, still name the file and hide the note), and then its bytes.
    this.c.localNodes.save();
    this.c.localNodes.flush();
    this.c.local.remove(src.blob);
    if (!this.c.writeBehind) await this.delivery.drain();
  }

  /**
   * A note kept local (bytes that are not UTF-8) whose file moved to another note name or folder:
   * the note goes there on the service too, with its last text. Otherwise the name it left would
   * still be the note's on the service, and a note made there next would be a second of that name.
   * Best effort: if the service cannot take the move now, it goes with the note's next text.
   * `unsent`: where the service has the note is not known here (its move was dropped): sent anyway.
   */
  async follow(node: LocalNode, unsent = false): Promise<void> {
    const claim = node.ghostOf;
    const dir = node.parent;
    // Not into a folder the service does not have (yet): made here, kept local, or the mount's own.
    if (!claim?.meta || dir.localOnly || this.c.isPending(dir) || (!dir.id && dir !== this.c.tree.root))
      return;
    if (!unsent && claim.name === node.name && claim.meta.folderId === dir.id) return;
    try {
      const moved = withoutContent(
        await this.c.client.updateFile(claim.id, { name: node.name, folderId: dir.id }),
      );
      // A move alone is no edit: the note's next text builds on this version if nothing came between.
      if (revisionOf(moved.etag) === revisionOf(claim.etag) + 1)
        this.conflicts.replaced(claim.id, { etag: claim.etag, hash: claim.hash ?? "" }, moved);
      if (node.ghostOf?.id === claim.id) node.ghostOf = { ...node.ghostOf, name: node.name, meta: moved };
      this.c.localNodes.save();
    } catch (err) {
      this.c.log.warn(
        { err, path: this.c.tree.pathOf(node) },
        "the note kept local stays where it was on the service",
      );
    }
  }

  /** A file under a note name that cannot be a note stays local, exactly, and says why (once). */
  keepLocal(node: LocalNode, claim: Claim | undefined, why: string): void {
    if (claim) {
      node.ghostOf = { ...claim, shownAs: node.name, pendingMeta: undefined };
      if (claim.pendingMeta) node.pendingMeta = { ...claim.pendingMeta, ...node.pendingMeta };
      this.c.tree.withheld.ghostMade(claim.id);
    }
    this.c.localNodes.save();
    this.c.log.warn({ path: this.c.tree.pathOf(node), why }, "kept as a local-only file");
  }
}
