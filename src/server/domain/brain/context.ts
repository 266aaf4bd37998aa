// The notes sent with a request: full-text candidates from the caller's AI-visible notes, reranked by
// meaning when the provider has an embedding model. Read in one snapshot, ranked outside it.
import type { EmbeddingRow } from "../../../store/repos/brain.ts";
import type { FileRow } from "../../../store/repos/rows.ts";
import type { Tx } from "../../../store/store.ts";
import { BRAIN_LIMITS } from "./config.ts";
import type { AiProvider } from "./provider.ts";
import { loadEmbeddings, semanticRanking } from "./semantic.ts";
import {
  folderNames,
  loadBodies,
  type NoteForModel,
  noteForModel,
  rankForText,
  type Workspace,
} from "./workspace.ts";

export interface Candidates {
  files: FileRow[];
  lexical: Map<string, number>;
  stored: Map<string, EmbeddingRow>;
  folders: Map<string, string>;
}

export async function loadCandidates(
  tx: Tx,
  ws: Workspace,
  provider: AiProvider,
  text: string,
  excludeIds: readonly string[] = [],
): Promise<Candidates> {
  // With embeddings, a wider lexical net for the reranking to choose from.
  const wanted = provider.embeddingModel ? BRAIN_LIMITS.contextNotes * 3 : BRAIN_LIMITS.contextNotes;
  const ranked = await rankForText(tx, ws, text, wanted, excludeIds);
  const files = await loadBodies(tx, ws, ranked);
  const stored = provider.embeddingModel
    ? await loadEmbeddings(tx, provider.embeddingModel, files)
    : new Map();
  return {
    files,
    lexical: new Map(ranked.map((id, i) => [id, 1 - i / Math.max(1, ranked.length)])),
    stored,
    folders: await folderNames(tx, files),
  };
}

export interface ChosenContext {
  notes: NoteForModel[];
  fresh: EmbeddingRow[];
  tokens: number;
}

/** The notes to send: the lexical order, or half lexical and half meaning with embeddings. */
export async function chooseContext(
  provider: AiProvider,
  c: Candidates,
  text: string,
): Promise<ChosenContext> {
  let order = c.files;
  let fresh: EmbeddingRow[] = [];
  let tokens = 0;
  if (provider.embeddingModel && text.trim() && c.files.length > 0) {
    const sem = await semanticRanking(provider, text, c.files, c.stored);
    fresh = sem.fresh;
    tokens = sem.tokens;
    const score = (f: FileRow) => 0.5 * (c.lexical.get(f.id) ?? 0) + 0.5 * (sem.similarity.get(f.id) ?? 0);
    order = [...c.files].sort((a, b) => score(b) - score(a));
  }
  return {
    notes: order.slice(0, BRAIN_LIMITS.contextNotes).map((f) => noteForModel(f, c.folders)),
    fresh,
    tokens,
  };
}
