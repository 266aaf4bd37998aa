// Note metadata as extended attributes: user.txtfs.context and .tags (read-write), .connections
// and the identity fields (read-only). security.* and system.* are answered from memory: the kernel
// asks for security.capability before every write, and sed/vim probe ACLs.
import { ApiError, type TxtfsClient, withoutContent } from "../../client/api.ts";
import type { TxtFolder } from "../../lib/apiTypes.ts";
import { fail, toVfsError } from "../errors.ts";
import type { Notes } from "../note.ts";
import type { Node, NoteMeta, Tree } from "../tree.ts";

const P = "user.txtfs.";
/** The xattr that shows (and sets) a note's availability and delivery state. */
export const STATE_XATTR = "user.txtfs.state";

/** Whether a body carries the metadata set on a note (tags, context) that waits to be sent. */
export function carries(
  body: { context?: string; tags?: string[] },
  meta: { context?: string; tags?: string[] },
): boolean {
  const same = meta.tags === undefined || JSON.stringify(meta.tags) === JSON.stringify(body.tags);
  return same && (meta.context === undefined || meta.context === body.context);
}

export const XATTR_NAMES = [
  "context",
  "tags",
  "connections",
  "id",
  "etag",
  "access",
  "role",
  "availability",
].map((n) => P + n);
const WRITABLE = new Set([`${P}context`, `${P}tags`]);
const FOLDER_NAMES = ["context", "tags", "id", "access", "role"].map((n) => P + n);

/**
 * The attributes a node has: folders have no ETag, availability or connections; a note has them
 * all, also before it reaches the service (a pending note is a note); a local file only the context
 * and tags set on it (they go with it when it becomes a note).
 */
export function xattrNames(node: Node): string[] {
  if (node.kind === "local") return node.pendingMeta ? [...WRITABLE] : [];
  if (node.kind === "dir") return node.id ? FOLDER_NAMES : [];
  return XATTR_NAMES;
}

export async function readXattr(client: TxtfsClient, node: Node, name: string): Promise<Buffer | null> {
  if (!name.startsWith(P)) return null; // ENODATA
  const meta: NoteMeta | TxtFolder | null = node.kind === "local" ? null : node.meta;
  if (!meta) {
    // Not on the service (yet): what was set here.
    const pending =
      node.kind === "dir" ? undefined : node.kind === "local" ? node.pendingMeta : node.note?.pendingMeta;
    if (name === `${P}context`) return Buffer.from(pending?.context ?? "", "utf8");
    if (name === `${P}tags`) return Buffer.from((pending?.tags ?? []).join(","), "utf8");
    return null;
  }
  const field = name.slice(P.length);
  let value: string | undefined;
  switch (field) {
    case "context":
      value = meta.context;
      break;
    case "tags":
      value = meta.tags.join(",");
      break;
    case "id":
      value = meta.id;
      break;
    case "access":
      value = meta.access;
      break;
    case "role":
      value = meta.role;
      break;
    case "etag":
      value = "etag" in meta ? meta.etag : undefined;
      break;
    case "availability":
      value = "availability" in meta ? meta.availability : undefined;
      break;
    case "connections": {
      if (node.kind !== "file") return null;
      try {
        const res = await client.connections(meta.id);
        value = JSON.stringify(
          res.connections.map((c) => ({
            id: c.file.id,
            name: c.file.name,
            folderId: c.file.folderId,
            score: c.score,
            reasons: c.reasons,
          })),
        );
      } catch (err) {
        throw toVfsError(err);
      }
      break;
    }
  }
  return value === undefined ? null : Buffer.from(value, "utf8");
}

/** Tags as `a,b,c` or as a JSON array. */
export function parseTagsValue(text: string): string[] {
  const trimmed = text.trim();
  if (trimmed.startsWith("[")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      throw fail("EINVAL", "tags: not a JSON array");
    }
    if (!Array.isArray(parsed) || !parsed.every((t) => typeof t === "string"))
      throw fail("EINVAL", "tags: not an array of strings");
    return parsed;
  }
  return trimmed === "" ? [] : trimmed.split(",").map((t) => t.trim());
}

export async function writeXattr(
  client: TxtfsClient,
  tree: Tree,
  notes: Pick<Notes, "of">,
  node: Node,
  name: string,
  value: Buffer,
): Promise<void> {
  if (name.startsWith("system.posix_acl")) throw fail("ENOTSUP"); // tools then fall back to chmod
  if (!name.startsWith(P)) throw fail("ENOTSUP");
  // The read-only ones (id, etag, role...) are the service's to set: a copy of a note with its
  // attributes (cp --preserve=all, rsync -X, tar --xattrs) carries context and tags, the rest is
  // not the copy's own and is left as it is, without an error per file.
  if (XATTR_NAMES.includes(name) && !WRITABLE.has(name)) return;
  if (!WRITABLE.has(name)) throw fail("ENOTSUP");
  const text = value.toString("utf8");
  const patch = name === `${P}context` ? { context: text } : { tags: parseTagsValue(text) };
  if (node.kind === "local" || !node.meta) {
    // Not a note on the service (yet): a new note (cp -a sets attributes before close), or a temp
    // file that becomes one (rsync -X): checked here, sent with its content.
    if (node.kind === "dir") throw fail("EIO", "not created on the service yet");
    // The service's tag rules (domain/limits.ts), which the vfs may not import.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we reject
    const badTag = (t: string) => !t.trim() || [...t.trim()].length > 64 || /[,\u0000-\u001f\u007f]/.test(t);
    if (patch.context !== undefined && [...patch.context].length > 4000) throw fail("EINVAL", "context");
    if (patch.tags && (patch.tags.length > 16 || patch.tags.some(badTag))) throw fail("EINVAL", "tags");
    if (node.kind === "local") node.pendingMeta = { ...node.pendingMeta, ...patch };
    else notes.of(node).metaSet(patch);
    return;
  }
  try {
    if (node.kind === "file") tree.upsertFile(withoutContent(await client.updateFile(node.meta.id, patch)));
    else if (node.kind === "dir") tree.upsertFolder(await client.updateFolder(node.meta.id, patch));
  } catch (err) {
    // The service's 400 (limits) is EINVAL; nothing was changed.
    if (err instanceof ApiError && err.status === 413) throw fail("E2BIG");
    throw toVfsError(err);
  }
}
