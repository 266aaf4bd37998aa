// Ideation: grow a new note from a seed (or from what the workspace lacks), placed in a folder with
// tags and connections, each with a reason; and grow an existing note. The model proposes the text;
// the service creates the note through the same code as any create, with versions of source
// `ideation`, and keeps an ideation record (seed, model, the notes sent, when, by whom).
import type { Tx } from "../../../store/store.ts";
import { requireFile, requireFolder } from "../access.ts";
import type { Actor } from "../actor.ts";
import { connectFiles } from "../connections.ts";
import { checkIfMatch, createFile, type IfMatch, updateFile } from "../files.ts";
import { createFolder } from "../folders.ts";
import { checkMaxChars } from "../limits.ts";
import { parseTags, toTxtFile, toTxtFileDetail, toTxtFolder } from "../records.ts";
import { BRAIN_LIMITS } from "./config.ts";
import { chooseContext, loadCandidates } from "./context.ts";
import { type BrainDeps, callProvider, chatChecked, type ProviderReport, requireProvider } from "./deps.ts";
import { aiExcluded } from "./errors.ts";
import { isExcluded } from "./exclusions.ts";
import { GrowOut, IdeaOut } from "./outputs.ts";
import { systemPrompt, userMessage } from "./prompts.ts";
import { chargeQuota, type QuotaState } from "./quota.ts";
import {
  cleanContext,
  cleanFolderName,
  cleanReason,
  cleanTags,
  cleanText,
  fileNameFrom,
} from "./sanitize.ts";
import { keepEmbeddings } from "./semantic.ts";
import { loadWorkspace, type NoteForModel, tagVocabulary } from "./workspace.ts";

export interface IdeationEvent {
  kind: "create" | "grow";
  at: string;
  by: string;
  seed: string | null;
  model: string;
  providerHost: string;
  providerSource: "user" | "operator";
  sources: { id: string; name: string }[];
}

type IdeaValue = {
  title: string;
  content: string;
  context: string;
  tags: string[];
  folder: { existingFolderId: string | null; newFolderName: string | null };
  connections: { fileId: string; reason: string }[];
};

type GrowValue = { addition: string; tags: string[]; connections: { fileId: string; reason: string }[] };

interface Planned<T> {
  value: T;
  seed: string | null;
  sent: NoteForModel[];
  provider: ProviderReport;
  tokens: number;
  fresh: Awaited<ReturnType<typeof chooseContext>>["fresh"];
  /** Ids the answer may connect to: notes sent (the caller can see them). */
  allowed: Set<string>;
  dropped: string[];
}

const seedOf = (seed: string | undefined) => {
  const s = checkMaxChars("seed", seed ?? "", BRAIN_LIMITS.seedChars).trim();
  return s || null;
};

/** Keeps connections to notes the caller may see and that were sent; logs the rest. */
function keepConnections(
  deps: BrainDeps,
  actor: Actor,
  conns: { fileId: string; reason: string }[],
  allowed: ReadonlySet<string>,
  self?: string,
) {
  const kept: { fileId: string; reason: string }[] = [];
  const dropped: string[] = [];
  for (const c of conns) {
    if (allowed.has(c.fileId) && c.fileId !== self && !kept.some((k) => k.fileId === c.fileId)) {
      kept.push({ fileId: c.fileId, reason: cleanReason(c.reason) });
    } else dropped.push(c.fileId);
  }
  if (dropped.length)
    deps.logger.warn(
      { user: actor.userId, dropped },
      "model answer named notes the caller cannot use: dropped",
    );
  return { kept, dropped };
}

export async function planIdeation(deps: BrainDeps, actor: Actor, input: { seed?: string }) {
  const seed = seedOf(input.seed);
  const read = await deps.store.read(async (tx) => {
    const served = await requireProvider(tx, deps, actor);
    const ws = await loadWorkspace(tx, actor);
    const provider = served.cap.provider;
    // Without a seed, the least organised notes say what the workspace is missing.
    const candidates = await loadCandidates(tx, ws, provider, seed ?? "");
    const vocabulary = await tagVocabulary(tx, ws);
    return {
      served,
      candidates,
      folders: ws.ownFolders.map((f) => ({ id: f.id, name: f.name, context: f.context })),
      vocabulary,
    };
  });
  const provider = read.served.cap.provider;
  const chosen = await callProvider(deps, actor, "ideation context", () =>
    chooseContext(provider, read.candidates, seed ?? ""),
  );
  const task = seed
    ? "Write a new note that grows the user's seed idea, using the related notes in DATA as context."
    : "Find a topic the user's workspace is missing (judging by the notes in DATA) and write a new note on it.";
  const answer = await chatChecked<IdeaValue>(
    deps,
    actor,
    "ideation",
    provider,
    {
      system: systemPrompt(
        `${task} Give it a short title, Markdown content, a one-line context, up to 5 tags (reuse the tag vocabulary where it fits), the folder it belongs in (an existing folder id from DATA.folders, or a new folder name when none fits), and connections to related notes in DATA.notes, each with a reason.`,
      ),
      user: userMessage(seed, { notes: chosen.notes, folders: read.folders, tagVocabulary: read.vocabulary }),
    },
    "ideation_note",
    IdeaOut,
  );
  const value = answer.value;
  const allowed = new Set(chosen.notes.map((n) => n.id));
  const { kept, dropped } = keepConnections(deps, actor, value.connections, allowed);
  const folderIds = new Set(read.folders.map((f) => f.id));
  const existing = value.folder.existingFolderId;
  if (existing && !folderIds.has(existing)) dropped.push(existing);
  const planned: Planned<IdeaValue> = {
    value: {
      ...value,
      connections: kept,
      folder: {
        existingFolderId: existing && folderIds.has(existing) ? existing : null,
        newFolderName: cleanFolderName(value.folder.newFolderName),
      },
    },
    seed,
    sent: chosen.notes,
    provider: { host: provider.host, source: read.served.cap.source, model: answer.model },
    tokens: answer.tokens + chosen.tokens,
    fresh: chosen.fresh,
    allowed,
    dropped,
  };
  return planned;
}

/** A name not yet used in the folder: `Title.md`, `Title (2).md`, ... */
async function freeName(tx: Tx, actor: Actor, folderId: string | null, name: string): Promise<string> {
  const taken = new Set(
    (await tx.files.list({ ownerId: actor.userId, folderId })).map((f) => f.name.toLowerCase()),
  );
  if (!taken.has(name.toLowerCase())) return name;
  const base = name.replace(/\.md$/, "");
  for (let i = 2; ; i++) {
    const candidate = `${base} (${i}).md`;
    if (!taken.has(candidate.toLowerCase())) return candidate;
  }
}

const report = (p: Planned<unknown>, quota: QuotaState) => ({
  provider: p.provider,
  sentNotes: p.sent.map((n) => ({ id: n.id, name: n.name })),
  droppedIds: p.dropped,
  usage: { tokens: p.tokens },
  quota,
});

async function connectAll(tx: Tx, actor: Actor, fileId: string, conns: { fileId: string; reason: string }[]) {
  const out = [];
  for (const c of conns) {
    // A note deleted or unshared while the model worked is skipped, not an error.
    const target = await tx.files.metaById(c.fileId);
    if (!target) continue;
    const { connection } = await connectFiles(tx, actor, fileId, {
      targetFileId: c.fileId,
      reason: c.reason,
    });
    out.push({
      fileId: c.fileId,
      file: toTxtFile(target, target.owner_id === actor.userId ? "owner" : "reader"),
      reason: connection.reason,
    });
  }
  return out;
}

function event(kind: IdeationEvent["kind"], actor: Actor, p: Planned<unknown>, at: string): IdeationEvent {
  return {
    kind,
    at,
    by: actor.userId,
    seed: p.seed,
    model: p.provider.model,
    providerHost: p.provider.host,
    providerSource: p.provider.source,
    sources: p.sent.map((n) => ({ id: n.id, name: n.name })),
  };
}

export async function applyIdeation(tx: Tx, deps: BrainDeps, actor: Actor, p: Planned<IdeaValue>) {
  const ideator = { ...actor, source: "ideation" };
  let folder = null;
  let folderCreated = false;
  if (p.value.folder.existingFolderId) {
    folder = (await requireFolder(tx, actor, p.value.folder.existingFolderId, "writer")).folder;
  } else if (p.value.folder.newFolderName) {
    const name = p.value.folder.newFolderName;
    folder =
      (await tx.folders.rootFoldersOf(actor.userId)).find(
        (f) => f.name.toLowerCase() === name.toLowerCase(),
      ) ?? null;
    if (!folder) {
      folder = (await createFolder(tx, ideator, { name })).folder;
      folderCreated = true;
    }
  }
  const name = await freeName(tx, actor, folder?.id ?? null, fileNameFrom(p.value.title, "Idea"));
  const tags = cleanTags(p.value.tags);
  const content = cleanText(p.value.content, 200_000);
  const { file, role } = await createFile(tx, ideator, {
    name,
    content: content.length ? content : `# ${p.value.title}\n`,
    context: cleanContext(p.value.context),
    tags,
    fileType: "md",
    folderId: folder?.id ?? null,
  });
  const connections = await connectAll(tx, actor, file.id, p.value.connections);
  const now = file.created_at;
  const ev = event("create", actor, p, now);
  await tx.ideation.put({
    file_id: file.id,
    owner_id: file.owner_id,
    created_by: actor.userId,
    created_at: now,
    grown_at: null,
    grow_count: 0,
    history: JSON.stringify([ev]),
  });
  await keepEmbeddings(tx, p.fresh);
  const quota = await chargeQuota(tx, actor.userId, p.tokens, deps.pool.config);
  const fileCount = folder ? ((await tx.folders.fileCounts([folder.id])).get(folder.id) ?? 0) : 0;
  return {
    note: toTxtFileDetail(file, role),
    folder: folder ? toTxtFolder(folder, "owner", fileCount) : null,
    folderCreated,
    tags,
    connections,
    ideation: toIdeationRecord((await tx.ideation.get(file.id))!),
    ...report(p, quota),
  };
}

export async function planGrow(
  deps: BrainDeps,
  actor: Actor,
  fileId: string,
  input: { seed?: string },
  ifMatch: IfMatch | undefined,
) {
  const seed = seedOf(input.seed);
  const read = await deps.store.read(async (tx) => {
    const { file } = await requireFile(tx, actor, fileId, "owner");
    checkIfMatch(ifMatch, file.etag);
    const served = await requireProvider(tx, deps, actor);
    const ws = await loadWorkspace(tx, actor);
    if (isExcluded(file, ws.excluded)) throw aiExcluded(`The note ${file.name}`);
    const text = `${seed ?? ""}\n${file.name}\n${file.context}\n${file.content}`;
    const candidates = await loadCandidates(tx, ws, served.cap.provider, text, [file.id]);
    return { file, served, candidates, text };
  });
  const provider = read.served.cap.provider;
  const chosen = await callProvider(deps, actor, "grow context", () =>
    chooseContext(provider, read.candidates, read.text),
  );
  const self = {
    id: read.file.id,
    name: read.file.name,
    tags: parseTags(read.file.tags),
    context: read.file.context,
    content: read.file.content.slice(0, 20_000),
  };
  const answer = await chatChecked<GrowValue>(
    deps,
    actor,
    "grow",
    provider,
    {
      system: systemPrompt(
        "Grow the note in DATA.note: write Markdown text to append to it (new material, not a repeat), new tags that fit it, and connections to related notes in DATA.notes, each with a reason. Follow the user's seed when one is given.",
      ),
      user: userMessage(seed, { note: self, notes: chosen.notes }),
    },
    "ideation_growth",
    GrowOut,
  );
  const value = answer.value;
  const allowed = new Set(chosen.notes.map((n) => n.id));
  const { kept, dropped } = keepConnections(deps, actor, value.connections, allowed, read.file.id);
  const planned: Planned<GrowValue> & { baseEtag: string } = {
    value: { ...value, connections: kept },
    seed,
    sent: [
      { ...self, folder: null, excerpt: self.content.slice(0, BRAIN_LIMITS.excerptChars) },
      ...chosen.notes,
    ],
    provider: { host: provider.host, source: read.served.cap.source, model: answer.model },
    tokens: answer.tokens + chosen.tokens,
    fresh: chosen.fresh,
    allowed,
    dropped,
    baseEtag: read.file.etag,
  };
  return planned;
}

export async function applyGrow(
  tx: Tx,
  deps: BrainDeps,
  actor: Actor,
  fileId: string,
  p: Planned<GrowValue> & { baseEtag: string },
) {
  const current = (await requireFile(tx, actor, fileId, "owner")).file;
  const addition = cleanText(p.value.addition, 200_000);
  const before = current.content.replace(/\s+$/, "");
  const content = addition ? `${before}${before ? "\n\n" : ""}${addition}\n` : current.content;
  const oldTags = parseTags(current.tags);
  const tags = cleanTags(p.value.tags, oldTags);
  // The note must still be the one the model read: a save in the meantime wins (412).
  const { file, role } = await updateFile(tx, { ...actor, source: "ideation" }, fileId, { content, tags }, [
    p.baseEtag,
  ]);
  const connections = await connectAll(tx, actor, file.id, p.value.connections);
  const existing = await tx.ideation.get(file.id);
  const history = existing ? (JSON.parse(existing.history) as IdeationEvent[]) : [];
  history.push(event("grow", actor, p, file.updated_at));
  await tx.ideation.put({
    file_id: file.id,
    owner_id: file.owner_id,
    created_by: existing?.created_by ?? actor.userId,
    created_at: existing?.created_at ?? file.updated_at,
    grown_at: file.updated_at,
    grow_count: (existing?.grow_count ?? 0) + 1,
    history: JSON.stringify(history.slice(-50)),
  });
  await keepEmbeddings(tx, p.fresh);
  const quota = await chargeQuota(tx, actor.userId, p.tokens, deps.pool.config);
  return {
    note: toTxtFileDetail(file, role),
    added: addition,
    newTags: tags.filter((t) => !oldTags.includes(t)),
    connections,
    ideation: toIdeationRecord((await tx.ideation.get(file.id))!),
    ...report(p, quota),
  };
}

export function toIdeationRecord(row: NonNullable<Awaited<ReturnType<Tx["ideation"]["get"]>>>) {
  const history = JSON.parse(row.history) as IdeationEvent[];
  const first = history[0];
  const last = history[history.length - 1];
  return {
    fileId: row.file_id,
    seed: first?.seed ?? null,
    model: last?.model ?? null,
    providerHost: last?.providerHost ?? null,
    createdAt: row.created_at,
    createdBy: row.created_by,
    grownAt: row.grown_at,
    growCount: Number(row.grow_count),
    sources: last?.sources ?? [],
    history,
  };
}

/** GET /api/me/files/{id}/ideation: the record, or `ideation: null` for a note the brain never grew. */
export async function fileIdeation(tx: Tx, actor: Actor, fileId: string) {
  const { file } = await requireFile(tx, actor, fileId, "reader");
  const row = await tx.ideation.get(file.id);
  return { fileId: file.id, ideation: row ? toIdeationRecord(row) : null };
}
