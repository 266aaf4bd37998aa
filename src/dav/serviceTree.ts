// Where a path is in a caller's own tree on the service: folders walked from the top, each folder's
// notes, attachments and subfolders read once per request (a request asks for them many times)
// and forgotten after a change.
import type { TxtFile, TxtFolder } from "../lib/apiTypes.ts";
import { loadScope } from "../server/domain/access.ts";
import type { Actor } from "../server/domain/actor.ts";
import { listAttachments, rootAttachments } from "../server/domain/attachments/reads.ts";
import type { TxtAttachment } from "../server/domain/attachments/records.ts";
import { readDirectory } from "../server/domain/folders.ts";
import { toTxtFile, toTxtFolder } from "../server/domain/records.ts";
import type { Tx } from "../store/store.ts";
import type { DavEntry } from "./backend.ts";
import { DavError } from "./errors.ts";

/** The ids of the folders of `Shared with me/` (no folder on the service has such an id). */
const SHARED = "shared:";
export const SHARED_NAME = "Shared with me";
export const isVirtual = (folderId: string) => folderId.startsWith(SHARED);

function virtualFolder(id: string, name: string): TxtFolder {
  const epoch = new Date(0).toISOString();
  return { id, name, createdAt: epoch, updatedAt: epoch } as TxtFolder;
}

export type Found =
  | { kind: "root" }
  | { kind: "folder"; folder: TxtFolder }
  | { kind: "file"; file: TxtFile }
  | { kind: "attachment"; attachment: TxtAttachment };

export interface Children {
  folders: Map<string, TxtFolder>;
  files: Map<string, TxtFile>;
  attachments: Map<string, TxtAttachment>;
}

export class ServiceTree {
  private readonly actor: Actor;
  private readonly listings = new Map<string | null, Children>();

  constructor(actor: Actor) {
    this.actor = actor;
  }

  /** What was read is not what is there after a change. */
  forget(): void {
    this.listings.clear();
  }

  /** A folder's (or the root's) content, read once per request: a request asks for it many times. */
  async children(tx: Tx, folderId: string | null): Promise<Children> {
    const kept = this.listings.get(folderId);
    if (kept) return kept;
    if (folderId?.startsWith(SHARED)) {
      const listing = await this.shared(tx, folderId.slice(SHARED.length));
      this.listings.set(folderId, listing);
      return listing;
    }
    const dir = await readDirectory(tx, this.actor, folderId ?? "root");
    let attachments: TxtAttachment[];
    if (folderId === null) attachments = await rootAttachments(tx, this.actor);
    else {
      attachments = [];
      for (let cursor: string | undefined; ; ) {
        const page = await listAttachments(tx, this.actor, { folderId, cursor, limit: 1000 });
        attachments.push(...page.attachments);
        if (!page.hasMore || !page.nextCursor) break;
        cursor = page.nextCursor;
      }
    }
    const byName = <T extends { name: string }>(items: T[]) => new Map(items.map((x) => [x.name, x]));
    const listing: Children = {
      folders: byName(dir.folders as TxtFolder[]),
      files: byName(dir.files as TxtFile[]),
      attachments: byName(attachments),
    };
    // What others share with the caller, as the mount shows it: `Shared with me/OWNER/`.
    if (folderId === null && !listing.folders.has(SHARED_NAME) && (await this.sharesAny(tx)))
      listing.folders.set(SHARED_NAME, virtualFolder(SHARED, SHARED_NAME));
    this.listings.set(folderId, listing);
    return listing;
  }

  private async sharesAny(tx: Tx): Promise<boolean> {
    const scope = await loadScope(tx, this.actor);
    return scope.folderRoles.size > 0 || scope.fileRoles.size > 0;
  }

  /**
   * `Shared with me/` (ownerId ""): a folder per owner, named by their email; `Shared with
   * me/OWNER/`: the folders and notes that owner shares with the caller, each at the top of its share.
   */
  private async shared(tx: Tx, ownerId: string): Promise<Children> {
    const scope = await loadScope(tx, this.actor);
    const folders = new Map<string, TxtFolder>();
    const files = new Map<string, TxtFile>();
    const owners = new Map<string, string>();
    for (const [id, role] of scope.folderRoles) {
      const row = await tx.folders.byId(id);
      if (!row || (row.parent_id && scope.folderRoles.has(row.parent_id))) continue; // inside a share
      owners.set(row.owner_id, "");
      if (row.owner_id === ownerId) folders.set(row.name, toTxtFolder(row, role, 0));
    }
    for (const [id, role] of scope.fileRoles) {
      const row = await tx.files.metaById(id);
      if (!row || (row.folder_id && scope.folderRoles.has(row.folder_id))) continue;
      owners.set(row.owner_id, "");
      if (row.owner_id === ownerId) files.set(row.name, toTxtFile(row, role));
    }
    if (ownerId === "") {
      for (const id of owners.keys()) {
        const email = (await tx.users.byId(id))?.email ?? id;
        folders.set(email, virtualFolder(`${SHARED}${id}`, email));
      }
    }
    return { folders, files, attachments: new Map() };
  }

  /** What is at `path` (walking from the caller's root), or undefined. */
  async find(tx: Tx, path: string): Promise<Found | undefined> {
    const names = path.split("/").filter(Boolean);
    let folderId: string | null = null;
    let found: Found = { kind: "root" };
    for (const [i, name] of names.entries()) {
      const { folders, files, attachments } = await this.children(tx, folderId);
      const folder = folders.get(name);
      if (folder) {
        found = { kind: "folder", folder };
        folderId = folder.id;
        continue;
      }
      if (i < names.length - 1) return undefined;
      const file = files.get(name);
      if (file) return { kind: "file", file };
      const attachment = attachments.get(name);
      return attachment ? { kind: "attachment", attachment } : undefined;
    }
    return found;
  }

  /** The folder (null: the root) at `path`; 409 when there is none, 403 to make something in `Shared with me/`. */
  async folderIdOf(tx: Tx, path: string, forChange = false): Promise<string | null> {
    const found = await this.find(tx, path);
    if (found?.kind === "root") return null;
    if (found?.kind !== "folder") throw new DavError(409, "the parent collection does not exist");
    if (forChange && isVirtual(found.folder.id))
      throw new DavError(
        403,
        "Shared with me/ and its owners' folders are the shares themselves: nothing is made there",
      );
    return found.folder.id;
  }
}

/** The attributes WebDAV shows of what is at a path. */
export function entryOf(found: Found): DavEntry {
  const epoch = new Date(0);
  switch (found.kind) {
    case "root":
      return { collection: true, size: 0, mtime: epoch, ctime: epoch, etag: '"root"' };
    case "folder": {
      const f = found.folder;
      return {
        collection: true,
        size: 0,
        mtime: new Date(f.updatedAt),
        ctime: new Date(f.createdAt),
        etag: `"${f.id}"`,
      };
    }
    case "file": {
      const f = found.file;
      return {
        collection: false,
        size: f.size,
        mtime: new Date(f.updatedAt),
        ctime: new Date(f.createdAt),
        etag: f.etag,
      };
    }
    case "attachment": {
      const a = found.attachment;
      return {
        collection: false,
        size: a.size,
        mtime: new Date(a.updatedAt),
        ctime: new Date(a.createdAt),
        etag: a.etag,
      };
    }
  }
}
