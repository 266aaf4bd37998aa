// An independent reading of Obsidian's link rules, for checking the service's link graph: it
// resolves by scanning every note of the vault (the service uses its name index), written from the
// rules in docs/api.md rather than from src/server/domain/links/resolve.ts.
import { posix } from "node:path";
import { readFrontMatter } from "../../src/server/domain/links/frontMatter.ts";
import { parseLinks } from "../../src/server/domain/links/linkSyntax.ts";

export interface VaultNote {
  /** Path from the vault root, e.g. `Folder/Sub/Note name.md`. */
  path: string;
  aliases: string[];
}

const low = (s: string) => s.normalize("NFC").toLowerCase();
const hasNoteExt = (s: string) => /\.(md|txt)$/i.test(s);
const stripExt = (s: string) => s.replace(/\.(md|txt)$/i, "");

/** The note path (as `VaultNote.path`) a link names from `sourcePath`, or null. */
export function resolveByScan(
  linkPath: string,
  sourcePath: string,
  notes: readonly VaultNote[],
): string | null {
  const p = linkPath.trim().replace(/\\/g, "/");
  const sourceDir = posix.dirname(sourcePath) === "." ? "" : posix.dirname(sourcePath);
  // Compare a note's path with a wanted path: with the extension when the link gives one.
  const key = (notePath: string, wanted: string) =>
    hasNoteExt(wanted) ? low(notePath) : low(stripExt(notePath));
  const tidy = (s: string) =>
    s
      .split("/")
      .map((x) => x.trim())
      .filter((x) => x && x !== ".")
      .join("/");
  const byExact = (wanted: string | null) => {
    if (wanted === null) return null;
    const hits = notes.filter((n) => key(n.path, wanted) === low(wanted));
    return pick(hits, sourceDir);
  };
  const relative = (() => {
    const joined = posix.normalize(posix.join(sourceDir || ".", tidy(p)));
    return joined.startsWith("..") ? null : tidy(joined);
  })();
  const rooted = (() => {
    const n = posix.normalize(tidy(p) || ".");
    return n.startsWith("..") ? null : tidy(n);
  })();
  const segs = tidy(p);
  if (!segs) return null;
  if (segs.includes("/") || p.startsWith("/") || /^\s*\.\.?\//.test(linkPath)) {
    const hit = (!p.startsWith("/") && byExact(relative)) || byExact(rooted);
    if (hit) return hit;
  }
  if (!segs.split("/").includes("..")) {
    const want = low(segs);
    const hits = notes.filter((n) => {
      const k = key(n.path, segs);
      return k === want || k.endsWith(`/${want}`);
    });
    const hit = pick(hits, sourceDir);
    if (hit) return hit;
  }
  return pick(
    notes.filter((n) => n.aliases.some((a) => low(a.trim()) === low(segs))),
    sourceDir,
  );
}

/** The nearest: in the source's folder, else fewest folders, shortest path, .md, then by path. */
function pick(hits: VaultNote[], sourceDir: string): string | null {
  const dirOf = (path: string) => (posix.dirname(path) === "." ? "" : posix.dirname(path));
  const depth = (path: string) => path.split("/").length;
  const sorted = [...hits].sort((a, b) => {
    const here =
      Number(low(dirOf(b.path)) === low(sourceDir)) - Number(low(dirOf(a.path)) === low(sourceDir));
    if (here) return here;
    if (depth(a.path) !== depth(b.path)) return depth(a.path) - depth(b.path);
    if (a.path.length !== b.path.length) return a.path.length - b.path.length;
    const md = Number(/\.md$/i.test(b.path)) - Number(/\.md$/i.test(a.path));
    if (md) return md;
    return a.path < b.path ? -1 : 1;
  });
  return sorted[0]?.path ?? null;
}

/**
 * note path -> its links as [text as written, target note path or null], computed from the files
 * alone (the link syntax and front-matter are read by the service's parsers; which note a link
 * names is this file's own resolver).
 */
export function expectedGraph(vault: ReadonlyMap<string, string>): Map<string, [string, string | null][]> {
  const notes: VaultNote[] = [...vault].map(([path, text]) => ({
    path,
    aliases: path.endsWith(".md") ? readFrontMatter(text).aliases : [],
  }));
  const graph = new Map<string, [string, string | null][]>();
  for (const [path, text] of vault) {
    const links = path.endsWith(".md") ? parseLinks(text) : [];
    graph.set(
      path,
      links.map((l) => [l.text, resolveByScan(l.path, path, notes)]),
    );
  }
  return graph;
}
