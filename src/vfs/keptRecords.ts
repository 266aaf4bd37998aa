// What the mount keeps of each note's record for its whole life (maybe 100,000 of them): only the
// fields it reads, in one shape, with one copy of the strings many records repeat.
import type { DirNode, NoteMeta } from "./treeNodes.ts";

/** The tags of every note without tags (most of them): one array, never changed in place. */
const NO_TAGS: string[] = Object.freeze([]) as unknown as string[];

export class KeptRecords {
  /** The tree's folders by id: a kept record's folder id is that folder's own string. */
  private readonly dirs: ReadonlyMap<string, DirNode>;
  /** One copy of the strings many records repeat (owner ids, availability). */
  private readonly repeated = new Map<string, string>();

  constructor(dirs: ReadonlyMap<string, DirNode>) {
    this.dirs = dirs;
  }

  /**
   * What is kept of a note's record: the fields the mount reads, always in one order (one hidden
   * class), with one copy of the strings records repeat (its folder's id is that folder's own;
   * owner ids, availability), one shared array for "no tags", and without the URLs it never reads.
   */
  keep(m: NoteMeta): NoteMeta {
    const kept: NoteMeta = {
      id: m.id,
      name: m.name,
      context: m.context,
      tags: m.tags?.length === 0 ? NO_TAGS : m.tags,
      type: m.type,
      availability: this.once(m.availability) as NoteMeta["availability"],
      size: m.size,
      folderId: m.folderId === null ? null : (this.dirs.get(m.folderId)?.id ?? m.folderId),
      createdAt: m.createdAt,
      updatedAt: m.updatedAt,
      access: m.access,
      role: m.role,
      etag: m.etag,
      contentHash: m.contentHash,
    };
    if (m.ownerId !== undefined) kept.ownerId = this.once(m.ownerId);
    return kept;
  }

  /** The copy of `s` kept before (a bounded few: owners are few, and so are availabilities). */
  private once(s: string): string {
    const known = this.repeated.get(s);
    if (known !== undefined) return known;
    if (this.repeated.size < 1000) this.repeated.set(s, s);
    return s;
  }
}
