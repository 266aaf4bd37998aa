// Where a link's target is looked for: the account's notes by name (the note_names index), and,
// for a link to a file that is not a note (![[image.png]]), the account's other files by path.
// Attachments are not stored yet, so NO_ATTACHMENTS finds none and such links stay unresolved;
// the attachment store plugs in here.
import type { Tx } from "../../../store/store.ts";
import { linkKeys, type NoteAt, resolveLink } from "./resolve.ts";

/** Finds a non-note file of the account by its path from the root (folder names, then its name). */
export interface AttachmentLookup {
  byPath(ownerId: string, path: readonly string[]): Promise<string | null>;
}

export const NO_ATTACHMENTS: AttachmentLookup = { byPath: async () => null };

/** Notes sharing a name or alias with a link, at most this many of each: bounds one resolution. */
const CANDIDATES = 200;

/** Resolves links of one account, remembering folder paths and candidates for one unit of work. */
export class LinkResolver {
  private readonly tx: Tx;
  private readonly ownerId: string;
  private readonly paths = new Map<string, string[]>();
  private readonly found = new Map<string, NoteAt[]>();

  constructor(tx: Tx, ownerId: string) {
    this.tx = tx;
    this.ownerId = ownerId;
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

  private async candidates(name: string, alias: string): Promise<NoteAt[]> {
    const k = `${name}\u0000${alias}`;
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

  /** The note `path` names from a note in `fromFolderId`, or null. */
  async resolve(path: string, fromFolderId: string | null): Promise<string | null> {
    const keys = linkKeys(path);
    return resolveLink(
      path,
      await this.folderPath(fromFolderId),
      await this.candidates(keys.name, keys.alias),
    );
  }
}
