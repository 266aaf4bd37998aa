// .txtfs/versions/PATH/: every version of the note at PATH as a read-only file named by number,
// date and label (`0007 2026-11-20T10-12 label.md`). Listing costs one request (kept a moment, and
// asked again as soon as the note changes); a version's body one request, then kept for good
// (a version never changes).
import type { TxtVersion } from "../../lib/apiTypes.ts";
import { BoundedMap } from "../boundedMap.ts";
import type { VfsCore } from "../core.ts";
import type { Delivery } from "../delivery/deliver.ts";
import { fail, toVfsError } from "../errors.ts";
import type { FileNode } from "../tree.ts";
import type { Area } from "./area.ts";
import { type Entry, FRESH_MS, mirrorChildren, Recent, resolveMirror } from "./entries.ts";

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters make no file name
const UNSAFE = /[/\u0000-\u001f\u007f]/g;

export function versionName(v: TxtVersion, noteName: string): string {
  const ext = /\.txt$/i.test(noteName) ? ".txt" : ".md";
  const date = v.created_at.slice(0, 16).replace(/:/g, "-");
  let label = v.label ? ` ${v.label.replace(UNSAFE, "-")}` : "";
  const head = `${String(v.version_number).padStart(4, "0")} ${date}`;
  while (Buffer.byteLength(head + label + ext) > 255) label = label.slice(0, -1);
  return head + label + ext;
}

/** The parts versions call. */
export interface VersionsParts {
  delivery: Pick<Delivery, "settle">;
}

export class Versions implements Area {
  private readonly delivery: VersionsParts["delivery"];
  private readonly c: VfsCore;
  private readonly lists = new Recent<{ name: string; v: TxtVersion }[]>(FRESH_MS);
  private readonly bodies = new BoundedMap<string, Promise<Buffer>>(256);

  constructor(c: VfsCore, parts: VersionsParts) {
    this.c = c;
    this.delivery = parts.delivery;
  }

  private note(parts: string[]): { node: FileNode; rest: string[] } | { dir: string[] } {
    const found = resolveMirror(this.c.tree, parts);
    if (!found) throw fail("ENOENT");
    if (found.node.kind === "dir") return { dir: mirrorChildren(found.node) };
    if (found.rest.length > 1) throw fail("ENOENT");
    return { node: found.node, rest: found.rest };
  }

  /** The versions of a note: asked again once the note shows another version. */
  private async listOf(node: FileNode) {
    await this.delivery.settle(node);
    const id = node.id;
    if (!id) return [];
    return this.lists.get(`${id}@${node.meta?.etag}`, async () => {
      try {
        const res = await this.c.client.versions(id);
        return res.versions.map((v) => ({ name: versionName(v, node.name), v }));
      } catch (err) {
        throw toVfsError(err);
      }
    });
  }

  /** By its full name, or by its number alone (`cat .txtfs/versions/a.md/7`). */
  private async version(node: FileNode, name: string): Promise<TxtVersion> {
    const all = await this.listOf(node);
    const n = /^\d+$/.test(name) ? Number(name) : undefined;
    const hit = all.find((e) => e.name === name || e.v.version_number === n);
    if (!hit) throw fail("ENOENT");
    return hit.v;
  }

  async stat(parts: string[]): Promise<Entry> {
    const at = this.note(parts);
    if ("dir" in at || at.rest.length === 0) return { type: "dir" };
    const v = await this.version(at.node, at.rest[0]!);
    return { type: "file", size: v.byte_size, mtimeMs: Date.parse(v.created_at) };
  }

  async list(parts: string[]): Promise<string[]> {
    const at = this.note(parts);
    if ("dir" in at) return at.dir;
    if (at.rest.length) throw fail("ENOTDIR");
    return (await this.listOf(at.node)).map((e) => e.name);
  }

  async read(parts: string[]): Promise<Buffer> {
    const at = this.note(parts);
    if ("dir" in at || at.rest.length === 0) throw fail("EISDIR");
    const v = await this.version(at.node, at.rest[0]!);
    const key = `${v.file_id}:${v.version_number}`;
    let body = this.bodies.get(key);
    if (!body) {
      body = this.c.client.version(v.file_id, v.version_number).then(
        (full) => Buffer.from(full.content, "utf8"),
        (err) => {
          this.bodies.delete(key);
          throw toVfsError(err);
        },
      );
      this.bodies.set(key, body);
    }
    return body;
  }

  /** A version labelled or restored here shows at once. */
  forget(id: string): void {
    this.lists.drop(`${id}@`);
  }
}
