// What a restart puts back of the attachments: the files kept in the manifest bound again to the
// listed ones (or kept as made here), the journal's deletes hiding theirs, and the saves a kill -9
// cut off made again.
import { stat } from "node:fs/promises";
import { conflictName } from "../conflicts.ts";
import type { VfsCore } from "../core.ts";
import type { JournalEntry } from "../delivery/journal.ts";
import type { ManifestEntry } from "../local/localFiles.ts";
import { parentAndName } from "../names.ts";
import type { LocalNode } from "../tree.ts";
import type { AttachmentBytes } from "./attachmentBytes.ts";
import type { AttachmentEviction } from "./attachmentEviction.ts";
import { type AttachmentPlaces, attachmentKey } from "./attachmentPlaces.ts";
import type { AttachmentSaves } from "./attachmentSaves.ts";

export type AttachmentRestartCore = Pick<
  VfsCore,
  "clock" | "conflictCopies" | "journal" | "local" | "log" | "tree"
>;

export class AttachmentRestart {
  private readonly c: AttachmentRestartCore;
  private readonly places: AttachmentPlaces;
  private readonly bytes: AttachmentBytes;
  private readonly saves: AttachmentSaves;
  private readonly eviction: AttachmentEviction;

  constructor(
    c: AttachmentRestartCore,
    places: AttachmentPlaces,
    bytes: AttachmentBytes,
    saves: AttachmentSaves,
    eviction: AttachmentEviction,
  ) {
    this.c = c;
    this.places = places;
    this.bytes = bytes;
    this.saves = saves;
    this.eviction = eviction;
  }

  /**
   * The start put back what the journal and the manifest keep: files that go up and have no save
   * on its way (made before the service kept attachments, or a kill -9 between a file's binding
   * and its entry) are saved now, and the journal's entries may go.
   */
  async started(): Promise<void> {
    // Bytes kept from before: counted against the cache's size, in no particular order.
    for (const node of this.places.byId.values())
      if (!node.attachment?.remoteOnly) this.eviction.used(node, node.size);
    for (const node of [...this.c.tree.locals]) {
      const b = node.attachment;
      const waits = b && this.c.journal.get(attachmentKey(b));
      if (!waits && !b?.id && this.saves.eligible(node)) await this.saves.saved(node);
    }
  }

  /**
   * A kept file made here (not bound, or its create not answered) whose name a listed attachment
   * took meanwhile (made elsewhere while this mount was down): it comes back beside it, under a
   * conflict copy's name, and goes up as such.
   */
  freeName(entry: ManifestEntry): ManifestEntry {
    if (entry.dir || entry.attachment?.id) return entry;
    const taken = this.c.tree.lookup(entry.path);
    if (taken?.kind !== "local" || !taken.attachment?.id) return entry;
    const { parent, name } = parentAndName(entry.path);
    const path = `${parent === "/" ? "" : parent}/${conflictName(name, this.c.clock)}`;
    this.c.log.warn({ path: entry.path, keptAs: path }, "made here and elsewhere while unmounted: both kept");
    this.c.conflictCopies.push(path);
    return { ...entry, path };
  }

  /**
   * A local file kept from before a restart that is an attachment: bound to the listed one (its
   * bytes kept when they are that version, or a save of ours waits; or its create landed, unanswered),
   * or, made here and not created yet, put back as it was. False: not an attachment (LocalNodes.restore puts it back).
   */
  restored(entry: ManifestEntry): boolean {
    const b = entry.attachment;
    if (!b) return false;
    const pending = this.c.journal.get(attachmentKey(b));
    const listed = b.id ? this.places.byId.get(b.id) : this.landedCreate(entry.path, pending?.blob);
    const waits = pending !== undefined && b.id !== null;
    if (listed) {
      const lb = listed.attachment!;
      if (waits || lb.hash === b.hash || !b.id) {
        listed.blob = entry.blob;
        listed.attachment = {
          ...lb,
          ...(b.id ? { etag: b.etag, hash: b.hash, revision: b.revision } : {}), // else: what it made
          remoteOnly: undefined,
        };
        listed.mode = entry.mode;
        listed.mtimeMs = entry.mtimeMs;
        listed.atimeMs = entry.atimeMs;
        listed.uid = entry.uid;
        listed.gid = entry.gid;
        if (waits) this.placeAt(listed, entry.path); // renamed here before the restart
        void this.sizeFromBlob(listed);
      } else this.c.local.remove(entry.blob); // changed elsewhere meanwhile: the listed version shows
      return true;
    }
    if (b.id && !waits) {
      this.c.local.remove(entry.blob); // removed elsewhere meanwhile, nothing of ours waits
      return true;
    }
    return false; // made here (or removed elsewhere with a save waiting): back as a local file, bound
  }

  /**
   * A file made here whose create's answer a kill -9 cut off: the listed attachment at its place
   * holding exactly the bytes that create sent is what it made (named apart, ours would look like
   * a conflict copy of itself). Its entry then finds no file and goes without a request.
   */
  private landedCreate(path: string, sent: string | undefined): LocalNode | undefined {
    const taken = sent ? this.c.tree.lookup(path) : undefined;
    return taken?.kind === "local" && taken.attachment?.id && taken.attachment.hash === sent
      ? taken
      : undefined;
  }

  /** Shows `node` at `path`, where a rename of ours put it (its move is in the journal). */
  private placeAt(node: LocalNode, path: string): void {
    const { parent, name } = parentAndName(path);
    const dir = this.c.tree.lookup(parent);
    if (dir?.kind !== "dir" || (dir === node.parent && name === node.name) || dir.children.has(name)) return;
    this.c.tree.move(node, dir, name);
  }

  /** After LocalNodes.restore put a bound file back: indexed as its binding says. */
  restoredNode(node: LocalNode): void {
    const b = node.attachment;
    if (!b) return;
    if (b.id) this.places.byId.set(b.id, node);
    else this.places.pendingCreates.set(b.createKey, node);
  }

  private async sizeFromBlob(node: LocalNode): Promise<void> {
    try {
      node.size = (await stat(node.blob)).size;
      this.c.tree.onChange(node);
    } catch {
      // its blob is gone: read from the service at the next open
      node.attachment!.remoteOnly = true;
    }
  }

  /** After a restart: deletes of ours still on their way hide their attachments. */
  restoreJournal(entries: JournalEntry[]): void {
    for (const e of entries) {
      if (!e.attachment || !e.delete || !e.fileId) continue;
      this.places.deleting.add(e.fileId);
      const node = this.places.byId.get(e.fileId);
      if (node) this.places.forget(node);
    }
    void this.bytes.sweep(new Set(entries.flatMap((e) => (e.blob ? [e.blob] : []))));
  }
}
