// GET /api/me/context: the caller's workspace and how organised it is, computed without any model:
// counts and shares of notes and folders with context, with tags, in folders, connected; the tag
// vocabulary; the least organised notes (the first candidates for an analysis).
import type { FileMetaRow } from "../../../store/repos/rows.ts";
import type { Tx } from "../../../store/store.ts";
import type { Actor } from "../actor.ts";
import { parseTags, toTxtFile } from "../records.ts";
import type { BrainDeps } from "./deps.ts";
import { excludedFolders, isExcluded } from "./exclusions.ts";
import { brainStatus } from "./status.ts";

const share = (n: number, of: number) => (of === 0 ? 0 : Math.round((n / of) * 1000) / 1000);

/** 0 (nothing) to 4 (context, tags, folder, connection): how organised a note is. */
export function organisation(f: FileMetaRow, connected: ReadonlySet<string>): number {
  return (
    (f.context.trim() ? 1 : 0) +
    (parseTags(f.tags).length ? 1 : 0) +
    (f.folder_id ? 1 : 0) +
    (connected.has(f.id) ? 1 : 0)
  );
}

export async function connectedIds(tx: Tx, ownerId: string) {
  const rows = await tx.connections.touchingOwner(ownerId);
  const ids = new Set<string>();
  for (const c of rows) {
    ids.add(c.file_id);
    ids.add(c.target_file_id);
  }
  return { ids, count: rows.length };
}

export async function workspaceCoverage(tx: Tx, actor: Actor) {
  // The workspace is the caller's own notes: what an analysis may propose changes to.
  const files = (await tx.files.list({ ownerId: actor.userId })) as FileMetaRow[];
  const folders = await tx.folders.listOwned(actor.userId);
  const { ids: connected, count: connectionCount } = await connectedIds(tx, actor.userId);
  const excluded = await excludedFolders(tx, [actor.userId]);
  const vocabulary = new Map<string, number>();
  for (const f of files) for (const t of parseTags(f.tags)) vocabulary.set(t, (vocabulary.get(t) ?? 0) + 1);
  const n = files.length;
  const count = (pred: (f: FileMetaRow) => boolean) => files.filter(pred).length;
  const withContext = count((f) => f.context.trim() !== "");
  const withTags = count((f) => parseTags(f.tags).length > 0);
  const inFolders = count((f) => f.folder_id !== null);
  const linked = count((f) => connected.has(f.id));
  const fWithContext = folders.filter((f) => f.context.trim() !== "").length;
  const fWithTags = folders.filter((f) => parseTags(f.tags).length > 0).length;
  const least = files
    .map((f) => ({ f, score: organisation(f, connected) }))
    .sort((a, b) => a.score - b.score || (a.f.updated_at < b.f.updated_at ? 1 : -1))
    .slice(0, 10);
  return {
    workspace: {
      notes: n,
      folders: folders.length,
      bytes: files.reduce((s, f) => s + Number(f.size), 0),
      tags: vocabulary.size,
      connections: connectionCount,
      excludedFolders: folders.filter((f) => excluded.has(f.id)).map((f) => f.id),
      notesExcludedFromAi: count((f) => isExcluded(f, excluded)),
    },
    coverage: {
      notes: {
        withContext: { count: withContext, share: share(withContext, n) },
        withTags: { count: withTags, share: share(withTags, n) },
        inFolders: { count: inFolders, share: share(inFolders, n) },
        connected: { count: linked, share: share(linked, n) },
      },
      folders: {
        withContext: { count: fWithContext, share: share(fWithContext, folders.length) },
        withTags: { count: fWithTags, share: share(fWithTags, folders.length) },
      },
    },
    tagVocabulary: [...vocabulary.entries()]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .map(([tag, c]) => ({ tag, count: c })),
    leastOrganised: least.map(({ f, score }) => ({
      file: toTxtFile(f, "owner"),
      organisation: score,
      missing: [
        ...(f.context.trim() ? [] : ["context"]),
        ...(parseTags(f.tags).length ? [] : ["tags"]),
        ...(f.folder_id ? [] : ["folder"]),
        ...(connected.has(f.id) ? [] : ["connections"]),
      ],
    })),
  };
}

export async function getWorkspaceContext(tx: Tx, deps: BrainDeps, actor: Actor) {
  const status = await brainStatus(tx, deps, actor);
  const pending = await tx.proposals.list(actor.userId, "pending", 1000);
  return { ...(await workspaceCoverage(tx, actor)), brain: status, pendingProposals: pending.length };
}
