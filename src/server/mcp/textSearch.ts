// Full-text search for the MCP tools until the API's own search verb exists (issue 16 builds
// GET /api/v1/search with FTS5 / tsvector): every word of the query must occur in the note's name,
// context, tags or content (case-insensitive); ranked by occurrences, name hits first. Scoped by
// access exactly like the API: it reads only what requireFile lets the caller read.
import type { Tx } from "../../store/store.ts";
import { requireFile } from "../domain/access.ts";
import type { Actor } from "../domain/actor.ts";
import type { Tree } from "./paths.ts";

export interface Hit {
  id: string;
  path: string;
  score: number;
  snippet: string;
}

const count = (hay: string, needle: string) => {
  let n = 0;
  for (let i = hay.indexOf(needle); i !== -1; i = hay.indexOf(needle, i + needle.length)) n++;
  return n;
};

function snippetOf(content: string, word: string): string {
  const at = content.toLowerCase().indexOf(word);
  if (at === -1) return content.slice(0, 160).replace(/\s+/g, " ");
  const start = Math.max(0, at - 60);
  return `${start > 0 ? "…" : ""}${content.slice(start, at + 100).replace(/\s+/g, " ")}…`;
}

export async function searchNotes(
  tx: Tx,
  actor: Actor,
  tree: Tree,
  query: string,
  limit: number,
): Promise<Hit[]> {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return [];
  const hits: Hit[] = [];
  for (const meta of tree.files) {
    const { file } = await requireFile(tx, actor, meta.id, "reader");
    const head = `${meta.path}\n${meta.context}\n${meta.tags.join(" ")}`.toLowerCase();
    const body = file.content.toLowerCase();
    let score = 0;
    let all = true;
    for (const w of words) {
      const inHead = count(head, w);
      const inBody = count(body, w);
      if (inHead + inBody === 0) all = false;
      score += inHead * 5 + inBody;
    }
    if (all) hits.push({ id: meta.id, path: meta.path, score, snippet: snippetOf(file.content, words[0]!) });
  }
  return hits.sort((a, b) => b.score - a.score || a.path.localeCompare(b.path)).slice(0, limit);
}
