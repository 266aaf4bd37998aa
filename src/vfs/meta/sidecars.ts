// Sidecar files: `NAME.meta.json` beside a note and `.meta.json` inside a folder hold its metadata
// as JSON. They are reachable by name but never listed (so ls, find, grep -r and cp -r don't see
// them, like rclone's --vfs-metadata-extension). Writing one applies it; a bad one changes nothing.
import { ApiError, type TxtfsClient, withoutContent } from "../../client/api.ts";
import { fail, toVfsError } from "../errors.ts";
import { isNoteName } from "../names.ts";
import type { DirNode, FileNode, LocalNode, Tree } from "../tree.ts";
import { jsonObjectPrefix } from "./jsonPrefix.ts";
import { parseTagsValue } from "./xattrs.ts";

export const SIDECAR_SUFFIX = ".meta.json";
const FOLDER_SIDECAR = ".meta.json";
const MAX_CONTEXT = 4000;
const MAX_TAGS = 16;
const MAX_REASON = 500;

/** What a sidecar describes: a note, a folder, or a file under a note's name kept local (its bytes are not text yet). */
export type SidecarTarget = FileNode | DirNode | LocalNode;

export interface SidecarNode {
  kind: "sidecar";
  name: string;
  parent: DirNode;
  target: SidecarTarget;
}

/** The sidecar a path names, if any: `dir/NAME.meta.json` for a note, `dir/.meta.json` for a folder. */
export function sidecarAt(dir: DirNode, name: string): SidecarNode | undefined {
  if (name === FOLDER_SIDECAR) {
    return dir.id ? { kind: "sidecar", name, parent: dir, target: dir } : undefined;
  }
  if (!name.endsWith(SIDECAR_SUFFIX)) return undefined;
  const target = dir.children.get(name.slice(0, -SIDECAR_SUFFIX.length));
  // A note still on its way has one too (a pending note is a note): it is rendered and applied once
  // the note is on the service (Attributes.renderSidecar, delivery.settle). So does a file under a
  // note's name kept local (a truncate split a character): like its xattrs, the context and tags
  // set through it wait on the file and go with it when it is a note again.
  if (target?.kind === "file" || (target?.kind === "local" && isNoteName(target.name)))
    return { kind: "sidecar", name, parent: dir, target };
  return undefined;
}

interface Rendered {
  key: string;
  body: Buffer;
}

/** Renders sidecars; a note's explicit connections are fetched once per version of the note. */
export class Sidecars {
  private readonly rendered = new Map<SidecarTarget, Rendered>();
  private readonly client: TxtfsClient;
  private readonly tree: Tree;

  constructor(client: TxtfsClient, tree: Tree) {
    this.client = client;
    this.tree = tree;
  }

  private versionKey(target: SidecarTarget): string {
    if (target.kind === "local") return JSON.stringify(target.pendingMeta ?? {});
    return target.kind === "file" ? (target.meta?.etag ?? "") : `${target.meta?.updatedAt}`;
  }

  async render(target: SidecarTarget): Promise<Buffer> {
    const key = this.versionKey(target);
    const hit = this.rendered.get(target);
    if (hit && hit.key === key) return hit.body;
    let doc: unknown;
    if (target.kind === "local") {
      // What was set here (xattrs.ts reads the same); the rest is the service's, once it is a note.
      doc = {
        name: target.name,
        context: target.pendingMeta?.context ?? "",
        tags: target.pendingMeta?.tags ?? [],
      };
    } else if (target.kind === "dir") {
      const m = target.meta!;
      doc = {
        id: m.id,
        name: m.name,
        context: m.context,
        tags: m.tags,
        parentFolderId: m.parentFolderId,
        fileCount: m.fileCount,
        access: m.access,
        role: m.role,
        createdAt: m.createdAt,
        updatedAt: m.updatedAt,
      };
    } else {
      const m = target.meta!;
      let connections: { id: string; path: string | null; reason: string }[];
      try {
        const related = await this.client.connections(m.id);
        connections = related.connections.flatMap((c) =>
          c.reasons
            .filter((r) => r.type === "explicit")
            .map((r) => ({ id: c.file.id, path: this.pathOfId(c.file.id), reason: String(r.reason ?? "") })),
        );
      } catch (err) {
        throw toVfsError(err);
      }
      doc = {
        id: m.id,
        name: m.name,
        type: m.type,
        context: m.context,
        tags: m.tags,
        connections,
        availability: m.availability,
        access: m.access,
        role: m.role,
        size: m.size,
        etag: m.etag,
        createdAt: m.createdAt,
        updatedAt: m.updatedAt,
      };
    }
    const body = Buffer.from(`${JSON.stringify(doc, null, 2)}\n`, "utf8");
    this.rendered.set(target, { key, body });
    return body;
  }

  private pathOfId(id: string): string | null {
    const node = this.tree.files.get(id);
    return node ? this.tree.pathOf(node) : null;
  }

  /**
   * Applies an edited sidecar: context, tags and (for notes) the explicit connections. Everything
   * is checked before the first request, so a bad value fails with EINVAL and changes nothing.
   */
  async apply(target: SidecarTarget, text: string): Promise<void> {
    const { patch, wanted } = this.plan(target, text);
    if (target.kind === "local") {
      target.pendingMeta = { ...target.pendingMeta, ...patch };
      this.rendered.delete(target);
      return;
    }
    try {
      if (Object.keys(patch).length) {
        if (target.kind === "file")
          this.tree.upsertFile(withoutContent(await this.client.updateFile(target.id!, patch)));
        else this.tree.upsertFolder(await this.client.updateFolder(target.id!, patch));
      }
      if (wanted && target.kind === "file") {
        const current = new Map<string, string>();
        for (const c of (await this.client.connections(target.id!)).connections) {
          for (const r of c.reasons)
            if (r.type === "explicit") current.set(c.file.id, String(r.reason ?? ""));
        }
        for (const [id, reason] of wanted)
          if (current.get(id) !== reason) await this.client.connect(target.id!, id, reason);
        for (const id of current.keys()) if (!wanted.has(id)) await this.client.disconnect(target.id!, id);
      }
    } catch (err) {
      if (err instanceof ApiError && err.status === 400) throw fail("EINVAL", err.message);
      throw toVfsError(err);
    } finally {
      this.rendered.delete(target);
    }
  }

  /**
   * A write that leaves a sidecar's text as `text` (its writer goes on at the end): EINVAL when no
   * text starting so can be applied — not the start of a JSON object, or a whole one that is not
   * acceptable — so the program is told at the write, not only at a close it may ignore.
   */
  checkWrite(target: SidecarTarget, text: Buffer): void {
    const state = jsonObjectPrefix(text);
    if (state === "invalid") throw fail("EINVAL", "sidecar: not valid JSON");
    if (state === "complete") this.plan(target, text.toString("utf8"));
  }

  /** What a sidecar's text asks for, checked whole before any request; EINVAL when not acceptable. */
  private plan(
    target: SidecarTarget,
    text: string,
  ): { patch: { context?: string; tags?: string[] }; wanted?: Map<string, string> } {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      throw fail("EINVAL", "sidecar: not valid JSON");
    }
    if (typeof doc !== "object" || doc === null || Array.isArray(doc))
      throw fail("EINVAL", "sidecar: not a JSON object");
    const d = doc as Record<string, unknown>;
    const patch: { context?: string; tags?: string[] } = {};
    if (d.context !== undefined) {
      if (typeof d.context !== "string" || [...d.context].length > MAX_CONTEXT)
        throw fail("EINVAL", "context");
      patch.context = d.context;
    }
    if (d.tags !== undefined) {
      const tags = Array.isArray(d.tags)
        ? d.tags
        : typeof d.tags === "string"
          ? parseTagsValue(d.tags)
          : null;
      if (!tags?.every((t) => typeof t === "string") || tags.length > MAX_TAGS) throw fail("EINVAL", "tags");
      patch.tags = tags as string[];
    }
    if (target.kind === "local") {
      if (d.connections !== undefined && !(Array.isArray(d.connections) && d.connections.length === 0))
        throw fail("EINVAL", "connections: a file kept local is not a note on the service yet");
      return { patch };
    }
    let wanted: Map<string, string> | undefined;
    if (target.kind === "file" && d.connections !== undefined) {
      if (!Array.isArray(d.connections)) throw fail("EINVAL", "connections");
      wanted = new Map();
      for (const c of d.connections) {
        const id = typeof c === "string" ? c : (c as Record<string, unknown>)?.id;
        const reason = typeof c === "object" && c ? ((c as Record<string, unknown>).reason ?? "") : "";
        if (typeof id !== "string" || typeof reason !== "string" || [...reason].length > MAX_REASON) {
          throw fail("EINVAL", "connections");
        }
        if (id === target.id || !this.tree.files.has(id)) throw fail("EINVAL", `connections: no note ${id}`);
        wanted.set(id, reason);
      }
    }
    return { patch, wanted };
  }
}
