// .txtfs/related/PATH/: the note's related notes (explicit and inferred), ranked, as symlinks
// (`01 name.md -> ../../../folder/name.md`); why each is related in the folder's
// `user.txtfs.reasons` (JSON by link name: Linux allows user.* attributes on files and folders
// only, not on symlinks). `ln -s NOTE related/PATH/` connects (with the folder's
// `user.txtfs.reason`, if set), `rm` of a link disconnects an explicit connection.
import type { TxtFile } from "../../lib/apiTypes.ts";
import type { VfsCore } from "../core.ts";
import type { Delivery } from "../delivery/deliver.ts";
import { fail, toVfsError } from "../errors.ts";
import type { FileNode } from "../tree.ts";
import type { Area } from "./area.ts";
import {
  type Entry,
  FRESH_MS,
  linkTo,
  mirrorChildren,
  Recent,
  rankedName,
  resolveMirror,
} from "./entries.ts";

export const REASONS_XATTR = "user.txtfs.reasons";
export const REASON_XATTR = "user.txtfs.reason";

type Reason = { type: string } & Record<string, unknown>;
interface Related {
  name: string;
  node: FileNode;
  file: TxtFile;
  reasons: Reason[];
}

/** The parts related notes call. */
export interface RelatedParts {
  delivery: Pick<Delivery, "settle">;
}

export class RelatedNotes implements Area {
  private readonly delivery: RelatedParts["delivery"];
  private readonly c: VfsCore;
  private readonly lists = new Recent<Related[]>(FRESH_MS);
  /** The reason the next `ln -s` into a note's folder records (setfattr user.txtfs.reason). */
  private readonly reasonFor = new Map<string, string>();

  constructor(c: VfsCore, parts: RelatedParts) {
    this.c = c;
    this.delivery = parts.delivery;
  }

  private at(parts: string[]): { node: FileNode; rest: string[] } | { dir: string[] } {
    const found = resolveMirror(this.c.tree, parts);
    if (!found) throw fail("ENOENT");
    if (found.node.kind === "dir") return { dir: mirrorChildren(found.node) };
    if (found.rest.length > 1) throw fail("ENOENT");
    return { node: found.node, rest: found.rest };
  }

  private async related(node: FileNode): Promise<Related[]> {
    await this.delivery.settle(node);
    const id = node.id;
    if (!id) return [];
    return this.lists.get(id, async () => {
      let res: Awaited<ReturnType<VfsCore["client"]["connections"]>>;
      try {
        res = await this.c.client.connections(id);
      } catch (err) {
        throw toVfsError(err);
      }
      const out: Related[] = [];
      for (const conn of res.connections) {
        const target = this.c.tree.files.get(conn.file.id);
        if (!target?.parent) continue; // not in this mount (yet)
        out.push({
          name: rankedName(out.length + 1, target.name),
          node: target,
          file: conn.file,
          reasons: conn.reasons,
        });
      }
      return out;
    });
  }

  /** By its ranked name, or by the note's own name (what `ln -s` names the link it makes). */
  private async one(node: FileNode, name: string): Promise<Related> {
    const all = await this.related(node);
    const hit = all.find((r) => r.name === name) ?? all.find((r) => r.node.name === name);
    if (!hit) throw fail("ENOENT");
    return hit;
  }

  async stat(parts: string[], path: string): Promise<Entry> {
    const at = this.at(parts);
    if ("dir" in at) return { type: "dir" };
    if (at.rest.length === 0) return { type: "dir", writable: true };
    const hit = await this.one(at.node, at.rest[0]!);
    return { type: "link", target: linkTo(path, this.c.tree.pathOf(hit.node)) };
  }

  async list(parts: string[]): Promise<string[]> {
    const at = this.at(parts);
    if ("dir" in at) return at.dir;
    if (at.rest.length) throw fail("ENOTDIR");
    return (await this.related(at.node)).map((r) => r.name);
  }

  async symlink(parts: string[], target: FileNode): Promise<void> {
    const at = this.at(parts);
    if ("dir" in at || at.rest.length !== 1) throw fail("EPERM");
    const node = at.node;
    this.c.checkWritable(node);
    await this.delivery.settle(node);
    if (!node.id) throw fail("EIO", "the note is not on the service yet");
    if (node === target) throw fail("EINVAL", "a note is not related to itself");
    try {
      await this.c.client.connect(node.id, target.id!, this.reasonFor.get(node.id) ?? "");
    } catch (err) {
      throw toVfsError(err);
    } finally {
      this.lists.drop(node.id);
    }
  }

  async unlink(parts: string[]): Promise<void> {
    const at = this.at(parts);
    if ("dir" in at || at.rest.length !== 1) throw fail("EISDIR");
    const hit = await this.one(at.node, at.rest[0]!);
    // Inferred relations (shared tags, folder, similar text) are the service's to find.
    if (!hit.reasons.some((r) => r.type === "explicit")) throw fail("EPERM", "not an explicit connection");
    this.c.checkWritable(at.node);
    try {
      await this.c.client.disconnect(at.node.id!, hit.file.id);
    } catch (err) {
      throw toVfsError(err);
    } finally {
      this.lists.drop(at.node.id!);
    }
  }

  xattrNames(parts: string[]): string[] {
    const found = resolveMirror(this.c.tree, parts);
    return found?.node.kind === "file" && found.rest.length === 0 ? [REASONS_XATTR, REASON_XATTR] : [];
  }

  async getxattr(parts: string[], name: string): Promise<Buffer | null> {
    const at = this.at(parts);
    if ("dir" in at || at.rest.length) return null;
    if (name === REASON_XATTR) {
      const reason = at.node.id ? this.reasonFor.get(at.node.id) : undefined;
      return reason === undefined ? null : Buffer.from(reason);
    }
    if (name !== REASONS_XATTR) return null;
    const all = await this.related(at.node);
    return Buffer.from(JSON.stringify(Object.fromEntries(all.map((r) => [r.name, r.reasons]))));
  }

  async setxattr(parts: string[], name: string, value: Buffer): Promise<void> {
    const at = this.at(parts);
    if ("dir" in at || at.rest.length || name !== REASON_XATTR) throw fail("ENOTSUP");
    if (!at.node.id) throw fail("EIO", "the note is not on the service yet");
    const reason = value.toString("utf8");
    if ([...reason].length > 500) throw fail("EINVAL", "a reason has at most 500 characters");
    this.reasonFor.set(at.node.id, reason);
  }
}
