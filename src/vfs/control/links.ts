// .txtfs/links/: the vault's link graph as the service reads it from the notes' text. Read-only:
// a link is changed by editing the note that holds it.
//
//   links/unresolved            every unresolved link of the account, "NOTE<TAB>LINK TEXT" a line
//   links/PATH/to/              the notes the note links to, in the order first written:
//                               `01 name.md -> ../../../folder/name.md` (as related/)
//   links/PATH/from/            the notes linking to it (its backlinks), in path order
//   links/PATH/unresolved       its own links that name no note, one a line as written
//
// PATH mirrors the mount's folders (as versions/ and related/); a note or folder named
// `unresolved` at the root is reached through the other areas only.
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

export const UNRESOLVED = "unresolved";
const NOTE_ENTRIES = ["to", "from", UNRESOLVED];

interface Linked {
  name: string;
  node: FileNode;
}

interface NoteGraph {
  to: Linked[];
  from: Linked[];
  unresolved: string[];
}

/** The parts links call. */
export interface LinksParts {
  delivery: Pick<Delivery, "settle">;
}

export class Links implements Area {
  private readonly delivery: LinksParts["delivery"];
  private readonly c: VfsCore;
  private readonly graphs = new Recent<NoteGraph>(FRESH_MS);
  private readonly account = new Recent<Buffer>(FRESH_MS, 1);

  constructor(c: VfsCore, parts: LinksParts) {
    this.c = c;
    this.delivery = parts.delivery;
  }

  private at(parts: string[]): { node: FileNode; rest: string[] } | { dir: string[] } {
    const found = resolveMirror(this.c.tree, parts);
    if (!found) throw fail("ENOENT");
    if (found.node.kind === "dir") return { dir: mirrorChildren(found.node) };
    if (found.rest.length > 2 || (found.rest[0] !== undefined && !NOTE_ENTRIES.includes(found.rest[0])))
      throw fail("ENOENT");
    if (found.rest[0] === UNRESOLVED && found.rest.length > 1) throw fail("ENOTDIR");
    return { node: found.node, rest: found.rest };
  }

  private async graph(node: FileNode): Promise<NoteGraph> {
    await this.delivery.settle(node);
    const id = node.id;
    if (!id) return { to: [], from: [], unresolved: [] };
    return this.graphs.get(id, async () => {
      let links: Awaited<ReturnType<VfsCore["client"]["fileLinks"]>>;
      let backlinks: Awaited<ReturnType<VfsCore["client"]["fileBacklinks"]>>;
      try {
        [links, backlinks] = await Promise.all([
          this.c.client.fileLinks(id),
          this.c.client.fileBacklinks(id),
        ]);
      } catch (err) {
        throw toVfsError(err);
      }
      const to = this.ranked(links.links.flatMap((l) => (l.targetFileId ? [l.targetFileId] : [])));
      const sources = backlinks.backlinks.map((l) => l.fileId);
      const from = this.ranked(sources, true);
      return { to, from, unresolved: links.links.filter((l) => !l.resolved).map((l) => l.text) };
    });
  }

  /** Notes of this mount by id, each once, ranked in the given order (or by path). */
  private ranked(ids: string[], byPath = false): Linked[] {
    const nodes: FileNode[] = [];
    const seen = new Set<string>();
    for (const id of ids) {
      const node = this.c.tree.files.get(id);
      if (seen.has(id) || !node?.parent) continue; // not in this mount (yet)
      seen.add(id);
      nodes.push(node);
    }
    if (byPath) {
      const paths = new Map(nodes.map((n) => [n, this.c.tree.pathOf(n)]));
      nodes.sort((a, b) => (paths.get(a)! < paths.get(b)! ? -1 : 1));
    }
    return nodes.map((node, i) => ({ name: rankedName(i + 1, node.name), node }));
  }

  /** `NOTE<TAB>LINK TEXT` for every unresolved link of the account. */
  private unresolvedAll(): Promise<Buffer> {
    return this.account.get(UNRESOLVED, async () => {
      const lines: string[] = [];
      let cursor: string | undefined;
      do {
        let page: Awaited<ReturnType<VfsCore["client"]["unresolvedLinks"]>>;
        try {
          page = await this.c.client.unresolvedLinks(cursor);
        } catch (err) {
          throw toVfsError(err);
        }
        for (const l of page.links) {
          const node = this.c.tree.files.get(l.fileId);
          const where = node?.parent ? this.c.tree.pathOf(node).slice(1) : l.name;
          lines.push(`${where}\t${l.text.replace(/[\t\n]/g, " ")}\n`);
        }
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      return Buffer.from(lines.join(""));
    });
  }

  private async body(parts: string[]): Promise<Buffer> {
    if (parts.length === 1 && parts[0] === UNRESOLVED) return this.unresolvedAll();
    const at = this.at(parts);
    if ("dir" in at || at.rest[0] !== UNRESOLVED) throw fail("EISDIR");
    const g = await this.graph(at.node);
    return Buffer.from(g.unresolved.map((t) => `${t.replace(/\n/g, " ")}\n`).join(""));
  }

  async stat(parts: string[], path: string): Promise<Entry> {
    const file = async (): Promise<Entry> => ({
      type: "file",
      size: (await this.body(parts)).length,
      mtimeMs: this.c.clock.now(),
    });
    if (parts.length === 1 && parts[0] === UNRESOLVED) return file();
    const at = this.at(parts);
    if ("dir" in at || at.rest.length === 0) return { type: "dir" };
    if (at.rest[0] === UNRESOLVED) return file();
    if (at.rest.length === 1) return { type: "dir" };
    const hit = await this.one(at.node, at.rest[0] as "to" | "from", at.rest[1]!);
    return { type: "link", target: linkTo(path, this.c.tree.pathOf(hit.node)) };
  }

  private async one(node: FileNode, side: "to" | "from", name: string): Promise<Linked> {
    const hit = (await this.graph(node))[side].find((l) => l.name === name);
    if (!hit) throw fail("ENOENT");
    return hit;
  }

  async list(parts: string[]): Promise<string[]> {
    if (parts.length === 0) return [UNRESOLVED, ...mirrorChildren(this.c.tree.root)];
    if (parts.length === 1 && parts[0] === UNRESOLVED) throw fail("ENOTDIR");
    const at = this.at(parts);
    if ("dir" in at) return at.dir;
    if (at.rest.length === 0) return NOTE_ENTRIES;
    if (at.rest[0] === UNRESOLVED || at.rest.length > 1) throw fail("ENOTDIR");
    return (await this.graph(at.node))[at.rest[0] as "to" | "from"].map((l) => l.name);
  }

  read(parts: string[]): Promise<Buffer> {
    return this.body(parts);
  }
}
