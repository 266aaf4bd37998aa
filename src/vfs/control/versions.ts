// .txtfs/versions/PATH/: every version of the note (or attachment) at PATH as a read-only file
// named by number, date and label (`0007 2026-11-20T10-12 label.md`, `0002 2026-11-20T10-12.png`).
// Listing costs one request (kept a moment, and asked again as soon as it changes); a version's
// body one request, then kept for good (a version never changes).
import type { AttachmentVersion } from "../../client/attachments.ts";
import type { TxtVersion } from "../../lib/apiTypes.ts";
import { BoundedMap } from "../boundedMap.ts";
import type { VfsCore } from "../core.ts";
import type { Delivery } from "../delivery/deliver.ts";
import { fail, toVfsError } from "../errors.ts";
import type { FileNode, LocalNode } from "../tree.ts";
import type { Area } from "./area.ts";
import { type Entry, FRESH_MS, mirrorChildren, Recent, resolveMirrorWith } from "./entries.ts";

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters make no file name
const UNSAFE = /[/\u0000-\u001f\u007f]/g;

export function versionName(v: TxtVersion, noteName: string): string {
  const ext = /\.txt$/i.test(noteName) ? ".txt" : ".md";
  return nameOf(v.version_number, v.created_at, v.label, ext);
}

/** An attachment's version: its number and date, with the attachment's own extension. */
function attachmentVersionName(v: AttachmentVersion, name: string): string {
  const dot = name.lastIndexOf(".");
  return nameOf(v.versionNumber, v.createdAt, null, dot > 0 ? name.slice(dot) : "");
}

function nameOf(n: number, createdAt: string, label: string | null, ext: string): string {
  const date = createdAt.slice(0, 16).replace(/:/g, "-");
  let tail = label ? ` ${label.replace(UNSAFE, "-")}` : "";
  const head = `${String(n).padStart(4, "0")} ${date}`;
  while (Buffer.byteLength(head + tail + ext) > 255) tail = tail.slice(0, -1);
  return head + tail + ext;
}

/** One version as listed, of a note or an attachment: what stat and read need. */
interface Listed {
  name: string;
  number: number;
  size: number;
  createdAt: string;
  /** What identifies its bytes (they never change). */
  key: string;
  bytes(): Promise<Buffer>;
}

/** The parts versions call. */
export interface VersionsParts {
  delivery: Pick<Delivery, "settle">;
}

export class Versions implements Area {
  private readonly delivery: VersionsParts["delivery"];
  private readonly c: VfsCore;
  private readonly lists = new Recent<Listed[]>(FRESH_MS);
  private readonly bodies = new BoundedMap<string, Promise<Buffer>>(256);

  constructor(c: VfsCore, parts: VersionsParts) {
    this.c = c;
    this.delivery = parts.delivery;
  }

  private item(parts: string[]): { node: FileNode | LocalNode; rest: string[] } | { dir: string[] } {
    const found = resolveMirrorWith(this.c.tree, parts, true);
    if (!found) throw fail("ENOENT");
    if (found.node.kind === "dir") return { dir: mirrorChildren(found.node, true) };
    if (found.rest.length > 1) throw fail("ENOENT");
    return { node: found.node, rest: found.rest };
  }

  /** The versions of a note or attachment: asked again once it shows another version. */
  private async listOf(node: FileNode | LocalNode): Promise<Listed[]> {
    if (node.kind === "local") return this.attachmentList(node);
    await this.delivery.settle(node);
    const id = node.id;
    if (!id) return [];
    return this.lists.get(`${id}@${node.meta?.etag}`, async () => {
      try {
        const res = await this.c.client.versions(id);
        return res.versions.map((v) => ({
          name: versionName(v, node.name),
          number: v.version_number,
          size: v.byte_size,
          createdAt: v.created_at,
          key: `${id}:${v.version_number}`,
          bytes: async () => Buffer.from((await this.c.client.version(id, v.version_number)).content, "utf8"),
        }));
      } catch (err) {
        throw toVfsError(err);
      }
    });
  }

  private attachmentList(node: LocalNode): Promise<Listed[]> {
    const b = node.attachment;
    const id = b?.id;
    if (!id) return Promise.resolve([]);
    return this.lists.get(`${id}@${b.etag}`, async () => {
      try {
        return (await this.c.client.attachments.versions(id)).map((v) => ({
          name: attachmentVersionName(v, node.name),
          number: v.versionNumber,
          size: v.byteSize,
          createdAt: v.createdAt,
          key: `${id}:${v.versionNumber}`,
          bytes: () => this.c.client.attachments.versionBytes(id, v.versionNumber),
        }));
      } catch (err) {
        throw toVfsError(err);
      }
    });
  }

  /** By its full name, or by its number alone (`cat .txtfs/versions/a.md/7`). */
  private async version(node: FileNode | LocalNode, name: string): Promise<Listed> {
    const all = await this.listOf(node);
    const n = /^\d+$/.test(name) ? Number(name) : undefined;
    const hit = all.find((e) => e.name === name || e.number === n);
    if (!hit) throw fail("ENOENT");
    return hit;
  }

  async stat(parts: string[]): Promise<Entry> {
    const at = this.item(parts);
    if ("dir" in at || at.rest.length === 0) return { type: "dir" };
    const v = await this.version(at.node, at.rest[0]!);
    return { type: "file", size: v.size, mtimeMs: Date.parse(v.createdAt) };
  }

  async list(parts: string[]): Promise<string[]> {
    const at = this.item(parts);
    if ("dir" in at) return at.dir;
    if (at.rest.length) throw fail("ENOTDIR");
    return (await this.listOf(at.node)).map((e) => e.name);
  }

  async read(parts: string[]): Promise<Buffer> {
    const at = this.item(parts);
    if ("dir" in at || at.rest.length === 0) throw fail("EISDIR");
    const v = await this.version(at.node, at.rest[0]!);
    let body = this.bodies.get(v.key);
    if (!body) {
      body = v.bytes().catch((err) => {
        this.bodies.delete(v.key);
        throw toVfsError(err);
      });
      this.bodies.set(v.key, body);
    }
    return body;
  }

  /** A version labelled or restored here shows at once. */
  forget(id: string): void {
    this.lists.drop(`${id}@`);
  }
}
