// Where a link's target is looked for: the account's notes by name or alias (the note_names
// index), and, for a link whose name has another extension (![[image.png]]), the account's
// attachments — files that are not notes — through an AttachmentLookup, by the same rules.
// This service stores no attachments yet: NO_ATTACHMENTS finds none, so such links are unresolved
// until an attachment store provides a lookup (and calls relinkNames when its files change).
import type { Tx } from "../../../store/store.ts";
import { linkKeys, type NoteAt, resolveLink } from "./resolve.ts";

/** The account's attachments, found by name like notes. */
export interface AttachmentLookup {
  /** Up to `limit` attachments of the account whose name, lower-cased in NFC, is `nameKey`. */
  named(
    tx: Tx,
    ownerId: string,
    nameKey: string,
    limit: number,
  ): Promise<{ id: string; name: string; folderId: string | null }[]>;
}

export const NO_ATTACHMENTS: AttachmentLookup = { named: async () => [] };

/** What a link names: a note, an attachment, or (both null) nothing. */
export interface LinkTarget {
  targetId: string | null;
  attachmentId: string | null;
}

export const UNRESOLVED: LinkTarget = { targetId: null, attachmentId: null };

/** Files sharing a name or alias with a link, at most this many of each: bounds one resolution. */
const CANDIDATES = 200;

const NOTE_NAME = /\.(md|txt)$/i;
const OTHER_EXTENSION = /\.[^./\s]+$/;

/** Resolves links of one account, remembering folder paths and candidates for one unit of work. */
export class LinkResolver {
  private readonly tx: Tx;
  private readonly ownerId: string;
  private readonly attachments: AttachmentLookup;
  private readonly paths = new Map<string, string[]>();
  private readonly found = new Map<string, NoteAt[]>();

  constructor(tx: Tx, ownerId: string, attachments: AttachmentLookup = NO_ATTACHMENTS) {
    this.tx = tx;
    this.ownerId = ownerId;
    this.attachments = attachments;
  }

  /** Folder names from the root down to `folderId` (none for the root). */
  async folderPath(folderId: string | null): Promise<string[]> {
    if (!folderId) return [];
    let path = this.paths.get(folderId);
    if (!path) {
      path = (await this.tx.folders.ancestry(folderId)).map((f) => f.name).reverse();
      this.paths.set(folderId, path);
    }
    return path;
  }

  private async notes(name: string, alias: string): Promise<NoteAt[]> {
    const k = `note\u0000${name}\u0000${alias}`;
    let notes = this.found.get(k);
    if (!notes) {
      const ids = await this.tx.links.named(this.ownerId, name, alias, CANDIDATES);
      notes = [];
      for (const row of await this.tx.files.metaByIds(ids)) {
        const aliases = (await this.tx.links.namesOf(row.id)).filter((n) => n.alias).map((n) => n.name_key);
        notes.push({ id: row.id, name: row.name, folders: await this.folderPath(row.folder_id), aliases });
      }
      this.found.set(k, notes);
    }
    return notes;
  }

  private async attachmentsNamed(name: string): Promise<NoteAt[]> {
    const k = `attachment\u0000${name}`;
    let files = this.found.get(k);
    if (!files) {
      files = [];
      for (const a of await this.attachments.named(this.tx, this.ownerId, name, CANDIDATES))
        files.push({ id: a.id, name: a.name, folders: await this.folderPath(a.folderId), aliases: [] });
      this.found.set(k, files);
    }
    return files;
  }

  /** What `path` names from a note in `fromFolderId`: a note first, else an attachment. */
  async resolve(path: string, fromFolderId: string | null): Promise<LinkTarget> {
    const keys = linkKeys(path);
    const from = await this.folderPath(fromFolderId);
    const note = resolveLink(path, from, await this.notes(keys.name, keys.alias));
    if (note) return { targetId: note, attachmentId: null };
    if (NOTE_NAME.test(keys.name) || !OTHER_EXTENSION.test(keys.name)) return UNRESOLVED;
    const attachment = resolveLink(path, from, await this.attachmentsNamed(keys.name));
    return attachment ? { targetId: null, attachmentId: attachment } : UNRESOLVED;
  }
}
