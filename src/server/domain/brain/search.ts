// GET /api/v1/search?q= (an extension of the spec): ranked full-text search over every note the
// caller can see, with snippets. Lexical (FTS5 bm25 / tsvector ts_rank): no model involved.
import type { FileMetaRow } from "../../../store/repos/rows.ts";
import { SearchIndexBehind } from "../../../store/sqlite/searchIndex.ts";
import type { Tx } from "../../../store/store.ts";
import { loadScope, roleInScope, visibleTo } from "../access.ts";
import type { Actor } from "../actor.ts";
import { invalid, ServiceError } from "../errors.ts";
import { checkMaxChars } from "../limits.ts";
import { toTxtFile } from "../records.ts";
import { BRAIN_LIMITS } from "./config.ts";
import { queryTerms } from "./terms.ts";

export async function searchNotes(
  tx: Tx,
  actor: Actor,
  input: { q: string; limit?: number; folderId?: string },
) {
  const q = checkMaxChars("q", input.q, BRAIN_LIMITS.queryChars);
  const terms = queryTerms(q);
  if (terms.length === 0) throw invalid("q", "must contain at least one word (letters or digits)");
  const limit = input.limit ?? BRAIN_LIMITS.searchDefault;
  const scope = await loadScope(tx, actor);
  // A folder filter is applied after ranking; ask for more so a page still fills.
  const hits = await tx.search
    .search(visibleTo(scope), {
      terms,
      match: "all",
      prefixLast: true,
      limit: input.folderId ? limit * 5 : limit,
    })
    .catch(refuseWhileBehind);
  const metas = new Map(
    ((await tx.files.metaByIds(hits.map((h) => h.id))) as FileMetaRow[]).map((f) => [f.id, f]),
  );
  const results = [];
  for (const h of hits) {
    const f = metas.get(h.id);
    const role = f ? roleInScope(scope, f) : null;
    if (!f || !role || (input.folderId && f.folder_id !== input.folderId)) continue;
    results.push({ file: toTxtFile(f, role), score: Math.round(h.score * 1e6) / 1e6, snippet: h.snippet });
    if (results.length >= limit) break;
  }
  return { query: q, terms, results };
}

/** A search answers whole or not at all: while the index catches up, 503 and when to retry. */
export function refuseWhileBehind(err: unknown): never {
  if (!(err instanceof SearchIndexBehind)) throw err;
  throw new ServiceError(
    503,
    "search_index_catching_up",
    `Search is not available yet: ${err.message}.`,
    "Retry after Retry-After: the index catches up in the background (after an upgrade, a few minutes per 100,000 notes).",
    undefined,
    { "Retry-After": "2" },
  );
}
