// The memory tool's commands as MCP tools over the notes: agents built on Anthropic's memory tool
// (view, create, str_replace, insert, delete, rename over a `/memories` directory) forward their
// calls unchanged — the same parameter names, the same refusals (str_replace of a missing or
// non-unique old_str changes nothing). `/memories` is the folder `memories`; every call goes
// through the same domain functions and access rules as the API, as the caller.
import { z } from "zod";
import { ServiceError } from "../domain/errors.ts";
import { createFile, deleteFile, getFile, updateFile } from "../domain/files.ts";
import { deleteFolder, updateFolder } from "../domain/folders.ts";
import { requireScope } from "../http/auth.ts";
import { linesOf, numbered, selectLines, splitLines } from "./lines.ts";
import { normalize, type Tree } from "./paths.ts";
import type { ToolKit } from "./toolKit.ts";

/** The folder agents see as `/memories`. */
export const MEMORY_ROOT = "memories";

const invalidPath = (given: string) =>
  new ServiceError(
    400,
    "invalid_path",
    `${given} is not a path under /${MEMORY_ROOT}.`,
    `Memory paths look like /${MEMORY_ROOT}/notes.md (no '..').`,
  );

/** `/memories/a/b.md` -> `memories/a/b.md` (the note path), refusing anything outside the root. */
export function memoryPath(given: string): string {
  if (given.split("/").some((s) => s.trim() === "..")) throw invalidPath(given);
  const p = normalize(given);
  if (p !== MEMORY_ROOT && !p.startsWith(`${MEMORY_ROOT}/`)) throw invalidPath(given);
  return p;
}

const shown = (p: string) => `/${p}`;

const notFound = (p: string) =>
  new ServiceError(
    404,
    "not_found",
    `The path ${shown(p)} does not exist.`,
    `memory_view /${MEMORY_ROOT} lists what exists.`,
  );

const size = (bytes: number) =>
  bytes < 1024
    ? `${bytes}`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(1)}K`
      : `${(bytes / 1048576).toFixed(1)}M`;

/** A note at a memory path, or a 404. */
function noteAt(tree: Tree, p: string) {
  const note = tree.fileByPath.get(p);
  if (!note) throw notFound(p);
  return note;
}

/** Every note and folder at or below a folder path. */
function below(tree: Tree, p: string) {
  const inside = (path: string) => path === p || path.startsWith(`${p}/`);
  return {
    files: tree.files.filter((f) => inside(f.path)),
    folders: tree.folders.filter((f) => inside(f.path)),
  };
}

const MAX_VIEW_CHARS = 20_000;

export function registerMemoryTools(kit: ToolKit): void {
  const { tool, read, write, ensureFolders } = kit;
  const pathArg = z.string().describe(`A path under /${MEMORY_ROOT}, e.g. /${MEMORY_ROOT}/notes.md.`);

  tool(
    "memory_view",
    "files:read",
    `Memory tool \`view\`: a directory under /${MEMORY_ROOT} (two levels, with sizes) or a file's lines, numbered (\`view_range\` [first, last], last -1 = end).`,
    {
      path: pathArg,
      view_range: z.tuple([z.number().int(), z.number().int()]).optional(),
    },
    true,
    async ({ path, view_range }) =>
      read(async (tx, tree) => {
        const p = memoryPath(path);
        const note = tree.fileByPath.get(p);
        if (note) {
          const { file } = await getFile(tx, kit.actor, note.id);
          const lines = splitLines(file.content);
          const { first, last } = selectLines(lines.length, { view_range });
          let body = numbered(lines.slice(first - 1, last), first);
          if (body.length > MAX_VIEW_CHARS)
            body = `${body.slice(0, MAX_VIEW_CHARS)}\n(truncated: give view_range to see the rest)`;
          return kit.text(`Here's the content of ${shown(p)} with line numbers:\n${body}`);
        }
        const { files, folders } = below(tree, p);
        if (p !== MEMORY_ROOT && folders.length === 0) throw notFound(p);
        const depth = (q: string) => q.split("/").length - p.split("/").length;
        const entries = [
          ...folders
            .filter((f) => f.path !== p && depth(f.path) <= 2)
            .map((f) => ({ path: f.path, bytes: 0, dir: true })),
          ...files
            .filter((f) => depth(f.path) <= 2)
            .map((f) => ({ path: f.path, bytes: f.size, dir: false })),
        ].sort((a, b) => a.path.localeCompare(b.path));
        const total = files.reduce((n, f) => n + f.size, 0);
        const lines = [
          `${size(total)}\t${shown(p)}`,
          ...entries.map((e) => `${size(e.bytes)}\t${shown(e.path)}${e.dir ? "/" : ""}`),
        ];
        return kit.text(
          `Here're the files and directories up to 2 levels deep in ${shown(p)}, excluding hidden items:\n${lines.join("\n")}`,
        );
      }),
  );

  tool(
    "memory_create",
    "files:write",
    `Memory tool \`create\`: a new file under /${MEMORY_ROOT} with \`file_text\` (missing directories are created). An existing file is never overwritten: edit it with memory_str_replace / memory_insert.`,
    { path: pathArg, file_text: z.string() },
    false,
    async ({ path, file_text }) =>
      write(async (tx, tree) => {
        const p = memoryPath(path);
        if (p === MEMORY_ROOT || tree.folderByPath.has(p)) throw invalidPath(path);
        if (tree.fileByPath.has(p)) {
          throw new ServiceError(
            409,
            "file_exists",
            `File ${shown(p)} already exists.`,
            "Edit it with memory_str_replace or memory_insert, or memory_delete it first.",
          );
        }
        const parts = p.split("/");
        const name = parts.pop()!;
        const folderId = await ensureFolders(tx, tree, parts);
        await createFile(tx, kit.actor, { name, content: file_text, folderId });
        return kit.text(`File created successfully at: ${shown(p)}`);
      }),
  );

  tool(
    "memory_str_replace",
    "files:write",
    "Memory tool `str_replace`: replace the one occurrence of `old_str` with `new_str`. Nothing changes when old_str is missing or occurs more than once (the lines are named).",
    { path: pathArg, old_str: z.string().min(1), new_str: z.string() },
    false,
    async ({ path, old_str, new_str }) =>
      write(async (tx, tree) => {
        const p = memoryPath(path);
        const { file } = await getFile(tx, kit.actor, noteAt(tree, p).id);
        const at = linesOf(file.content, old_str);
        if (at.length !== 1) {
          throw new ServiceError(
            409,
            at.length === 0 ? "text_not_found" : "text_ambiguous",
            at.length === 0
              ? `No replacement was performed, old_str \`${old_str}\` did not appear verbatim in ${shown(p)}.`
              : `No replacement was performed. Multiple occurrences of old_str \`${old_str}\` in lines: ${at.join(", ")}. Please ensure it is unique.`,
            "memory_view the file and give an old_str that occurs exactly once.",
          );
        }
        const start = file.content.indexOf(old_str);
        const content = file.content.slice(0, start) + new_str + file.content.slice(start + old_str.length);
        await updateFile(tx, kit.actor, file.id, { content }, [file.etag]);
        const lines = splitLines(content);
        const first = Math.max(1, at[0]! - 2);
        const last = Math.min(lines.length, at[0]! + new_str.split("\n").length + 1);
        return kit.text(`The memory file has been edited.\n${numbered(lines.slice(first - 1, last), first)}`);
      }),
  );

  tool(
    "memory_insert",
    "files:write",
    "Memory tool `insert`: insert `insert_text` after line `insert_line` (0 = at the top).",
    { path: pathArg, insert_line: z.number().int().min(0), insert_text: z.string() },
    false,
    async ({ path, insert_line, insert_text }) =>
      write(async (tx, tree) => {
        const p = memoryPath(path);
        const { file } = await getFile(tx, kit.actor, noteAt(tree, p).id);
        const lines = splitLines(file.content);
        if (insert_line > lines.length) {
          throw new ServiceError(
            400,
            "invalid_range",
            `insert_line ${insert_line} is past the end of ${shown(p)} (${lines.length} lines).`,
            `Give insert_line between 0 and ${lines.length}.`,
          );
        }
        const added = splitLines(insert_text.endsWith("\n") ? insert_text : `${insert_text}\n`);
        const next = [...lines.slice(0, insert_line), ...added, ...lines.slice(insert_line)];
        const trailing = file.content === "" || file.content.endsWith("\n") ? "\n" : "";
        await updateFile(tx, kit.actor, file.id, { content: next.join("\n") + trailing }, [file.etag]);
        return kit.text(
          `The file ${shown(p)} has been edited: ${added.length} line(s) inserted after line ${insert_line}.`,
        );
      }),
  );

  tool(
    "memory_delete",
    "files:write",
    `Memory tool \`delete\`: a file, or a directory with everything in it (all or nothing). /${MEMORY_ROOT} itself is kept.`,
    { path: pathArg },
    false,
    async ({ path }) =>
      write(async (tx, tree) => {
        const p = memoryPath(path);
        const note = tree.fileByPath.get(p);
        if (note) {
          await deleteFile(tx, kit.actor, note.id);
          return kit.text(`File deleted: ${shown(p)}`);
        }
        if (p === MEMORY_ROOT) {
          throw new ServiceError(
            400,
            "invalid_path",
            `/${MEMORY_ROOT} itself is not deleted.`,
            "Delete the files or directories inside it.",
          );
        }
        const { files, folders } = below(tree, p);
        if (folders.length === 0) throw notFound(p);
        requireScope(kit.actor, "folders:write");
        for (const f of files) await deleteFile(tx, kit.actor, f.id);
        // Deepest first: each folder is empty when it goes, so nothing moves up a level.
        for (const f of [...folders].sort((a, b) => b.path.length - a.path.length))
          await deleteFolder(tx, kit.actor, f.id);
        return kit.text(`Directory deleted: ${shown(p)} (${files.length} file(s))`);
      }),
  );

  tool(
    "memory_rename",
    "files:write",
    "Memory tool `rename`: move or rename a file or directory (`old_path` to `new_path`; missing directories are created, an existing new_path is never replaced).",
    { old_path: pathArg, new_path: pathArg },
    false,
    async ({ old_path, new_path }) =>
      write(async (tx, tree) => {
        const from = memoryPath(old_path);
        const to = memoryPath(new_path);
        if (from === MEMORY_ROOT || to === MEMORY_ROOT || to.startsWith(`${from}/`))
          throw invalidPath(new_path);
        if (tree.fileByPath.has(to) || tree.folderByPath.has(to)) {
          throw new ServiceError(
            409,
            "file_exists",
            `${shown(to)} already exists.`,
            "Choose a new_path that does not exist, or memory_delete it first.",
          );
        }
        const parts = to.split("/");
        const name = parts.pop()!;
        const note = tree.fileByPath.get(from);
        const folder = tree.folderByPath.get(from);
        if (!note && !folder) throw notFound(from);
        const parentId = await ensureFolders(tx, tree, parts);
        if (note) await updateFile(tx, kit.actor, note.id, { name, folderId: parentId });
        else {
          requireScope(kit.actor, "folders:write");
          await updateFolder(tx, kit.actor, folder!.id, { name, parentFolderId: parentId });
        }
        return kit.text(`Renamed ${shown(from)} to ${shown(to)}`);
      }),
  );
}
