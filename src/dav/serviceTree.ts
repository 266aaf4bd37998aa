// Where a path is in a caller's own tree on the service: folders walked from the top, each folder's
// notes, attachments and subfolders read once per request (a request asks for them many times)
// and forgotten after a change.
import type { TxtFile, TxtFolder } from "../lib/apiTypes.ts";
import type { Actor } from "../server/domain/actor.ts";
import { listAttachments, rootAttachments } from "../server/domain/attachments/reads.ts";
import type { TxtAttachment } from "../server/domain/attachments/records.ts";
import { readDirectory } from "../server/domain/folders.ts";
import type { Tx } from "../store/store.ts";
import type { DavEntry } from "./backend.ts";
import { DavError } from "./errors.ts";

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
    this.listings.set(folderId, listing);
    return listing;
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

  async folderIdOf(tx: Tx, path: string): Promise<string | null> {
    const found = await this.find(tx, path);
    if (found?.kind === "root") return null;
    if (found?.kind === "folder") return found.folder.id;
    throw new DavError(409, "the parent collection does not exist");
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
