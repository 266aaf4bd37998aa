// A deleted note brought back as it was (its id, context, tags, history and connections) with new
// content as its next version: what a client that saves by DELETE then PUT meant (WebDAV's
// tombstones, src/dav/serviceTombstones.ts). The snapshot is taken in the deleting unit of work.
import type { ConnectionRow, FileRow, VersionRow } from "../../store/repos/rows.ts";
import type { Tx } from "../../store/store.ts";
import type { Actor } from "./actor.ts";
import { publishFile } from "./feed.ts";
import { type FileResult, updateFile } from "./files.ts";
import { LIMITS } from "./limits.ts";
import { indexNote } from "./links/linkIndex.ts";

export interface FileSnapshot {
  file: FileRow;
  versions: VersionRow[];
  connections: ConnectionRow[];
  setTags: string[] | undefined;
  /** What it holds in memory (bodies of the note and its versions), to bound the tombstones. */
  bytes: number;
}

/** Everything a revival needs of the note, read before it is deleted (undefined: not there). */
export async function snapshotFile(tx: Tx, id: string): Promise<FileSnapshot | undefined> {
  const file = await tx.files.byId(id);
  if (!file) return undefined;
  const versions: VersionRow[] = [];
  for (const v of await tx.versions.page(id, undefined, LIMITS.versionsKept)) {
    const row = await tx.versions.byNumber(id, v.version_number);
    if (row) versions.push(row);
  }
  const bytes = file.size + versions.reduce((n, v) => n + v.byte_size, 0);
  return {
    file,
    versions,
    connections: await tx.connections.forFile(id),
    setTags: await tx.links.setTags(id),
    bytes,
  };
}

/**
 * Puts the note back where it was under its id, then writes `content` as its next version.
 * undefined when its place or id has been taken meanwhile (the caller then makes a new note).
 */
export async function reviveFile(
  tx: Tx,
  actor: Actor,
  snapshot: FileSnapshot,
  content: string,
): Promise<FileResult | undefined> {
  const { file } = snapshot;
  if (await tx.files.metaById(file.id)) return undefined;
  if ((await tx.files.named(file.owner_id, file.folder_id, [file.name])).length) return undefined;
  if (file.folder_id && !(await tx.folders.byId(file.folder_id))) return undefined;
  await tx.files.insert(file);
  for (const v of snapshot.versions) await tx.versions.insert(v);
  for (const c of snapshot.connections) {
    const other = c.file_id === file.id ? c.target_file_id : c.file_id;
    if (await tx.files.metaById(other)) await tx.connections.insert(c);
  }
  if (snapshot.setTags) await tx.links.putSetTags(file.id, snapshot.setTags);
  await indexNote(tx, file);
  await publishFile(tx, { ...file, revision: 1 });
  return updateFile(tx, actor, file.id, { content });
}
