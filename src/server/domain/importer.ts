// Import many files with folder paths in one request (a whole notes folder), in one transaction.
import type { FileMetaRow, FolderRow } from "../../store/repos/rows.ts";
import type { Tx } from "../../store/store.ts";
import { requireFolder } from "./access.ts";
import type { Actor } from "./actor.ts";
import { invalid, ServiceError } from "./errors.ts";
import { createFile, type FileType, updateFile } from "./files.ts";
import { createFolder } from "./folders.ts";
import { checkContext, checkName, checkTags, LIMITS } from "./limits.ts";

export interface ImportItem {
  /** `a/b/note.md`: folders are created as needed under the base folder. */
  path: string;
  content?: string;
  context?: string;
  tags?: string[];
  fileType?: FileType;
}

/**
 * What to do when a file of that name already exists in its folder: update it, leave it (skip),
 * keep both (copy: the new file gets the first free name `note (1).md`, `note (2).md`, ...), or fail.
 */
export type OnExisting = "update" | "skip" | "copy" | "fail";

/** `note (n).md`: the n-th name a copy of `note.md` may take. */
function copyCandidate(name: string, n: number): string {
  const dot = name.lastIndexOf(".");
  const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ""];
  return `${stem} (${n})${ext}`;
}

/** Names looked up per query (bound parameters stay well under both stores' limits). */
const LOOKUP_BATCH = 500;

export interface ImportInput {
  files: ImportItem[];
  folderId?: string | null;
  onExisting?: OnExisting;
}

export async function importFiles(tx: Tx, actor: Actor, input: ImportInput) {
  if (input.files.length === 0) throw invalid("files", "must contain at least one file");
  if (input.files.length > LIMITS.importFiles) {
    throw new ServiceError(
      413,
      "payload_too_large",
      `files: at most ${LIMITS.importFiles} files per import.`,
      `Split the import into requests of at most ${LIMITS.importFiles} files.`,
    );
  }
  const onExisting = input.onExisting ?? "update";
  const baseFolder = input.folderId
    ? (await requireFolder(tx, actor, input.folderId, "writer")).folder
    : null;
  const base = baseFolder?.id ?? null;
  // Files under the base folder are its owner's (a shared folder's too); at the top level, the actor's.
  const ownerId = baseFolder?.owner_id ?? actor.userId;
  const folderCache = new Map<string, string | null>([["", base]]);
  const createdFolders: { path: string; id: string }[] = [];

  // Finds or creates each folder along the path; an existing folder of that name is reused.
  const folderFor = async (dirs: string[]): Promise<string | null> => {
    let parent = base;
    let path = "";
    for (const name of dirs) {
      path = path ? `${path}/${name}` : name;
      const cached = folderCache.get(path);
      if (cached !== undefined) {
        parent = cached;
        continue;
      }
      const siblings: FolderRow[] = parent
        ? await tx.folders.children(parent)
        : await tx.folders.rootFoldersOf(actor.userId);
      let folder = siblings.find((f) => f.name === name);
      if (!folder) {
        folder = (await createFolder(tx, actor, { name, parentFolderId: parent })).folder;
        createdFolders.push({ path, id: folder.id });
      }
      folderCache.set(path, folder.id);
      parent = folder.id;
    }
    return parent;
  };

  // Every item checked and its folder found first, so that each folder's existing files of the
  // import's names are looked up at once (by name: an import's cost is its own files, not the
  // folders' sizes).
  const planned: { item: ImportItem; name: string; folderId: string | null }[] = [];
  for (const [index, item] of input.files.entries()) {
    const field = `files[${index}].path`;
    // A path is relative, one name per segment, and ends in the file's name: `/etc/x.md`, `a//b.md`
    // and `trail/` are refused rather than guessed at.
    if (item.path.startsWith("/"))
      throw invalid(field, "must be relative (no leading '/')", "Give paths like folder/note.md.");
    if (item.path.endsWith("/"))
      throw invalid(field, "must end with the file's name, not '/'", "Give paths like folder/note.md.");
    const parts = item.path.split("/");
    if (parts.some((p) => p === ""))
      throw invalid(field, "must not have an empty segment ('//')", "Give paths like folder/note.md.");
    for (const p of parts) checkName(field, p);
    // Checked here too so that an error names the item, not just `context`.
    if (item.context !== undefined) checkContext(`files[${index}].context`, item.context);
    if (item.tags !== undefined) checkTags(`files[${index}].tags`, item.tags);
    const name = parts.pop()!;
    planned.push({ item, name, folderId: await folderFor(parts) });
  }

  // Existing files by name, per folder (the first by id when a name is taken twice).
  const namesByFolder = new Map<string | null, Map<string, FileMetaRow>>();
  const wanted = new Map<string | null, Set<string>>();
  for (const { name, folderId } of planned) {
    if (!wanted.has(folderId)) wanted.set(folderId, new Set());
    wanted.get(folderId)!.add(name);
  }
  for (const [folderId, wantedNames] of wanted) {
    const names = new Map<string, FileMetaRow>();
    const all = [...wantedNames];
    for (let i = 0; i < all.length; i += LOOKUP_BATCH)
      for (const r of await tx.files.named(ownerId, folderId, all.slice(i, i + LOOKUP_BATCH)))
        if (!names.has(r.name)) names.set(r.name, r);
    namesByFolder.set(folderId, names);
  }

  // onExisting "copy": the first `note (n).md` neither this import nor the folder holds.
  const copyName = async (folderId: string | null, name: string, names: Map<string, FileMetaRow>) => {
    for (let n = 1; ; n++) {
      const candidate = copyCandidate(name, n);
      if (names.has(candidate)) continue;
      const [taken] = await tx.files.named(ownerId, folderId, [candidate]);
      if (!taken) return candidate;
      names.set(candidate, taken);
    }
  };

  const results: { path: string; id: string; name: string; status: string; etag: string }[] = [];
  for (const [index, { item, name, folderId }] of planned.entries()) {
    const names = namesByFolder.get(folderId)!;
    const existing = names.get(name);
    if (existing && onExisting === "fail") {
      throw new ServiceError(
        409,
        "conflict",
        `${item.path} already exists.`,
        'Pass onExisting "update", "skip" or "copy".',
        {
          index,
          path: item.path,
          fileId: existing.id,
        },
      );
    }
    if (existing && onExisting === "skip") {
      results.push({ path: item.path, id: existing.id, name, status: "skipped", etag: existing.etag });
      continue;
    }
    if (existing && onExisting === "update") {
      const { file } = await updateFile(tx, actor, existing.id, {
        content: item.content ?? "",
        context: item.context,
        tags: item.tags,
        fileType: item.fileType,
      });
      names.set(name, file);
      const status = file.revision === existing.revision ? "unchanged" : "updated";
      results.push({ path: item.path, id: file.id, name, status, etag: file.etag });
      continue;
    }
    const copy = existing !== undefined; // onExisting "copy": keep both
    const { file } = await createFile(tx, actor, {
      name: copy ? await copyName(folderId, name, names) : name,
      content: item.content,
      context: item.context,
      tags: item.tags,
      fileType: item.fileType,
      folderId,
    });
    names.set(file.name, file);
    results.push({
      path: item.path,
      id: file.id,
      name: file.name,
      status: copy ? "copied" : "created",
      etag: file.etag,
    });
  }
  const count = (s: string) => results.filter((r) => r.status === s).length;
  return {
    files: results,
    folders: createdFolders,
    summary: {
      created: count("created"),
      updated: count("updated"),
      unchanged: count("unchanged"),
      skipped: count("skipped"),
      copied: count("copied"),
      foldersCreated: createdFolders.length,
    },
  };
}
