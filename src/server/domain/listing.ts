// Listings: metadata only, never bodies, including what is shared with the caller.

import type { FileJsonRow, FileListFilter } from "../../store/repos/files.ts";
import type { FileMetaRow, Role } from "../../store/repos/rows.ts";
import type { Tx } from "../../store/store.ts";
import { loadScope, requireFolder, roleInScope, visibleTo } from "./access.ts";
import type { Actor } from "./actor.ts";
import { rootAttachments } from "./attachments/reads.ts";
import { ServiceError } from "./errors.ts";
import { listFolders } from "./folders.ts";
import { activeIdentity } from "./identities.ts";
import { LIMITS } from "./limits.ts";
import { listedFileJson, type TxtFile, toTxtFile } from "./records.ts";

export interface FilePage {
  files: TxtFile[];
  nextCursor: string | null;
  hasMore: boolean;
}

/** Listing cursors are the last id seen, base64url-wrapped so clients treat them as opaque. */
export function decodeListCursor(cursor: string | undefined): string | undefined {
  if (!cursor) return undefined;
  const id = Buffer.from(cursor, "base64url").toString("utf8");
  if (!/^f_[0-9A-Z]{26}$/.test(id)) {
    throw new ServiceError(
      400,
      "invalid_cursor",
      "cursor: not a cursor returned by this listing.",
      "Pass the `nextCursor` of the previous page unchanged, or omit cursor to start over.",
    );
  }
  return id;
}

export async function listFilesPage(
  tx: Tx,
  actor: Actor,
  opts: { limit?: number; cursor?: string; folderId?: string | null },
): Promise<FilePage> {
  const limit = opts.limit ?? LIMITS.pageDefault;
  // A folder the caller cannot see is a 404, as everywhere (not an empty page).
  if (opts.folderId) await requireFolder(tx, actor, opts.folderId);
  const scope = await loadScope(tx, actor);
  const rows = (await tx.files.list({
    ...visibleTo(scope),
    folderId: opts.folderId,
    afterId: decodeListCursor(opts.cursor),
    limit: limit + 1,
  })) as FileMetaRow[];
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  return {
    files: page.map((r) => toTxtFile(r, roleInScope(scope, r) ?? "reader")),
    nextCursor: hasMore ? Buffer.from(page.at(-1)!.id).toString("base64url") : null,
    hasMore,
  };
}

/** Records read per page of the flat index (and sent per chunk of its text): a few hundred KiB of JSON. */
const LISTING_PAGE_FILES = 1000;

export interface FlatIndex {
  files: TxtFile[];
  folders: Awaited<ReturnType<typeof listFolders>>;
  owners: { id: string; email: string; name: string }[];
  cursor: number;
}

/**
 * The flat index read in one snapshot (the caller's unit of work): its files read a page at a time
 * by `readPage`, in id order, and handed to `onPage` with the caller's role in each; the folders,
 * owners and feed position returned once they are all read. The files go first: a client streaming
 * the listing starts on them while the folders are counted.
 */
async function readFlatIndex<R extends FileJsonRow | FileMetaRow>(
  tx: Tx,
  actor: Actor,
  readPage: (filter: FileListFilter) => Promise<R[]>,
  onPage: (files: R[], roleOf: (file: R) => Role) => void | Promise<void>,
): Promise<Omit<FlatIndex, "files">> {
  const scope = await loadScope(tx, actor);
  const user = await tx.users.byId(actor.userId);
  // Read in the same snapshot: following the feed from here misses nothing.
  const cursor = Number(user?.feed_seq ?? 0);
  // Who shared what with the caller (the mount names its `Shared with me/OWNER/` folders after them).
  const ownerIds = new Set<string>();
  const visible = visibleTo(scope);
  const roleOf = (file: R) => roleInScope(scope, file) ?? "reader";
  for (let afterId: string | undefined; ; ) {
    const rows = await readPage({ ...visible, afterId, limit: LISTING_PAGE_FILES });
    for (const r of rows) if (r.owner_id !== actor.userId) ownerIds.add(r.owner_id);
    if (rows.length) await onPage(rows, roleOf);
    if (rows.length < LISTING_PAGE_FILES) break;
    afterId = rows.at(-1)!.id;
  }
  const folders = await listFolders(tx, actor, scope);
  for (const f of folders) if (f.ownerId && f.ownerId !== actor.userId) ownerIds.add(f.ownerId);
  const owners = [];
  for (const id of [...ownerIds].sort()) {
    const u = await tx.users.byId(id);
    if (u) owners.push({ id: u.id, email: u.email, name: u.name });
  }
  return { folders, owners, cursor };
}

/** The flat metadata index (GET /api/me/files): every file and folder, plus the feed head to follow. */
export async function flatIndex(tx: Tx, actor: Actor): Promise<FlatIndex> {
  const files: TxtFile[] = [];
  const rest = await readFlatIndex(
    tx,
    actor,
    (filter) => tx.files.list(filter) as Promise<FileMetaRow[]>,
    (page, roleOf) => {
      for (const r of page) files.push(toTxtFile(r, roleOf(r)));
    },
  );
  return { files, ...rest };
}

/**
 * The flat index as JSON text, written page by page while it is read: the values of
 * `JSON.stringify(flatIndex(...))`, with each record on a line of its own (whitespace JSON allows:
 * a client finds where records end by the line ends, without parsing them twice). Between pages the
 * event loop runs, so the text so far goes out while the rest is read: a mount listing 100,000
 * notes parses the first records while the service still reads the last from disk, and the
 * service never holds every record at once. `write` must not wait for the client (the unit of
 * work, one snapshot, must not last as long as a slow reader). The records' JSON is the database's
 * own (listedFileJson): they never become objects here.
 */
export async function writeFlatIndex(tx: Tx, actor: Actor, write: (text: string) => void): Promise<void> {
  let before = '{"files":[';
  const { folders, owners, cursor } = await readFlatIndex(
    tx,
    actor,
    (filter) => tx.files.listJson(filter),
    async (page, roleOf) => {
      write(`${before}\n${page.map((r) => listedFileJson(r, roleOf(r))).join(",\n")}`);
      before = ",";
      await new Promise((resolve) => setImmediate(resolve)); // this page goes out while the next is read
    },
  );
  write(
    `${before === "," ? "" : before}\n],"folders":${JSON.stringify(folders)},"owners":${JSON.stringify(owners)},"scopes":${JSON.stringify(scopesOf(actor))},"cursor":${cursor}}`,
  );
}

/**
 * What the caller may do, as key scopes (an OAuth token's mapped to them): a client learns up front
 * what it will be refused (a mount whose key has no files:write is read-only, instead of accepting
 * saves the service refuses later).
 */
function scopesOf(actor: Actor): string[] {
  return [...actor.scopes].sort();
}

/** GET /api/me: the user, their identity, every folder and the root files. */
export async function overview(tx: Tx, actor: Actor) {
  const scope = await loadScope(tx, actor);
  const folders = await listFolders(tx, actor, scope);
  const rootRows = (await tx.files.list({ ownerId: actor.userId, folderId: null })) as FileMetaRow[];
  // A file shared on its own sits at the caller's top level unless its folder is visible to them.
  const visibleFolders = new Set(folders.map((f) => f.id));
  for (const row of await tx.files.metaByIds([...scope.fileRoles.keys()])) {
    if (row.owner_id !== actor.userId && !(row.folder_id && visibleFolders.has(row.folder_id)))
      rootRows.push(row);
  }
  return {
    user: { id: actor.userId, email: actor.email, name: actor.name },
    scopes: scopesOf(actor),
    identity: await activeIdentity(tx, actor.userId),
    folders,
    rootFiles: rootRows.map((r) => toTxtFile(r, roleInScope(scope, r) ?? "reader")),
    // Additive: the files at the top level that are not notes (rootFiles stays notes only).
    rootAttachments: await rootAttachments(tx, actor),
  };
}
