// Paths for agents: `notes/ideas/today.md` <-> ids, over what the caller can see (flatIndex, the
// same listing the API serves). Agents think in paths; the API in ids; tools accept both.
import type { TxtFile, TxtFolder } from "../../lib/apiTypes.ts";
import type { Tx } from "../../store/store.ts";
import type { Actor } from "../domain/actor.ts";
import { ServiceError } from "../domain/errors.ts";
import { flatIndex } from "../domain/listing.ts";

export interface Tree {
  files: (TxtFile & { path: string })[];
  folders: (TxtFolder & { path: string })[];
  folderByPath: Map<string, TxtFolder & { path: string }>;
  fileByPath: Map<string, TxtFile & { path: string }>;
}

export const normalize = (path: string) =>
  path
    .split("/")
    .map((s) => s.trim())
    .filter((s) => s && s !== ".")
    .join("/");

export async function loadTree(tx: Tx, actor: Actor): Promise<Tree> {
  const index = await flatIndex(tx, actor);
  const byId = new Map(index.folders.map((f) => [f.id, f]));
  const pathOf = (id: string | null, seen = new Set<string>()): string => {
    const f = id ? byId.get(id) : undefined;
    if (!f || seen.has(f.id)) return "";
    seen.add(f.id);
    const parent = pathOf(f.parentFolderId, seen);
    return parent ? `${parent}/${f.name}` : f.name;
  };
  const folders = index.folders.map((f) => ({ ...f, path: pathOf(f.id) }));
  const files = index.files.map((f) => {
    const dir = pathOf(f.folderId);
    return { ...f, path: dir ? `${dir}/${f.name}` : f.name };
  });
  return {
    files,
    folders,
    folderByPath: new Map(folders.map((f) => [f.path, f])),
    fileByPath: new Map(files.map((f) => [f.path, f])),
  };
}

/** A note by `id` or `path`: its id and path, or a 404 in the API's words. */
export function findNote(tree: Tree, ref: { id?: string; path?: string }): TxtFile & { path: string } {
  const file = ref.id
    ? tree.files.find((f) => f.id === ref.id)
    : ref.path !== undefined
      ? tree.fileByPath.get(normalize(ref.path))
      : undefined;
  if (!file) {
    throw new ServiceError(
      404,
      "not_found",
      `No note ${ref.id ?? ref.path ?? "(none given)"} that you can see.`,
      "Give `path` (as list_notes shows it) or `id`; list_notes and search_notes find notes.",
    );
  }
  return file;
}

/** The folder a path names ("" = the root), or a 404. */
export function findFolder(tree: Tree, path: string): (TxtFolder & { path: string }) | null {
  const p = normalize(path);
  if (!p) return null;
  const folder = tree.folderByPath.get(p);
  if (!folder) {
    throw new ServiceError(
      404,
      "not_found",
      `No folder ${p} that you can see.`,
      "list_notes without a folder shows the top level.",
    );
  }
  return folder;
}
