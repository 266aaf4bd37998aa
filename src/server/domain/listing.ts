// Listings: metadata only, never bodies, including what is shared with the caller.

import type { FileMetaRow } from "../../store/repos/rows.ts";
import type { Tx } from "../../store/store.ts";
import { loadScope, requireFolder, roleInScope, visibleTo } from "./access.ts";
import type { Actor } from "./actor.ts";
import { ServiceError } from "./errors.ts";
import { listFolders } from "./folders.ts";
import { activeIdentity } from "./identities.ts";
import { LIMITS } from "./limits.ts";
import { type TxtFile, toTxtFile } from "./records.ts";

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

/** The flat metadata index (GET /api/me/files): every file and folder, plus the feed head to follow. */
export async function flatIndex(tx: Tx, actor: Actor) {
  const { rows, roles, folders, owners, cursor } = await flatIndexParts(tx, actor);
  return { files: rows.map((r, i) => toTxtFile(r, roles[i]!)), folders, owners, cursor };
}

/** Files per chunk of a streamed listing: a few hundred KiB of JSON. */
const LISTING_CHUNK_FILES = 1000;

/**
 * The flat index as JSON text in chunks, exactly `JSON.stringify(flatIndex(...))`: a listing of
 * 100,000 notes (~55 MiB) starts reaching the client after its first thousand, the client parses
 * while the rest is written, and the server never holds the whole text or every record at once.
 */
export function* flatIndexJson(parts: FlatIndexParts): Generator<string> {
  const { rows, roles } = parts;
  yield '{"files":[';
  for (let i = 0; i < rows.length; i += LISTING_CHUNK_FILES) {
    const end = Math.min(rows.length, i + LISTING_CHUNK_FILES);
    const chunk: string[] = [];
    for (let k = i; k < end; k++) chunk.push(JSON.stringify(toTxtFile(rows[k]!, roles[k]!)));
    yield (i > 0 ? "," : "") + chunk.join(",");
  }
  const { folders, owners, cursor } = parts;
  yield `],"folders":${JSON.stringify(folders)},"owners":${JSON.stringify(owners)},"cursor":${JSON.stringify(cursor)}}`;
}

export type FlatIndexParts = Awaited<ReturnType<typeof flatIndexParts>>;

/** What the flat index is made of, read in one snapshot (the records are made from the rows as they are sent). */
export async function flatIndexParts(tx: Tx, actor: Actor) {
  const scope = await loadScope(tx, actor);
  const rows = (await tx.files.list({
    ...visibleTo(scope),
  })) as FileMetaRow[];
  const user = await tx.users.byId(actor.userId);
  const folders = await listFolders(tx, actor, scope);
  // Who shared what with the caller (the mount names its `Shared with me/OWNER/` folders after them).
  const ownerIds = new Set<string>();
  for (const r of rows) if (r.owner_id !== actor.userId) ownerIds.add(r.owner_id);
  for (const f of folders) if (f.ownerId && f.ownerId !== actor.userId) ownerIds.add(f.ownerId);
  const owners = [];
  for (const id of [...ownerIds].sort()) {
    const u = await tx.users.byId(id);
    if (u) owners.push({ id: u.id, email: u.email, name: u.name });
  }
  return {
    rows,
    roles: rows.map((r) => roleInScope(scope, r) ?? "reader"),
    folders,
    owners,
    // Read in the same snapshot: following the feed from here misses nothing.
    cursor: Number(user?.feed_seq ?? 0),
  };
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
    identity: await activeIdentity(tx, actor.userId),
    folders,
    rootFiles: rootRows.map((r) => toTxtFile(r, roleInScope(scope, r) ?? "reader")),
  };
}
