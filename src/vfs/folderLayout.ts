// How the children of one folder are named: local files keep their names, remote items show
// their display name, and two that want the same name are told apart by a stable suffix.
import { disambiguated, displayName } from "./names.ts";
import type { DirNode, FileNode, LocalNode, Node } from "./treeNodes.ts";

/** The name a child would have with no duplicate beside it (local files keep theirs). */
export function wantedName(node: Node): string {
  if (node.kind === "local") return node.name;
  if (node.kind === "dir") return node.meta?.name ?? node.name;
  return node.meta ? displayName(node.meta.name, node.meta.type) : node.remoteName;
}

/**
 * Names `dir`'s children uniquely: local files keep theirs; remote items get their display name,
 * and duplicates get a stable suffix from their id (the oldest id keeps the plain name). True when
 * any child was named anew (every path at and below it changed).
 */
export function layOut(dir: DirNode): boolean {
  const before = new Map<Node, string>();
  for (const child of dir.children.values()) before.set(child, child.name);
  nameChildren(dir);
  for (const [child, name] of before) if (child.name !== name) return true;
  return false;
}

function nameChildren(dir: DirNode): void {
  const locals: LocalNode[] = [];
  const groups = new Map<string, (FileNode | DirNode)[]>();
  for (const child of dir.children.values()) {
    if (child.kind === "local") {
      locals.push(child);
      continue;
    }
    const want = wantedName(child);
    const group = groups.get(want) ?? [];
    group.push(child);
    groups.set(want, group);
  }
  dir.children.clear();
  dir.namedApart = undefined;
  // A name a note here was renamed away from (vim's `b.md` -> `b.md~`) is still that note's: a
  // file made under it continues the note (claims.ts), so no other note of that name takes it.
  const left = new Set<string>();
  for (const l of locals) {
    dir.children.set(l.name, l);
    if (l.ghostOf) left.add(l.ghostOf.shownAs);
  }
  for (const [want, group] of groups) {
    // Not-yet-uploaded notes first (the user just created that name), then by id.
    group.sort((a, b) => (a.id === null ? -1 : b.id === null ? 1 : a.id < b.id ? -1 : 1));
    for (const [i, node] of group.entries()) {
      const plain = i === 0 && !dir.children.has(want) && !left.has(want);
      if (!plain) {
        dir.namedApart ??= new Set();
        dir.namedApart.add(want);
      }
      const name = plain ? want : disambiguated(want, node.id ?? "pending");
      node.name = name;
      dir.children.set(name, node);
    }
  }
}
