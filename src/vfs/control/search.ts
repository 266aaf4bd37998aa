// .txtfs/search/QUERY/: ranked symlinks to the notes matching a full-text query (the service's
// search: every word must occur, the last may be a prefix). One request per listing: `ls -l`
// lists then stats every link, all answered from that one answer (kept a moment).
import type { VfsCore } from "../core.ts";
import { fail, toVfsError } from "../errors.ts";
import type { FileNode } from "../tree.ts";
import type { Area } from "./area.ts";
import { type Entry, FRESH_MS, linkTo, Recent, rankedName } from "./entries.ts";

/** Two digits of rank: `01` to `99`. */
export const SEARCH_LIMIT = 99;

export class Search implements Area {
  private readonly c: VfsCore;
  private readonly results = new Recent<{ name: string; node: FileNode }[]>(FRESH_MS, 200);

  constructor(c: VfsCore) {
    this.c = c;
  }

  private hits(query: string) {
    return this.results.get(query, async () => {
      let res: Awaited<ReturnType<VfsCore["client"]["search"]>>;
      try {
        res = await this.c.client.search(query, SEARCH_LIMIT);
      } catch (err) {
        throw toVfsError(err);
      }
      const out: { name: string; node: FileNode }[] = [];
      for (const hit of res.results) {
        const node = this.c.tree.files.get(hit.file.id);
        if (node?.parent) out.push({ name: rankedName(out.length + 1, node.name), node });
      }
      return out;
    });
  }

  async stat(parts: string[], path: string): Promise<Entry> {
    // A query is a folder as soon as it is named (no request): a word is needed.
    if (!/[\p{L}\p{N}]/u.test(parts[0]!) || parts.length > 2) throw fail("ENOENT");
    if (parts.length === 1) return { type: "dir" };
    const hit = (await this.hits(parts[0]!)).find((h) => h.name === parts[1]);
    if (!hit) throw fail("ENOENT");
    return { type: "link", target: linkTo(path, this.c.tree.pathOf(hit.node)) };
  }

  async list(parts: string[]): Promise<string[]> {
    if (parts.length === 0) return []; // queries are reachable by name only
    if (parts.length > 1) throw fail("ENOTDIR");
    if (!/[\p{L}\p{N}]/u.test(parts[0]!)) throw fail("ENOENT");
    return (await this.hits(parts[0]!)).map((h) => h.name);
  }
}
