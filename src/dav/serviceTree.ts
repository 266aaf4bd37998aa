// Where a path is in a caller's own tree on the service: folders walked from the top by their
// subfolders, the last name looked up by index (a PUT into a folder of n notes never reads the n),
// whole listings only for PROPFIND depth 1; all read once per request and forgotten after a change.
import type { TxtFile, TxtFolder } from "../lib/apiTypes.ts";
import { type AccessScope, folderRoleInScope, loadScope, roleInScope } from "../server/domain/access.ts";
import type { Actor } from "../server/domain/actor.ts";
import { listAttachments, rootAttachments } from "../server/domain/attachments/reads.ts";
import { type TxtAttachment, toTxtAttachment } from "../server/domain/attachments/records.ts";
import { readDirectory } from "../server/domain/folders.ts";
import { toTxtFile, toTxtFolder } from "../server/domain/records.ts";
import type { FolderRow, Role } from "../store/repos/rows.ts";
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

/** A real folder walked into: whose it is and the caller's role there (what its notes inherit). */
interface Place {
  folderId: string | null;
  ownerId: string;
  role: Role;
}

/** A subfolder by name, with its row when it is a real folder (not one of Shared with me/). */
interface FolderAt {
  folder: TxtFolder;
  row?: FolderRow | undefined;
}

export class ServiceTree {
  private readonly actor: Actor;
  private readonly listings = new Map<string | null, Children>();
  private readonly subfolders = new Map<string | null, Map<string, FolderAt>>();
  private readonly found = new Map<string, Found | undefined>();
  private scope: AccessScope | undefined;

  constructor(actor: Actor) {
    this.actor = actor;
  }

  /** What was read is not what is there after a change. */
  forget(): void {
    this.listings.clear();
    this.subfolders.clear();
    this.found.clear();
    this.scope = undefined;
  }

  private async scopeOf(tx: Tx): Promise<AccessScope> {
    this.scope ??= await loadScope(tx, this.actor);
    return this.scope;
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
    const key = names.join("/");
    if (this.found.has(key)) return this.found.get(key);
    const found = await this.lookUp(tx, names);
    this.found.set(key, found);
    return found;
  }

  private async lookUp(tx: Tx, names: string[]): Promise<Found | undefined> {
    let place: Place | undefined = { folderId: null, ownerId: this.actor.userId, role: "owner" };
    let folderId: string | null = null;
    let found: Found = { kind: "root" };
    for (const [i, name] of names.entries()) {
      const sub: FolderAt | undefined = (await this.foldersIn(tx, folderId, place)).get(name);
      if (sub) {
        found = { kind: "folder", folder: sub.folder };
        folderId = sub.folder.id;
        place = sub.row && { folderId, ownerId: sub.row.owner_id, role: sub.folder.role as Role };
        continue;
      }
      if (i < names.length - 1) return undefined;
      if (!place) {
        // Shared with me/ and its owners' folders: small listings made of the shares themselves.
        const { files } = await this.children(tx, folderId);
        const file = files.get(name);
        return file && { kind: "file", file };
      }
      return this.fileOrAttachment(tx, place, name);
    }
    return found;
  }

  /** The subfolders of a folder by name (a folder's subfolders are few; its notes may be many). */
  private async foldersIn(
    tx: Tx,
    folderId: string | null,
    place: Place | undefined,
  ): Promise<Map<string, FolderAt>> {
    const kept = this.subfolders.get(folderId);
    if (kept) return kept;
    const out = new Map<string, FolderAt>();
    if (!place) {
      for (const [name, folder] of (await this.children(tx, folderId)).folders) {
        const row = isVirtual(folder.id) ? undefined : await tx.folders.byId(folder.id);
        out.set(name, { folder, row });
      }
    } else if (folderId === null) {
      for (const row of await tx.folders.rootFoldersOf(this.actor.userId))
        out.set(row.name, { folder: toTxtFolder(row, "owner", 0), row });
      if (!out.has(SHARED_NAME) && (await this.sharesAny(tx)))
        out.set(SHARED_NAME, { folder: virtualFolder(SHARED, SHARED_NAME) });
    } else {
      const scope = await this.scopeOf(tx);
      for (const row of await tx.folders.children(folderId))
        out.set(row.name, { folder: toTxtFolder(row, folderRoleInScope(scope, row) ?? place.role, 0), row });
    }
    this.subfolders.set(folderId, out);
    return out;
  }

  /** The note or attachment of that name in a real folder (or the root), through the name indexes. */
  private async fileOrAttachment(tx: Tx, place: Place, name: string): Promise<Found | undefined> {
    const [row] = await tx.files.named(place.ownerId, place.folderId, [name]);
    if (row) {
      const role =
        place.ownerId === this.actor.userId
          ? "owner"
          : (roleInScope(await this.scopeOf(tx), row) ?? place.role);
      return { kind: "file", file: toTxtFile(row, role) };
    }
    const attachment = await tx.attachments.byPlace(place.ownerId, place.folderId, name);
    if (!attachment) return undefined;
    const role =
      place.ownerId === this.actor.userId
        ? "owner"
        : (roleInScope(await this.scopeOf(tx), attachment) ?? place.role);
    return { kind: "attachment", attachment: toTxtAttachment(attachment, role) };
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
