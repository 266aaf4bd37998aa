// The back end of `/dav/` on `txtfs serve`: each call is a domain call in one unit of work, as the
// caller (their key, its scopes, their roles). Notes for .md/.txt names, attachments for every
// other file; only the caller's own tree is reachable (another user's notes have no path here).

import { atLeast } from "../server/domain/access.ts";
import type { Actor } from "../server/domain/actor.ts";
import { attachmentBytes, getAttachment } from "../server/domain/attachments/reads.ts";
import type { AttachmentLimits } from "../server/domain/attachments/rules.ts";
import {
  createAttachment,
  deleteAttachment,
  replaceAttachment,
  updateAttachment,
} from "../server/domain/attachments/writes.ts";
import { ServiceError } from "../server/domain/errors.ts";
import { reviveFile, snapshotFile } from "../server/domain/fileRevival.ts";
import { createFile, deleteFile, getFile, updateFile } from "../server/domain/files.ts";
import { createFolder, deleteFolder, updateFolder } from "../server/domain/folders.ts";
import type { Store, Tx } from "../store/store.ts";
import type { DavBackend, DavEntry } from "./backend.ts";
import { DavError } from "./errors.ts";
import { nameOf, parentOf } from "./paths.ts";
import type { ServiceTombstones } from "./serviceTombstones.ts";
import { entryOf, isVirtual, ServiceTree } from "./serviceTree.ts";
import { esc, TXTFS_NS } from "./xml.ts";

const NOTE_NAME = /\.(md|txt)$/i;
const prop = (local: string) => `{${TXTFS_NS}}${local}`;
const FILE_PROPS = ["context", "tags", "id"].map(prop);
const WRITABLE = ["context", "tags"].map(prop);

/** A domain refusal as the status WebDAV clients expect for it. */
function davErrorOf(err: unknown): unknown {
  if (!(err instanceof ServiceError)) return err;
  if (err.status === 401) return new DavError(403, err.message);
  return new DavError(err.status, err.message);
}

export class ServiceBackend implements DavBackend {
  private readonly store: Store;
  private readonly actor: Actor;
  private readonly limits: AttachmentLimits;
  private readonly tree: ServiceTree;
  /** The notes callers deleted a moment ago (absent: a DELETE then PUT makes a new note). */
  private readonly tombstones: ServiceTombstones | undefined;

  constructor(store: Store, actor: Actor, limits: AttachmentLimits, tombstones?: ServiceTombstones) {
    this.store = store;
    this.actor = actor;
    this.limits = limits;
    this.tree = new ServiceTree(actor);
    this.tombstones = tombstones;
  }

  private async run<T>(write: boolean, fn: (tx: Tx) => Promise<T>): Promise<T> {
    if (write && !this.actor.scopes.has("files:write"))
      throw new DavError(403, "this key cannot change files (it has no files:write scope)");
    if (!this.actor.scopes.has("files:read")) throw new DavError(403, "this key cannot read files");
    try {
      return await this.store.transaction(fn);
    } catch (err) {
      throw davErrorOf(err);
    } finally {
      if (write) this.tree.forget(); // what was read before a change is not what is there now
    }
  }

  async stat(path: string): Promise<DavEntry | undefined> {
    const found = await this.run(false, (tx) => this.tree.find(tx, path));
    return found && entryOf(found);
  }

  /** A collection's entries with their attributes, in one unit of work (PROPFIND depth 1). */
  entries(path: string): Promise<[string, DavEntry][]> {
    return this.run(false, async (tx) => {
      const { folders, files, attachments } = await this.tree.children(
        tx,
        await this.tree.folderIdOf(tx, path),
      );
      return [
        ...[...folders.values()].map((folder): [string, DavEntry] => [
          folder.name,
          entryOf({ kind: "folder", folder }),
        ]),
        ...[...files.values()].map((file): [string, DavEntry] => [
          file.name,
          entryOf({ kind: "file", file }),
        ]),
        ...[...attachments.values()].map((attachment): [string, DavEntry] => [
          attachment.name,
          entryOf({ kind: "attachment", attachment }),
        ]),
      ];
    });
  }

  list(path: string): Promise<string[]> {
    return this.run(false, async (tx) => {
      const id = await this.tree.folderIdOf(tx, path);
      const { folders, files, attachments } = await this.tree.children(tx, id);
      return [...folders.keys(), ...files.keys(), ...attachments.keys()];
    });
  }

  read(path: string): Promise<Buffer> {
    return this.run(false, async (tx) => {
      const found = await this.tree.find(tx, path);
      if (found?.kind === "file")
        return Buffer.from((await getFile(tx, this.actor, found.file.id)).file.content, "utf8");
      if (found?.kind === "attachment") {
        const { row } = await getAttachment(tx, this.actor, found.attachment.id);
        return attachmentBytes(tx, row);
      }
      throw new DavError(found ? 405 : 404);
    });
  }

  write(path: string, data: Buffer): Promise<void> {
    return this.run(true, async (tx) => {
      const found = await this.tree.find(tx, path);
      if (found?.kind === "file") {
        await updateFile(tx, this.actor, found.file.id, { content: noteText(data) });
        return;
      }
      if (found?.kind === "attachment") {
        await replaceAttachment(tx, this.actor, this.limits, found.attachment.id, data);
        return;
      }
      const folderId = await this.tree.folderIdOf(tx, parentOf(path), true);
      const name = nameOf(path);
      if (!NOTE_NAME.test(name)) {
        await createAttachment(tx, this.actor, this.limits, { name, folderId, bytes: data });
        return;
      }
      const content = noteText(data);
      // The note this caller deleted here a moment ago, continued (a save by DELETE then PUT).
      const ownerId = folderId ? (await tx.folders.byId(folderId))?.owner_id : this.actor.userId;
      const deleted =
        ownerId && (await this.tombstones?.take(tx, this.actor.principal, ownerId, folderId, name));
      if (deleted && (await reviveFile(tx, this.actor, deleted, content))) return;
      await createFile(tx, this.actor, { name, folderId, content });
    });
  }

  mkdir(path: string): Promise<void> {
    return this.run(true, async (tx) => {
      const parentFolderId = await this.tree.folderIdOf(tx, parentOf(path), true);
      await createFolder(tx, this.actor, { name: nameOf(path), parentFolderId });
    });
  }

  remove(path: string): Promise<void> {
    return this.run(true, async (tx) => {
      const found = await this.tree.find(tx, path);
      if (!found) throw new DavError(404);
      if (found.kind === "root") throw new DavError(403, "the root cannot be deleted");
      if (found.kind === "folder" && isVirtual(found.folder.id))
        throw new DavError(403, "a folder of Shared with me/ is not yours to delete");
      if (found.kind === "folder") await deleteFolder(tx, this.actor, found.folder.id);
      else if (found.kind === "attachment") await deleteAttachment(tx, this.actor, found.attachment.id);
      else {
        const kept = this.tombstones && (await snapshotFile(tx, found.file.id));
        await deleteFile(tx, this.actor, found.file.id);
        // In the deleting unit of work: a refused or rolled-back delete leaves nothing to revive.
        if (kept) await this.tombstones!.remember(tx, this.actor.userId, this.actor.principal, kept);
      }
    });
  }

  checkRemovable(path: string): Promise<void> {
    return this.run(true, async (tx) => {
      const found = await this.tree.find(tx, path);
      if (!found) throw new DavError(404);
      if (found.kind === "root") throw new DavError(403, "the root cannot be deleted");
      if (found.kind === "folder" && isVirtual(found.folder.id))
        throw new DavError(403, "a folder of Shared with me/ is not yours to delete");
      // Deleting is the owner's, for folders, notes and attachments alike (domain/access.ts).
      const role =
        found.kind === "folder"
          ? found.folder.role
          : found.kind === "file"
            ? found.file.role
            : found.attachment.role;
      if (!atLeast(role, "owner"))
        throw new DavError(403, `deleting this is its owner's; your role is ${role}`);
    });
  }

  rename(from: string, to: string): Promise<void> {
    return this.run(true, async (tx) => {
      const found = await this.tree.find(tx, from);
      if (!found || found.kind === "root") throw new DavError(404);
      if (found.kind === "folder" && isVirtual(found.folder.id))
        throw new DavError(403, "a folder of Shared with me/ cannot be moved");
      const folderId = await this.tree.folderIdOf(tx, parentOf(to), true);
      const name = nameOf(to);
      const target = await this.tree.find(tx, to);
      // A note moved over a note (a client's save: PUT to a temp name, MOVE over) is the target's
      // new content: the target keeps its id, history and links, and the temp name goes.
      if (found.kind === "file" && target?.kind === "file") {
        const { file } = await getFile(tx, this.actor, found.file.id);
        await updateFile(tx, this.actor, target.file.id, { content: file.content });
        await deleteFile(tx, this.actor, found.file.id);
        return;
      }
      if (found.kind === "attachment" && target?.kind === "attachment") {
        const { row } = await getAttachment(tx, this.actor, found.attachment.id);
        await replaceAttachment(
          tx,
          this.actor,
          this.limits,
          target.attachment.id,
          await attachmentBytes(tx, row),
        );
        await deleteAttachment(tx, this.actor, found.attachment.id);
        return;
      }
      // A file of the other kind at `to` (Overwrite allowed) goes; the moved item keeps its id.
      if (target?.kind === "file") await deleteFile(tx, this.actor, target.file.id);
      if (target?.kind === "attachment") await deleteAttachment(tx, this.actor, target.attachment.id);
      if (found.kind === "folder")
        await updateFolder(tx, this.actor, found.folder.id, { name, parentFolderId: folderId });
      else if (found.kind === "file") {
        if (!NOTE_NAME.test(name)) throw new DavError(403, "a note keeps a .md or .txt name");
        await updateFile(tx, this.actor, found.file.id, { name, folderId });
      } else {
        if (NOTE_NAME.test(name)) throw new DavError(403, "an attachment cannot take a note's name");
        await updateAttachment(tx, this.actor, found.attachment.id, { name, folderId });
      }
    });
  }

  /** The account's attachment quota (what the service bounds; notes have a count, not a byte quota). */
  quota() {
    return this.run(false, async (tx) => {
      const used = await tx.attachments.bytesOwned(this.actor.userId);
      return { available: Math.max(0, this.limits.quotaBytes - used), used };
    });
  }

  ownPropertyNames(collection: boolean) {
    return collection ? { all: [], writable: [] } : { all: FILE_PROPS, writable: WRITABLE };
  }

  async ownProperties(path: string): Promise<Map<string, string>> {
    const found = await this.run(false, (tx) => this.tree.find(tx, path));
    const out = new Map<string, string>();
    if (found?.kind !== "file") return out;
    out.set(prop("context"), esc(found.file.context));
    out.set(prop("tags"), esc(found.file.tags.join(",")));
    out.set(prop("id"), esc(found.file.id));
    return out;
  }

  setOwnProperty(path: string, name: string, text: string | undefined): Promise<void> {
    return this.run(true, async (tx) => {
      const found = await this.tree.find(tx, path);
      if (found?.kind !== "file") throw new DavError(403, "only a note has context and tags here");
      const value = text?.trim() ?? "";
      const patch =
        name === prop("tags")
          ? {
              tags: value
                ? value
                    .split(",")
                    .map((t) => t.trim())
                    .filter(Boolean)
                : [],
            }
          : { context: value };
      await updateFile(tx, this.actor, found.file.id, patch);
    });
  }
}

/** A note's bytes must be UTF-8 text (a note is text): 415 otherwise. */
function noteText(data: Buffer): string {
  const text = data.toString("utf8");
  if (!Buffer.from(text, "utf8").equals(data))
    throw new DavError(415, "a .md or .txt note must be UTF-8 text");
  return text;
}
