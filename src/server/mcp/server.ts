// The MCP server: notes as memory for agents. Each tool calls the same domain functions as the
// API, as the same actor, behind the same scope checks, so access rules are exactly the API's.
// Results are small and paged (some clients refuse results over 25,000 tokens); edits never
// silently overwrite (an existing note needs ifMatch, or use append/replace_text).
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Store, Tx } from "../../store/store.ts";
import type { Actor } from "../domain/actor.ts";
import { createComment } from "../domain/comments.ts";
import { connectFiles } from "../domain/connections.ts";
import { ServiceError } from "../domain/errors.ts";
import { createFile, deleteFile, getFile, updateFile } from "../domain/files.ts";
import { createFolder } from "../domain/folders.ts";
import { relatedFiles } from "../domain/related.ts";
import { listSkills } from "../domain/skills.ts";
import { createSuggestion } from "../domain/suggestions.ts";
import { listVersions } from "../domain/versions.ts";
import { requireScope } from "../http/auth.ts";
import { selectLines, splitLines } from "./lines.ts";
import { registerMemoryTools } from "./memoryTools.ts";
import { findFolder, findNote, loadTree, normalize, type Tree } from "./paths.ts";
import { searchNotes } from "./textSearch.ts";
import type { ToolRegistrar } from "./toolKit.ts";

/** Longest text a tool returns at once (~5,000 tokens); longer content is paged with `offset`. */
export const MAX_CHARS = 20_000;

export interface McpDeps {
  store: Store;
  actor: Actor;
  /** Base URL clients reach this server at (for links in search results). */
  baseUrl: string;
  version: string;
  /** The plain-text reference pages, by slug (files, folders, ...). */
  reference: () => Map<string, string>;
}

const Ref = {
  path: z.string().optional().describe("The note's path, e.g. `projects/plan.md` (as list_notes shows it)."),
  id: z.string().optional().describe("The note's id (f_...), instead of path."),
};

const text = (t: string): CallToolResult => ({ content: [{ type: "text", text: t }] });
const json = (v: unknown): CallToolResult => text(JSON.stringify(v, null, 1));

function toolError(err: unknown): CallToolResult {
  if (err instanceof ServiceError) {
    return {
      isError: true,
      content: [{ type: "text", text: `${err.code}: ${err.message}\nResolution: ${err.resolution}` }],
    };
  }
  throw err;
}

export function buildMcpServer(deps: McpDeps): McpServer {
  const { store, actor } = deps;
  const server = new McpServer(
    { name: "txtfs", version: deps.version },
    {
      instructions:
        "txtfs holds the user's plain-text and Markdown notes in folders. Use it as memory: " +
        "workspace_context first, search_notes or list_notes to find notes, read_note to read, " +
        "append_note or write_note (with the ifMatch etag you read) to write, connect_notes to link " +
        "related notes, comment/suggest on notes that are not yours. Paths look like `folder/note.md`.",
    },
  );
  const write = <T>(fn: (tx: Tx) => Promise<T>) =>
    store.transaction(fn, { serializeOn: [`account:${actor.userId}`] });
  const read = <T>(fn: (tx: Tx, tree: Tree) => Promise<T>) =>
    store.read(async (tx) => fn(tx, await loadTree(tx, actor)));

  /** Registers a tool whose handler runs after its scope check; ServiceErrors become tool errors. */
  const tool: ToolRegistrar = (name, scope, description, shape, readOnly, run) => {
    server.registerTool(
      name,
      { description, inputSchema: shape, annotations: { readOnlyHint: readOnly, openWorldHint: false } },
      // biome-ignore lint/suspicious/noExplicitAny: the SDK's callback type is generic over the shape
      (async (args: any) => {
        try {
          requireScope(actor, scope);
          return await run(args);
        } catch (err) {
          return toolError(err);
        }
      }) as never,
    );
  };

  tool(
    "workspace_context",
    "files:read",
    "Overview of the workspace: folders with their context and tags, note counts, and skills (SKILL.md). Start here.",
    {},
    true,
    async () =>
      read(async (tx, tree) => {
        const skills = (await listSkills(tx, actor)).skills;
        return json({
          user: { email: actor.email, name: actor.name },
          notes: tree.files.length,
          folders: tree.folders.slice(0, 200).map((f) => ({
            path: f.path,
            context: f.context || undefined,
            tags: f.tags.length ? f.tags : undefined,
            notes: f.fileCount,
          })),
          skills: skills
            .slice(0, 50)
            .map((s) => ({ skill: s.skill, path: s.path, scope: s.scope, description: s.description })),
        });
      }),
  );

  tool(
    "list_notes",
    "files:read",
    "List notes (metadata only) in a folder (default: everywhere), paged with `cursor`.",
    {
      folder: z.string().optional().describe("Folder path; omit for all notes."),
      cursor: z.string().optional().describe("From a previous call's nextCursor."),
      limit: z.number().int().min(1).max(200).optional().describe("Default 50."),
    },
    true,
    async ({ folder, cursor, limit }) =>
      read(async (_tx, tree) => {
        const dir = folder !== undefined ? findFolder(tree, folder) : undefined;
        const notes = tree.files
          .filter((f) =>
            dir === undefined ? true : dir === null ? f.folderId === null : f.path.startsWith(`${dir.path}/`),
          )
          .sort((a, b) => a.path.localeCompare(b.path));
        const start = Number(cursor ?? 0) || 0;
        const n = limit ?? 50;
        const page = notes.slice(start, start + n);
        return json({
          notes: page.map((f) => ({
            path: f.path,
            id: f.id,
            size: f.size,
            updatedAt: f.updatedAt,
            role: f.role,
            tags: f.tags,
          })),
          nextCursor: start + n < notes.length ? String(start + n) : null,
          total: notes.length,
        });
      }),
  );

  tool(
    "read_note",
    "files:read",
    `Read a note's text (at most ${MAX_CHARS} characters at a time; \`offset\` pages on), or some of its lines: \`head\` (first N), \`tail\` (last N) or \`view_range\` [first, last] (1-based, last -1 = end). Returns its etag for ifMatch.`,
    {
      ...Ref,
      offset: z.number().int().min(0).optional(),
      head: z.number().int().min(1).optional().describe("Only the first N lines."),
      tail: z.number().int().min(1).optional().describe("Only the last N lines."),
      view_range: z
        .tuple([z.number().int(), z.number().int()])
        .optional()
        .describe("Only lines first..last (1-based, inclusive; last -1 = to the end)."),
    },
    true,
    async ({ path, id, offset, head, tail, view_range }) =>
      read(async (tx, tree) => {
        const meta = findNote(tree, { path, id });
        const { file } = await getFile(tx, actor, meta.id);
        let content = file.content;
        let header = "";
        if (head !== undefined || tail !== undefined || view_range !== undefined) {
          const lines = splitLines(file.content);
          const { first, last } = selectLines(lines.length, { head, tail, view_range });
          content = lines.slice(first - 1, last).join("\n");
          header = `\nlines: ${first}-${last} of ${lines.length}`;
        }
        const from = offset ?? 0;
        const chunk = content.slice(from, from + MAX_CHARS);
        const more = from + chunk.length < content.length;
        return text(
          `path: ${meta.path}\nid: ${file.id}\netag: ${file.etag}\nchars: ${file.content.length}${header}` +
            `${more ? `\nnextOffset: ${from + chunk.length}` : ""}\n---\n${chunk}`,
        );
      }),
  );

  tool(
    "write_note",
    "files:write",
    "Create a note at `path` (missing folders are created), or replace an existing note's content — which needs `ifMatch` (the etag read_note returned), so nothing is overwritten unseen.",
    {
      ...Ref,
      content: z.string(),
      ifMatch: z
        .string()
        .optional()
        .describe("The etag from read_note; required to replace an existing note."),
      context: z.string().optional(),
      tags: z.array(z.string()).optional(),
    },
    false,
    async ({ path, id, content, ifMatch, context, tags }) => {
      const out = await write(async (tx) => {
        const tree = await loadTree(tx, actor);
        const existing = id
          ? findNote(tree, { id })
          : path
            ? tree.fileByPath.get(normalize(path))
            : undefined;
        if (existing) {
          if (!ifMatch) {
            throw new ServiceError(
              428,
              "if_match_required",
              `${existing.path} exists; replacing it needs ifMatch.`,
              "read_note it, then write_note with its etag as ifMatch — or use append_note / replace_text.",
            );
          }
          const { file } = await updateFile(tx, actor, existing.id, { content, context, tags }, [ifMatch]);
          return { path: existing.path, id: file.id, etag: file.etag, created: false };
        }
        if (!path) {
          throw new ServiceError(
            400,
            "validation_failed",
            "path is required to create a note.",
            "Give `path`.",
          );
        }
        const p = normalize(path);
        const parts = p.split("/");
        const name = parts.pop()!;
        const folderId = await ensureFolders(tx, tree, parts);
        const { file } = await createFile(tx, actor, { name, content, context, tags, folderId });
        return { path: p, id: file.id, etag: file.etag, created: true };
      });
      return json(out);
    },
  );

  tool(
    "append_note",
    "files:write",
    "Append `content` to the end of a note (atomic: never loses a concurrent edit).",
    {
      ...Ref,
      content: z.string().optional().describe("The text to append."),
      text: z.string().optional().describe("Deprecated: the former name of `content`."),
    },
    false,
    async ({ path, id, content, text: legacy }) =>
      json(
        await write(async (tx) => {
          if ((content === undefined) === (legacy === undefined)) {
            throw new ServiceError(
              400,
              "validation_failed",
              "append_note takes `content` (the text to append).",
              "Give `content` (`text` is its deprecated former name; not both).",
            );
          }
          const addition = (content ?? legacy)!;
          const meta = findNote(await loadTree(tx, actor), { path, id });
          const { file } = await getFile(tx, actor, meta.id);
          const sep = file.content && !file.content.endsWith("\n") ? "\n" : "";
          const next = await updateFile(tx, actor, meta.id, { content: file.content + sep + addition }, [
            file.etag,
          ]);
          return { path: meta.path, id: meta.id, etag: next.file.etag, chars: next.file.content.length };
        }),
      ),
  );

  tool(
    "replace_text",
    "files:write",
    "Replace one exact occurrence of `find` with `replace` in a note (fails if `find` is missing or ambiguous).",
    { ...Ref, find: z.string().min(1), replace: z.string() },
    false,
    async ({ path, id, find, replace }) =>
      json(
        await write(async (tx) => {
          const meta = findNote(await loadTree(tx, actor), { path, id });
          const { file } = await getFile(tx, actor, meta.id);
          const at = file.content.indexOf(find);
          if (at === -1 || file.content.indexOf(find, at + 1) !== -1) {
            throw new ServiceError(
              409,
              at === -1 ? "text_not_found" : "text_ambiguous",
              at === -1 ? "`find` does not occur in the note." : "`find` occurs more than once.",
              "read_note again and give a longer, unique `find`.",
            );
          }
          const content = file.content.slice(0, at) + replace + file.content.slice(at + find.length);
          const next = await updateFile(tx, actor, meta.id, { content }, [file.etag]);
          return { path: meta.path, id: meta.id, etag: next.file.etag };
        }),
      ),
  );

  tool(
    "move_note",
    "files:write",
    "Move or rename a note to `to` (a full path; its folder must exist).",
    { ...Ref, to: z.string().min(1) },
    false,
    async ({ path, id, to }) =>
      json(
        await write(async (tx) => {
          const tree = await loadTree(tx, actor);
          const meta = findNote(tree, { path, id });
          const parts = normalize(to).split("/");
          const name = parts.pop()!;
          const folder = findFolder(tree, parts.join("/"));
          const { file } = await updateFile(tx, actor, meta.id, { name, folderId: folder?.id ?? null });
          return { from: meta.path, to: normalize(to), id: file.id, etag: file.etag };
        }),
      ),
  );

  tool(
    "delete_note",
    "files:write",
    "Delete a note (owner only). Give ifMatch to delete only the version you read.",
    { ...Ref, ifMatch: z.string().optional() },
    false,
    async ({ path, id, ifMatch }) =>
      json(
        await write(async (tx) => {
          const meta = findNote(await loadTree(tx, actor), { path, id });
          await deleteFile(tx, actor, meta.id, ifMatch ? [ifMatch] : undefined);
          return { deleted: meta.path, id: meta.id };
        }),
      ),
  );

  tool(
    "search_notes",
    "files:read",
    "Full-text search over the notes you can read (names, context, tags, content); every word must match.",
    { query: z.string().min(1), limit: z.number().int().min(1).max(50).optional() },
    true,
    async ({ query, limit }) =>
      read(async (tx, tree) => json({ results: await searchNotes(tx, actor, tree, query, limit ?? 10) })),
  );

  tool(
    "get_metadata",
    "files:read",
    "A note's context, tags, type and timestamps (no content).",
    Ref,
    true,
    async ({ path, id }) =>
      read(async (_tx, tree) => {
        const f = findNote(tree, { path, id });
        return json({
          path: f.path,
          id: f.id,
          context: f.context,
          tags: f.tags,
          type: f.type,
          size: f.size,
          updatedAt: f.updatedAt,
          role: f.role,
          etag: f.etag,
        });
      }),
  );

  tool(
    "set_metadata",
    "files:write",
    "Set a note's context (free text, max 4000 chars) and/or tags (max 16); the content is untouched.",
    { ...Ref, context: z.string().optional(), tags: z.array(z.string()).optional() },
    false,
    async ({ path, id, context, tags }) =>
      json(
        await write(async (tx) => {
          const meta = findNote(await loadTree(tx, actor), { path, id });
          const { file } = await updateFile(tx, actor, meta.id, { context, tags });
          return { path: meta.path, context: file.context, tags: JSON.parse(file.tags), etag: file.etag };
        }),
      ),
  );

  tool(
    "connect_notes",
    "files:write",
    "Connect a note to another (`to`) with a reason (max 500 chars); creates or updates the connection.",
    { ...Ref, to: z.string().describe("Path or id of the other note."), reason: z.string().optional() },
    false,
    async ({ path, id, to, reason }) =>
      json(
        await write(async (tx) => {
          const tree = await loadTree(tx, actor);
          const from = findNote(tree, { path, id });
          const target = to.startsWith("f_") ? findNote(tree, { id: to }) : findNote(tree, { path: to });
          const out = await connectFiles(tx, actor, from.id, { targetFileId: target.id, reason });
          return { from: from.path, to: target.path, reason: out.connection.reason, created: out.created };
        }),
      ),
  );

  tool(
    "related_notes",
    "files:read",
    "Notes related to a note, ranked, each with its reasons (explicit connection, shared tags, same folder).",
    Ref,
    true,
    async ({ path, id }) =>
      read(async (tx, tree) => {
        const meta = findNote(tree, { path, id });
        const related = await relatedFiles(tx, actor, meta.id);
        const pathOf = new Map(tree.files.map((f) => [f.id, f.path]));
        return json({
          note: meta.path,
          related: related.connections
            .slice(0, 30)
            .map((c) => ({ path: pathOf.get(c.file.id) ?? c.file.name, id: c.file.id, reasons: c.reasons })),
        });
      }),
  );

  tool(
    "list_skills",
    "files:read",
    "Agent skills: every SKILL.md you can read, with scope, project and agent from its path.",
    {},
    true,
    async () => read(async (tx) => json({ skills: (await listSkills(tx, actor)).skills.slice(0, 100) })),
  );

  tool(
    "comment",
    "collaboration:write",
    "Comment on a note, optionally on an exact quote of its text (readers may comment).",
    { ...Ref, body: z.string().min(1), quote: z.string().optional() },
    false,
    async ({ path, id, body, quote }) =>
      json(
        await write(async (tx) => {
          const meta = findNote(await loadTree(tx, actor), { path, id });
          const { file } = await getFile(tx, actor, meta.id);
          const at = quote ? file.content.indexOf(quote) : -1;
          if (quote && at === -1)
            throw new ServiceError(
              409,
              "text_not_found",
              "`quote` does not occur in the note.",
              "Quote the text exactly.",
            );
          const sel = quote
            ? { selection_start: at, selection_end: at + quote.length, selected_text: quote }
            : {};
          const out = await createComment(tx, actor, meta.id, { body, ...sel });
          return { path: meta.path, comment: out.comment.id };
        }),
      ),
  );

  tool(
    "suggest",
    "collaboration:write",
    "Suggest replacing an exact passage (`find`) of a note with `replace`, for its owner to accept (instead of overwriting).",
    { ...Ref, find: z.string().min(1), replace: z.string() },
    false,
    async ({ path, id, find, replace }) =>
      json(
        await write(async (tx) => {
          const meta = findNote(await loadTree(tx, actor), { path, id });
          const { file } = await getFile(tx, actor, meta.id);
          const at = file.content.indexOf(find);
          if (at === -1)
            throw new ServiceError(
              409,
              "text_not_found",
              "`find` does not occur in the note.",
              "Quote the text exactly.",
            );
          const out = await createSuggestion(tx, actor, meta.id, {
            selection_start: at,
            selection_end: at + find.length,
            suggested_text: replace,
            original_text: find,
          });
          return { path: meta.path, suggestion: out.suggestion.id, status: out.suggestion.status };
        }),
      ),
  );

  tool(
    "list_versions",
    "files:read",
    "A note's version history, newest first (no bodies).",
    { ...Ref, limit: z.number().int().min(1).max(50).optional() },
    true,
    async ({ path, id, limit }) =>
      read(async (tx, tree) => {
        const meta = findNote(tree, { path, id });
        const out = await listVersions(tx, actor, meta.id, { limit: limit ?? 20 });
        return json({
          path: meta.path,
          versions: out.versions.map((v) => ({
            version: v.version_number,
            at: v.created_at,
            by: v.author_name,
            source: v.source,
            label: v.label,
            bytes: v.byte_size,
          })),
          hasMore: out.hasMore,
        });
      }),
  );

  // The two tools some MCP clients use exclusively (deep-research style): search, then fetch by id.
  tool(
    "search",
    "files:read",
    "Search the user's notes; returns ids to pass to fetch.",
    { query: z.string().min(1) },
    true,
    async ({ query }) =>
      read(async (tx, tree) =>
        json({
          results: (await searchNotes(tx, actor, tree, query, 10)).map((h) => ({
            id: h.id,
            title: h.path,
            text: h.snippet,
            url: `${deps.baseUrl}/api/v1/files/${h.id}`,
          })),
        }),
      ),
  );
  tool(
    "fetch",
    "files:read",
    `Fetch one note by id (from search): its full text, at most ${MAX_CHARS} characters.`,
    { id: z.string().min(1) },
    true,
    async ({ id }) =>
      read(async (tx, tree) => {
        const meta = findNote(tree, { id });
        const { file } = await getFile(tx, actor, id);
        return json({
          id,
          title: meta.path,
          text: file.content.slice(0, MAX_CHARS),
          url: `${deps.baseUrl}/api/v1/files/${id}`,
          metadata: {
            context: file.context,
            tags: JSON.parse(file.tags),
            etag: file.etag,
            truncated: file.content.length > MAX_CHARS,
          },
        });
      }),
  );

  // Resources: notes as txtfs://notes/<path>, and the plain-text reference pages.
  server.registerResource(
    "note",
    new ResourceTemplate("txtfs://notes/{+path}", {
      list: async () => {
        requireScope(actor, "files:read");
        const tree = await store.read((tx) => loadTree(tx, actor));
        return {
          resources: tree.files.slice(0, 200).map((f) => ({
            uri: `txtfs://notes/${f.path}`,
            name: f.path,
            mimeType: f.type === "md" ? "text/markdown" : "text/plain",
          })),
        };
      },
    }),
    { title: "Note", description: "A note's text by path." },
    async (uri, vars) => {
      requireScope(actor, "files:read");
      const path = decodeURIComponent(String(vars.path));
      const out = await read(async (tx, tree) => {
        const meta = findNote(tree, { path });
        return { meta, file: (await getFile(tx, actor, meta.id)).file };
      });
      return {
        contents: [
          {
            uri: uri.href,
            mimeType: out.meta.type === "md" ? "text/markdown" : "text/plain",
            text: out.file.content.slice(0, MAX_CHARS),
          },
        ],
      };
    },
  );
  for (const [slug, page] of deps.reference()) {
    server.registerResource(
      `reference-${slug}`,
      `txtfs://reference/${slug}.txt`,
      { title: `txtfs reference: ${slug}`, mimeType: "text/plain" },
      async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: page }] }),
    );
  }

  registerMemoryTools({
    actor,
    tool,
    read,
    write: (fn) => write(async (tx) => fn(tx, await loadTree(tx, actor))),
    ensureFolders,
    text,
  });

  /** `a/b/c` -> the folder id, creating missing folders (mkdir -p). */
  async function ensureFolders(tx: Tx, tree: Tree, parts: string[]): Promise<string | null> {
    let parent: string | null = null;
    let path = "";
    for (const name of parts) {
      path = path ? `${path}/${name}` : name;
      const existing = tree.folderByPath.get(path);
      if (existing) {
        parent = existing.id;
        continue;
      }
      requireScope(actor, "folders:write");
      const { folder } = await createFolder(tx, actor, { name, parentFolderId: parent });
      parent = folder.id;
    }
    return parent;
  }

  return server;
}
