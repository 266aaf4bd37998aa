// Links as the API lists them: a note's own links with the notes they name (GET
// /api/me/files/:id/links), the links naming it (GET /api/me/files/:id/backlinks), its unresolved ones (in its connections answer), and every unresolved
// link of the account, paged (GET /api/me/links/unresolved; later the mount's .txtfs/links/unresolved).
import type { Tx } from "../../../store/store.ts";
import { loadScope, requireFile, roleInScope } from "../access.ts";
import type { Actor } from "../actor.ts";
import { invalid } from "../errors.ts";
import { LIMITS } from "../limits.ts";

/** The note's links that name no note, in the order written. */
export async function unresolvedFrom(tx: Tx, actor: Actor, fileId: string) {
  await requireFile(tx, actor, fileId, "reader");
  return (await tx.links.from(fileId))
    .filter((l) => l.target_id === null && l.attachment_id === null)
    .map((l) => ({ text: l.text, path: l.path, embed: l.embed === 1 }));
}

/**
 * The note's links in the order written, each with the note it names: `targetFileId` is null when
 * it names none, one the caller cannot see, or an attachment (`resolved` tells which).
 */
export async function linksFrom(tx: Tx, actor: Actor, fileId: string) {
  await requireFile(tx, actor, fileId, "reader");
  const links = await tx.links.from(fileId);
  const scope = await loadScope(tx, actor);
  const targets = await tx.files.metaByIds([
    ...new Set(links.flatMap((l) => (l.target_id ? [l.target_id] : []))),
  ]);
  const visible = new Set(targets.filter((t) => roleInScope(scope, t)).map((t) => t.id));
  return {
    fileId,
    links: links.map((l) => ({
      text: l.text,
      path: l.path,
      embed: l.embed === 1,
      resolved: l.target_id !== null || l.attachment_id !== null,
      targetFileId: l.target_id && visible.has(l.target_id) ? l.target_id : null,
    })),
  };
}

/** The most links to one note an answer lists (a hub note's backlinks; `hasMore` says there are more). */
const BACKLINKS_MAX = 1000;

/**
 * The links in other notes (and the note itself) that name this note, by linking note then
 * position: only from notes the caller can see.
 */
export async function linksTo(tx: Tx, actor: Actor, fileId: string) {
  await requireFile(tx, actor, fileId, "reader");
  const rows = await tx.links.to(fileId, BACKLINKS_MAX + 1);
  const page = rows.slice(0, BACKLINKS_MAX);
  const scope = await loadScope(tx, actor);
  const sources = await tx.files.metaByIds([...new Set(page.map((l) => l.source_id))]);
  const visible = new Set(sources.filter((s) => roleInScope(scope, s)).map((s) => s.id));
  return {
    fileId,
    backlinks: page
      .filter((l) => visible.has(l.source_id))
      .map((l) => ({ fileId: l.source_id, text: l.text, path: l.path, embed: l.embed === 1 })),
    hasMore: rows.length > BACKLINKS_MAX,
  };
}

/** `<file id>.<position>`: the last link a page gave. */
function parseCursor(cursor: string | undefined) {
  if (cursor === undefined) return null;
  const m = /^(f_[0-9A-Za-z]+)\.(\d{1,9})$/.exec(cursor);
  if (!m) throw invalid("cursor", "must be a nextCursor this endpoint returned");
  return { sourceId: m[1]!, ord: Number(m[2]) };
}

/** The caller's own notes' unresolved links, by note then position. */
export async function listUnresolved(tx: Tx, actor: Actor, query: { cursor?: string; limit?: number }) {
  const limit = Math.min(query.limit ?? LIMITS.pageDefault, LIMITS.pageMax);
  const rows = await tx.links.unresolved(actor.userId, parseCursor(query.cursor), limit + 1);
  const page = rows.slice(0, limit);
  const names = new Map(
    (await tx.files.metaByIds([...new Set(page.map((r) => r.source_id))])).map((f) => [f.id, f]),
  );
  const last = page.at(-1);
  return {
    links: page.map((r) => ({
      fileId: r.source_id,
      name: names.get(r.source_id)?.name ?? "",
      folderId: names.get(r.source_id)?.folder_id ?? null,
      text: r.text,
      path: r.path,
      embed: r.embed === 1,
    })),
    nextCursor: rows.length > limit && last ? `${last.source_id}.${last.ord}` : null,
    hasMore: rows.length > limit,
  };
}
