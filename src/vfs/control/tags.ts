// .txtfs/tags/TAG/: a symlink to every note tagged TAG, from the tree (the change feed keeps tags
// current: no request to list). `ln -s NOTE tags/TAG/` tags, `rm tags/TAG/NAME` untags (the
// service's file update, as `setfattr user.txtfs.tags` does), `mkdir tags/TAG` makes a tag folder
// that stays empty until a note gets the tag (kept for this mount's life).
import { withoutContent } from "../../client/api.ts";
import type { VfsCore } from "../core.ts";
import type { Delivery } from "../delivery/deliver.ts";
import { fail, toVfsError } from "../errors.ts";
import type { FileNode } from "../tree.ts";
import type { Area } from "./area.ts";
import { CONTROL_PATH, type Entry, linkTo, uniqueNames } from "./entries.ts";

// A tag may hold "/", a file name may not: shown as "∕" (U+2215), taken back the same way.
const toName = (tag: string) => tag.replaceAll("/", "\u2215");
const toTag = (name: string) => name.replaceAll("\u2215", "/");

// The service's tag rules (domain/limits.ts), which the vfs may not import.
const badTag = (t: string) =>
  !t.trim() ||
  t !== t.trim() ||
  [...t].length > 64 ||
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we reject
  /[,\u0000-\u001f\u007f]/.test(t);

/** The parts tags call. */
export interface TagsParts {
  delivery: Pick<Delivery, "settle">;
}

export class Tags implements Area {
  private readonly delivery: TagsParts["delivery"];
  private readonly c: VfsCore;
  /** Tag folders made with mkdir (or emptied by rm) that no note has. */
  private readonly made = new Set<string>();

  constructor(c: VfsCore, parts: TagsParts) {
    this.c = c;
    this.delivery = parts.delivery;
  }

  private notesWith(tag: string): { notes: FileNode[]; names: string[] } {
    const notes: { node: FileNode; path: string }[] = [];
    for (const node of this.c.tree.files.values()) {
      if (node.meta?.tags.includes(tag) && node.parent) notes.push({ node, path: this.c.tree.pathOf(node) });
    }
    notes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return { notes: notes.map((n) => n.node), names: uniqueNames(notes.map((n) => n.node)) };
  }

  private allTags(): Set<string> {
    const tags = new Set(this.made);
    for (const node of this.c.tree.files.values()) for (const t of node.meta?.tags ?? []) tags.add(t);
    return tags;
  }

  private exists(tag: string): boolean {
    return this.made.has(tag) || this.notesWith(tag).notes.length > 0;
  }

  private linked(tag: string, name: string): FileNode {
    const { notes, names } = this.notesWith(tag);
    const i = names.indexOf(name);
    if (i < 0) throw fail("ENOENT");
    return notes[i]!;
  }

  async stat(parts: string[]): Promise<Entry> {
    const tag = toTag(parts[0]!);
    if (parts.length > 2 || !this.exists(tag)) throw fail("ENOENT");
    if (parts.length === 1) return { type: "dir", writable: true };
    const node = this.linked(tag, parts[1]!);
    return {
      type: "link",
      target: linkTo(`${CONTROL_PATH}/tags/${parts[0]}/${parts[1]}`, this.c.tree.pathOf(node)),
    };
  }

  async list(parts: string[]): Promise<string[]> {
    if (parts.length === 0) return [...this.allTags()].sort().map(toName);
    const tag = toTag(parts[0]!);
    if (parts.length > 1) throw fail("ENOTDIR");
    if (!this.exists(tag)) throw fail("ENOENT");
    return this.notesWith(tag).names;
  }

  async mkdir(parts: string[]): Promise<void> {
    if (parts.length !== 1)
      throw fail(parts.length > 1 && this.exists(toTag(parts[0]!)) ? "EPERM" : "ENOENT");
    const tag = toTag(parts[0]!);
    if (this.exists(tag)) throw fail("EEXIST");
    if (badTag(tag)) throw fail("EINVAL", "a tag has 1 to 64 characters, no comma, no control character");
    this.made.add(tag);
  }

  async rmdir(parts: string[]): Promise<void> {
    if (parts.length !== 1) throw fail("ENOTDIR");
    const tag = toTag(parts[0]!);
    if (this.notesWith(tag).notes.length) throw fail("ENOTEMPTY");
    if (!this.made.delete(tag)) throw fail("ENOENT");
  }

  async symlink(parts: string[], note: FileNode): Promise<void> {
    if (parts.length !== 2) throw fail(parts.length === 1 ? "EEXIST" : "ENOENT");
    const tag = toTag(parts[0]!);
    if (badTag(tag)) throw fail("EINVAL");
    const tags = note.meta?.tags ?? [];
    if (tags.includes(tag)) throw fail("EEXIST");
    await this.retag(note, [...tags, tag]);
    this.made.delete(tag);
  }

  async unlink(parts: string[]): Promise<void> {
    if (parts.length !== 2) throw fail("EISDIR");
    const tag = toTag(parts[0]!);
    const node = this.linked(tag, parts[1]!);
    await this.retag(
      node,
      (node.meta?.tags ?? []).filter((t) => t !== tag),
    );
    // `rm tags/TAG/*` leaves the (now empty) folder, as on a disk; rmdir removes it.
    if (!this.notesWith(tag).notes.length) this.made.add(tag);
  }

  private async retag(node: FileNode, tags: string[]): Promise<void> {
    this.c.checkWritable(node);
    await this.delivery.settle(node);
    if (!node.id) throw fail("EIO", "the note is not on the service yet");
    try {
      this.c.tree.upsertFile(withoutContent(await this.c.client.updateFile(node.id, { tags })));
    } catch (err) {
      throw toVfsError(err);
    }
  }
}
