// Related notes: a note's explicit connections plus ones inferred from shared tags, its folder,
// shared words and (once the AI provider embedded both notes) similar meaning. Candidates come from
// indexes, each source bounded, so one request costs about the same in a store of ten thousand notes
// as in one of a million; the ranking of those candidates is computed here, the same on both stores.
import type { FileMetaRow } from "../../store/repos/rows.ts";
import type { Tx } from "../../store/store.ts";
import { loadScope, requireFile, roleInScope, visibleTo } from "./access.ts";
import type { Actor } from "./actor.ts";
import { cosine } from "./brain/semantic.ts";
import { termCounts, wordSet } from "./brain/terms.ts";
import { LIMITS } from "./limits.ts";
import { linkedNotes } from "./links/linkedNotes.ts";
import { parseTags, toTxtFile } from "./records.ts";

export type ConnectionReason =
  | { type: "explicit"; reason: string; createdAt: string; updatedAt: string }
  | { type: "shared_tags"; tags: string[] }
  | { type: "same_folder"; folderId: string }
  /** A link in this note's text to the other (`text` as written), or in the other's to this one. */
  | { type: "link" | "backlink"; text: string; embed: boolean }
  /** Telling words both notes use: `score` is their share of this note's telling words, by rarity. */
  | { type: "similar_text"; score: number; words: string[] }
  /** Cosine similarity of stored embeddings (present once the AI provider has embedded both notes). */
  | { type: "similar_meaning"; similarity: number };

// Ranking weights: a person's explicit link beats any inference; each shared tag counts, a shared
// folder a little. Documented in docs/api.md. The explicit weight exceeds the most any inference can
// score (every tag shared and the same folder), so an explicit link always ranks first.
// Similar text adds up to 2 (every salient word shared) and similar meaning up to 2 (identical vectors).
// A link the text makes (either way) outweighs folder, text and meaning together: the owner wrote it.
const SIMILAR = { tag: 2, folder: 1, text: 2, meaning: 2 } as const;
const LINKED = SIMILAR.folder + SIMILAR.text + SIMILAR.meaning + 1;
const INFERRED = { ...SIMILAR, link: LINKED, backlink: LINKED } as const;
const WEIGHT = {
  ...INFERRED,
  explicit:
    INFERRED.tag * LIMITS.tags +
    INFERRED.folder +
    INFERRED.text +
    INFERRED.meaning +
    INFERRED.link +
    INFERRED.backlink +
    1,
} as const;

/** How many candidates each source may bring, and how far a tag's notes are counted. */
const BOUNDS = { rareTags: 8, perTag: 25, tagCountCap: 1000, folder: 25, perWord: 16 } as const;
/** Two notes are similar in text when they share at least this many telling words (not one name token). */
const MIN_SHARED_WORDS = 2;
/**
 * A note's telling words: of its most frequent words, those fewest notes use (term frequency times
 * inverse document frequency, as "more like this" search does). A word in `commonAt` notes or more
 * tells nothing, and its matches would grow with the store.
 */
const TELLING = { considered: 60, kept: 8, commonAt: 500 } as const;
/** Characters of each body compared for words: salientTerms reads the same head of a note. */
const TEXT_HEAD = 20_000;
const MEANING_THRESHOLD = 0.5;
const MAX_RESULTS = 50;

/** A note's words: its name without the type's extension, context and body head (tags have their own reason). */
function noteText(n: { name: string; context: string }, head: string): string {
  return `${n.name.replace(/\.(md|txt)$/i, "")}\n${n.context}\n${head}`;
}

/** A note's telling words, most telling first, each with its weight in the text score (its idf). */
async function tellingWords(tx: Tx, text: string): Promise<{ w: string; idf: number }[]> {
  const counts = termCounts(text, TELLING.considered);
  const df = await tx.search.documentFrequency(
    counts.map(([w]) => w),
    TELLING.commonAt,
  );
  const idf = (w: string) => Math.log((1 + TELLING.commonAt) / (1 + (df.get(w) ?? 0)));
  return counts
    .filter(([w]) => (df.get(w) ?? 0) < TELLING.commonAt)
    .map(([w, tf]) => ({ w, idf: idf(w), weight: tf * idf(w) }))
    .sort((a, b) => b.weight - a.weight || (a.w < b.w ? -1 : 1))
    .slice(0, TELLING.kept)
    .map(({ w, idf }) => ({ w, idf }));
}

/** Ranked related files, each with every reason it is related (explicit and inferred). */
export async function relatedFiles(tx: Tx, actor: Actor, id: string) {
  const { file } = await requireFile(tx, actor, id, "reader");
  const scope = await loadScope(tx, actor);
  const filter = visibleTo(scope);
  const candidates = new Set<string>();

  const explicit = new Map<string, { reason: string; created_at: string; updated_at: string }>();
  for (const c of await tx.connections.forFile(id)) {
    const other = c.file_id === id ? c.target_file_id : c.file_id;
    explicit.set(other, c);
    candidates.add(other);
  }

  const linked = await linkedNotes(tx, id);
  for (const other of linked.keys()) candidates.add(other);

  // The rarest of the note's tags bring their notes: a tag on every note says little.
  const tags = parseTags(file.tags);
  const counted = await Promise.all(
    tags.map(async (tag) => ({ tag, n: await tx.related.tagCount(filter, tag, BOUNDS.tagCountCap) })),
  );
  counted.sort((a, b) => a.n - b.n || (a.tag < b.tag ? -1 : 1));
  for (const { tag } of counted.slice(0, BOUNDS.rareTags))
    for (const other of await tx.related.withTag(filter, tag, BOUNDS.perTag)) candidates.add(other);

  if (file.folder_id)
    for (const other of await tx.related.inFolder(filter, file.folder_id, BOUNDS.folder))
      candidates.add(other);

  // Similar text: the full-text index finds the first notes holding each telling word (by id, not
  // by the store's own ranking); the words both notes really share decide, counted here, so both
  // stores give the same answer.
  const words = await tellingWords(tx, noteText(file, file.content));
  const textual = new Map<string, { share: number; words: string[] }>();
  if (words.length >= MIN_SHARED_WORDS) {
    const found = new Set<string>();
    const byWord = await tx.search.withWords(
      filter,
      words.map((x) => x.w),
      { limit: BOUNDS.perWord, within: TELLING.commonAt, excludeIds: [id] },
    );
    for (const ids of byWord.values()) for (const other of ids) found.add(other);
    for (const t of await tx.related.texts([...found], TEXT_HEAD)) {
      const theirs = wordSet(noteText(t, t.head));
      const shared = words.filter((x) => theirs.has(x.w));
      if (shared.length >= MIN_SHARED_WORDS) {
        // The share of this note's telling words the other uses, each weighted by how rare it is.
        textual.set(t.id, { share: sum(shared) / sum(words), words: shared.map((x) => x.w) });
        candidates.add(t.id);
      }
    }
  }

  const meaning = new Map<string, number>();
  const model = await tx.embeddings.modelOf(id);
  if (model) {
    const vectors = await tx.embeddings.visible(filter, model);
    const own = vectors.find((v) => v.file_id === id);
    if (own) {
      const mine = JSON.parse(own.vector) as number[];
      for (const v of vectors) {
        if (v.file_id === id) continue;
        const similarity = cosine(mine, JSON.parse(v.vector) as number[]);
        if (similarity >= MEANING_THRESHOLD) {
          meaning.set(v.file_id, similarity);
          candidates.add(v.file_id);
        }
      }
    }
  }

  candidates.delete(id);
  const own = new Set(tags);
  const ranked: { row: FileMetaRow; score: number; reasons: ConnectionReason[] }[] = [];
  for (const row of await tx.files.metaByIds([...candidates])) {
    const role = roleInScope(scope, row);
    if (!role) continue; // an explicit connection to a note this caller cannot see
    const reasons: ConnectionReason[] = [];
    let score = 0;
    const link = explicit.get(row.id);
    if (link) {
      score += WEIGHT.explicit;
      reasons.push({
        type: "explicit",
        reason: link.reason,
        createdAt: link.created_at,
        updatedAt: link.updated_at,
      });
    }
    const links = linked.get(row.id);
    if (links?.out.length) {
      score += WEIGHT.link;
      for (const l of links.out) reasons.push({ type: "link", ...l });
    }
    if (links?.in.length) {
      score += WEIGHT.backlink;
      for (const l of links.in) reasons.push({ type: "backlink", ...l });
    }
    const sharedTags = own.size ? parseTags(row.tags).filter((t) => own.has(t)) : [];
    if (sharedTags.length) {
      score += WEIGHT.tag * sharedTags.length;
      reasons.push({ type: "shared_tags", tags: sharedTags });
    }
    if (file.folder_id && row.folder_id === file.folder_id) {
      score += WEIGHT.folder;
      reasons.push({ type: "same_folder", folderId: file.folder_id });
    }
    const text = textual.get(row.id);
    if (text) {
      score += WEIGHT.text * text.share;
      reasons.push({ type: "similar_text", score: round(text.share), words: text.words });
    }
    const similarity = meaning.get(row.id);
    if (similarity !== undefined) {
      score += WEIGHT.meaning * similarity;
      reasons.push({ type: "similar_meaning", similarity: round(similarity) });
    }
    if (reasons.length) ranked.push({ row, score, reasons });
  }
  ranked.sort((a, b) => b.score - a.score || (a.row.id < b.row.id ? -1 : 1));
  return {
    fileId: id,
    connections: ranked.slice(0, MAX_RESULTS).map(({ row, score, reasons }) => ({
      file: toTxtFile(row, roleInScope(scope, row) ?? "reader"),
      score: round(score),
      reasons,
    })),
  };
}

function sum(words: { idf: number }[]): number {
  return words.reduce((n, x) => n + x.idf, 0);
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
