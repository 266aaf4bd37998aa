// Render: notes (by id or folder) into an artifact — a summary, an outline, a slide deck in Markdown,
// a Mermaid diagram of the notes' connections, or a standalone HTML page — stored as an artifact
// record and, when asked, saved as a new note beside the sources. The model answers in one structure
// (title, summary, sections of points) and the service writes every format from it, so no markup
// in the output comes from the model unescaped. The diagram needs no model at all.
import { newId } from "../../../lib/ids.ts";
import { nowIso } from "../../../lib/time.ts";
import type { ArtifactRow } from "../../../store/repos/brain.ts";
import type { FileMetaRow, FileRow } from "../../../store/repos/rows.ts";
import type { Tx } from "../../../store/store.ts";
import { loadScope, requireFile, requireFolder, roleInScope, visibleTo } from "../access.ts";
import type { Actor } from "../actor.ts";
import { invalid, ServiceError } from "../errors.ts";
import { createFile } from "../files.ts";
import { toTxtFileDetail } from "../records.ts";
import { BRAIN_LIMITS } from "./config.ts";
import { type BrainDeps, chatChecked, type ProviderReport, requireProvider } from "./deps.ts";
import { excludedFolders, isExcluded } from "./exclusions.ts";
import { ArtifactOut } from "./outputs.ts";
import { systemPrompt, userMessage } from "./prompts.ts";
import { chargeQuota } from "./quota.ts";
import { cleanText, fileNameFrom } from "./sanitize.ts";
import { folderNames, noteForModel } from "./workspace.ts";

export const ARTIFACT_KINDS = {
  summary: {
    mediaType: "text/markdown",
    needsModel: true,
    description: "A summary of the notes in Markdown.",
  },
  outline: {
    mediaType: "text/markdown",
    needsModel: true,
    description: "A nested Markdown outline of the notes.",
  },
  slides: {
    mediaType: "text/markdown",
    needsModel: true,
    description: "A slide deck in Markdown (Marp-compatible: slides separated by ---).",
  },
  mermaid: {
    mediaType: "text/vnd.mermaid",
    needsModel: false,
    description:
      "A Mermaid flowchart of the notes and their connections (explicit and shared tags); no model needed.",
  },
  html: {
    mediaType: "text/html",
    needsModel: true,
    description: "A standalone HTML page presenting the notes.",
  },
} as const;
export type ArtifactKind = keyof typeof ARTIFACT_KINDS;

interface Doc {
  title: string;
  summary: string;
  sections: { heading: string; points: string[] }[];
}

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
const mdLine = (s: string) => s.replace(/\s*\n\s*/g, " ").trim();

export function renderDoc(kind: Exclude<ArtifactKind, "mermaid">, doc: Doc): string {
  switch (kind) {
    case "summary":
      return `# ${mdLine(doc.title)}\n\n${doc.summary.trim()}\n${doc.sections
        .map((s) => `\n## ${mdLine(s.heading)}\n\n${s.points.map((p) => `- ${mdLine(p)}`).join("\n")}\n`)
        .join("")}`;
    case "outline":
      return `# ${mdLine(doc.title)}\n\n${doc.sections
        .map(
          (s, i) => `${i + 1}. ${mdLine(s.heading)}\n${s.points.map((p) => `   - ${mdLine(p)}`).join("\n")}`,
        )
        .join("\n")}\n`;
    case "slides":
      return [
        `---\nmarp: true\n---\n\n# ${mdLine(doc.title)}\n\n${mdLine(doc.summary)}\n`,
        ...doc.sections.map(
          (s) => `\n---\n\n## ${mdLine(s.heading)}\n\n${s.points.map((p) => `- ${mdLine(p)}`).join("\n")}\n`,
        ),
      ].join("");
    case "html":
      return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(doc.title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#222}h1{font-size:1.8rem}h2{font-size:1.3rem;margin-top:2rem}</style>
</head>
<body>
<h1>${esc(doc.title)}</h1>
<p>${esc(doc.summary)}</p>
${doc.sections.map((s) => `<section>\n<h2>${esc(s.heading)}</h2>\n<ul>\n${s.points.map((p) => `<li>${esc(p)}</li>`).join("\n")}\n</ul>\n</section>`).join("\n")}
</body>
</html>
`;
  }
}

/** Mermaid node labels are quoted strings: quotes and brackets would end them. */
const mermaidLabel = (s: string) =>
  s
    .replace(/["[\]{}()<>|#;`]/g, " ")
    .replace(/\s+/g, " ")
    .trim() || "note";

export async function mermaidOf(tx: Tx, files: readonly FileMetaRow[]): Promise<string> {
  const ids = new Set(files.map((f) => f.id));
  const node = new Map(files.map((f, i) => [f.id, `n${i + 1}`]));
  const lines = ["flowchart LR"];
  for (const f of files) lines.push(`  ${node.get(f.id)}["${mermaidLabel(f.name)}"]`);
  const seen = new Set<string>();
  for (const f of files) {
    for (const c of await tx.connections.forFile(f.id)) {
      const key = [c.file_id, c.target_file_id].sort().join(" ");
      if (seen.has(key) || !ids.has(c.file_id) || !ids.has(c.target_file_id)) continue;
      seen.add(key);
      const label = mermaidLabel(c.reason).slice(0, 40);
      lines.push(`  ${node.get(c.file_id)} ---${label ? `|"${label}"|` : ""} ${node.get(c.target_file_id)}`);
    }
  }
  // Inferred links: notes sharing a tag, dotted.
  for (let i = 0; i < files.length; i++) {
    for (let j = i + 1; j < files.length; j++) {
      const a = files[i]!;
      const b = files[j]!;
      const key = [a.id, b.id].sort().join(" ");
      if (seen.has(key)) continue;
      const tagsB = new Set(JSON.parse(b.tags) as string[]);
      const shared = (JSON.parse(a.tags) as string[]).filter((t) => tagsB.has(t));
      if (shared.length)
        lines.push(
          `  ${node.get(a.id)} -.-|"${mermaidLabel(shared.join(", ")).slice(0, 40)}"| ${node.get(b.id)}`,
        );
    }
  }
  return `${lines.join("\n")}\n`;
}

export interface RenderInput {
  kind: ArtifactKind;
  fileIds?: string[];
  folderId?: string;
  title?: string;
  save?: boolean;
}

async function sources(tx: Tx, actor: Actor, input: RenderInput): Promise<FileMetaRow[]> {
  if (!input.fileIds?.length && !input.folderId) {
    throw invalid("fileIds", "name the notes to render (fileIds) or a folder (folderId)");
  }
  const out = new Map<string, FileMetaRow>();
  for (const id of input.fileIds ?? []) out.set(id, (await requireFile(tx, actor, id, "reader")).file);
  if (input.folderId) {
    const { folder } = await requireFolder(tx, actor, input.folderId, "reader");
    const scope = await loadScope(tx, actor);
    for (const f of (await tx.files.list({ ...visibleTo(scope), folderId: folder.id })) as FileMetaRow[]) {
      if (roleInScope(scope, f)) out.set(f.id, f);
    }
  }
  if (out.size > BRAIN_LIMITS.artifactSources)
    throw invalid("fileIds", `at most ${BRAIN_LIMITS.artifactSources} notes per artifact`);
  if (out.size === 0) throw invalid("folderId", "the folder holds no notes");
  return [...out.values()];
}

export async function planRender(deps: BrainDeps, actor: Actor, input: RenderInput) {
  const kind = input.kind;
  const spec = ARTIFACT_KINDS[kind];
  const title = input.title === undefined ? null : cleanText(input.title, 200);
  if (!spec.needsModel) {
    const { files, content } = await deps.store.read(async (tx) => {
      const files = await sources(tx, actor, input);
      return { files, content: await mermaidOf(tx, files) };
    });
    return {
      kind,
      title: title || "Connections",
      content,
      files,
      model: null,
      provider: null,
      tokens: 0,
      sent: [],
    };
  }
  const read = await deps.store.read(async (tx) => {
    const files = await sources(tx, actor, input);
    const served = await requireProvider(tx, deps, actor);
    const excluded = await excludedFolders(
      tx,
      files.map((f) => f.owner_id),
    );
    const allowed = files.filter((f) => !isExcluded(f, excluded));
    if (allowed.length === 0) {
      throw new ServiceError(
        409,
        "ai_excluded",
        "Every note named is in a folder kept away from the AI.",
        "Clear the folder's setting (PUT /api/v1/folders/{id}/ai) or pick other notes.",
      );
    }
    const bodies: FileRow[] = [];
    for (const f of allowed) bodies.push((await tx.files.byId(f.id))!);
    return {
      files,
      served,
      bodies,
      names: await folderNames(tx, bodies),
      excluded: files.length - allowed.length,
    };
  });
  const provider = read.served.cap.provider;
  const notes = read.bodies.map((f) => ({
    ...noteForModel(f, read.names),
    excerpt: f.content.slice(0, 6000),
  }));
  const answer = await chatChecked<Doc>(
    deps,
    actor,
    `render ${kind}`,
    provider,
    {
      system: systemPrompt(
        `Turn the notes in DATA into ${spec.description.toLowerCase()} Answer with a title, a short summary and sections of points (headings and bullet points, plain text) that cover the notes' substance.`,
      ),
      user: userMessage(title, { kind, notes }),
    },
    "artifact",
    ArtifactOut,
  );
  const doc = answer.value;
  const clean: Doc = {
    title: cleanText(title || doc.title, 200) || "Artifact",
    summary: cleanText(doc.summary, 20_000),
    sections: doc.sections.slice(0, 100).map((s) => ({
      heading: cleanText(s.heading, 300),
      points: s.points.slice(0, 100).map((p) => cleanText(p, 2000)),
    })),
  };
  const report: ProviderReport = { host: provider.host, source: read.served.cap.source, model: answer.model };
  return {
    kind,
    title: clean.title,
    content: renderDoc(kind as Exclude<ArtifactKind, "mermaid">, clean),
    files: read.files,
    model: answer.model,
    provider: report,
    tokens: answer.tokens,
    sent: notes.map((n) => ({ id: n.id, name: n.name })),
  };
}

export function toArtifactRecord(row: ArtifactRow, withContent = true) {
  return {
    id: row.id,
    kind: row.kind,
    title: row.title,
    mediaType: row.media_type,
    model: row.model,
    sourceIds: JSON.parse(row.source_ids) as string[],
    fileId: row.file_id,
    createdAt: row.created_at,
    ...(withContent ? { content: row.content } : {}),
  };
}

const EXT: Record<ArtifactKind, string> = {
  summary: "",
  outline: " outline",
  slides: " slides",
  mermaid: " diagram",
  html: " page",
};

export async function applyRender(
  tx: Tx,
  deps: BrainDeps,
  actor: Actor,
  p: Awaited<ReturnType<typeof planRender>>,
  save: boolean,
) {
  let file = null;
  if (save) {
    // Beside the sources: the first source's folder when the caller may write there, else the root.
    const first = p.files[0]!;
    let folderId: string | null = null;
    if (first.folder_id) {
      folderId = await requireFolder(tx, actor, first.folder_id, "writer").then(
        (r) => r.folder.id,
        () => null,
      );
    }
    const body =
      p.kind === "mermaid"
        ? `\`\`\`mermaid\n${p.content}\`\`\`\n`
        : p.kind === "html"
          ? `\`\`\`html\n${p.content}\`\`\`\n`
          : p.content;
    const created = await createFile(
      tx,
      { ...actor, source: "artifact" },
      {
        name: fileNameFrom(`${p.title}${EXT[p.kind]}`, "Artifact"),
        content: body,
        fileType: "md",
        folderId,
      },
    );
    file = toTxtFileDetail(created.file, created.role);
  }
  const row: ArtifactRow = {
    id: newId("art"),
    owner_id: actor.userId,
    kind: p.kind,
    title: p.title,
    media_type: ARTIFACT_KINDS[p.kind].mediaType,
    model: p.model,
    source_ids: JSON.stringify(p.files.map((f) => f.id)),
    file_id: file?.id ?? null,
    created_at: nowIso(),
    content: p.content,
  };
  await tx.artifacts.insert(row);
  const quota = p.provider ? await chargeQuota(tx, actor.userId, p.tokens, deps.pool.config) : null;
  return {
    artifact: toArtifactRecord(row),
    file,
    provider: p.provider,
    sentNotes: p.sent,
    usage: { tokens: p.tokens },
    quota,
  };
}

export async function artifactModels(deps: BrainDeps, actor: Actor) {
  const cap = await deps.store.read((tx) => deps.pool.capability(tx, actor.userId, deps.sealer));
  const kinds = Object.entries(ARTIFACT_KINDS).map(([kind, k]) => ({
    kind,
    mediaType: k.mediaType,
    description: k.description,
    needsModel: k.needsModel,
    available: !k.needsModel || Boolean(cap.provider),
  }));
  let models: { id: string; ownedBy: string | null; kinds: string[]; default: boolean }[] = [];
  let modelsError: string | null = null;
  if (cap.provider) {
    const provider = cap.provider;
    try {
      const list = await provider.models();
      const text = kinds.filter((k) => k.needsModel).map((k) => k.kind);
      models = list.map((m) => ({
        id: m.id,
        ownedBy: m.ownedBy,
        // Chat models render every text kind; embedding and audio models none.
        kinds: /embed|whisper|transcri|tts|audio/i.test(m.id) ? [] : text,
        default: m.id === provider.chatModel,
      }));
    } catch (err) {
      modelsError = err instanceof Error ? err.message : String(err);
    }
  }
  return {
    kinds,
    canRender: Boolean(cap.provider),
    reason: cap.reason,
    provider: cap.provider
      ? { source: cap.source, host: cap.provider.host, chatModel: cap.provider.chatModel }
      : null,
    models,
    modelsError,
  };
}

export async function listArtifacts(tx: Tx, actor: Actor, limit: number) {
  return { artifacts: (await tx.artifacts.list(actor.userId, limit)).map((r) => toArtifactRecord(r, false)) };
}

export async function getArtifact(tx: Tx, actor: Actor, id: string) {
  const row = await tx.artifacts.byId(id);
  if (!row || row.owner_id !== actor.userId) {
    throw new ServiceError(
      404,
      "not_found",
      `No artifact with id ${id} is yours.`,
      "List them with GET /api/v1/artifacts.",
    );
  }
  return toArtifactRecord(row);
}
