// What a path under `.txtfs/` is: a folder, a generated file, or a symlink to a note. Each area
// (versions/, tags/, related/, search/, comments/) answers with these; control.ts turns them into
// stat answers. Nothing here is in the tree: the tree holds notes, `.txtfs/` is a view of them.
import { posix } from "node:path";
import type { DirNode, FileNode, LocalNode, Node, Tree } from "../tree.ts";

export const CONTROL_DIR = ".txtfs";
export const CONTROL_PATH = `/${CONTROL_DIR}`;

export type Entry =
  | { type: "dir"; writable?: boolean; mtimeMs?: number }
  | { type: "file"; size: number; mtimeMs: number; writable?: boolean }
  | { type: "link"; target: string; mtimeMs?: number };

/** The parts below `.txtfs/` of a mount path, or undefined when it is not in the control directory. */
export function controlParts(path: string): string[] | undefined {
  if (path !== CONTROL_PATH && !path.startsWith(`${CONTROL_PATH}/`)) return undefined;
  return path
    .slice(CONTROL_PATH.length)
    .split("/")
    .filter((p) => p !== "");
}

/** A symlink's text pointing from `linkPath` (a mount path) to `notePath`: relative, so it works from any mountpoint. */
export function linkTo(linkPath: string, notePath: string): string {
  return posix.relative(posix.dirname(linkPath), notePath);
}

/** `01 name.md`, `02 other.md`...: the rank first, so `ls` shows the ranking. */
export function rankedName(rank: number, name: string): string {
  return `${String(rank).padStart(2, "0")} ${name}`;
}

/** Notes named the same in different folders get ` (2)`, ` (3)`... before the extension, in path order. */
export function uniqueNames(notes: { name: string }[]): string[] {
  const seen = new Map<string, number>();
  return notes.map(({ name }) => {
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    if (n === 1) return name;
    const dot = name.lastIndexOf(".");
    return dot > 0 ? `${name.slice(0, dot)} (${n})${name.slice(dot)}` : `${name} (${n})`;
  });
}

/**
 * versions/, related/ and comments/ mirror the folders of the mount: `parts` walks folders until
 * it reaches a note; what follows the note is `rest`. Local-only files are not notes: not mirrored.
 */
export function resolveMirror(
  tree: Tree,
  parts: string[],
): { node: DirNode | FileNode; rest: string[] } | undefined {
  const found = resolveMirrorWith(tree, parts, false);
  return found?.node.kind === "local" ? undefined : (found as { node: DirNode | FileNode; rest: string[] });
}

/** As resolveMirror, and `attachments` (the service's files that are not notes) count as items too. */
export function resolveMirrorWith(
  tree: Tree,
  parts: string[],
  attachments: boolean,
): { node: DirNode | FileNode | LocalNode; rest: string[] } | undefined {
  let node: DirNode | FileNode | LocalNode = tree.root;
  for (let i = 0; i < parts.length; i++) {
    if (node.kind !== "dir") return undefined;
    const child = node.children.get(parts[i]!);
    if (!child || !mirrored(child, attachments)) return undefined;
    node = child;
    if (node.kind !== "dir") return { node, rest: parts.slice(i + 1) };
  }
  return { node, rest: [] };
}

/** The folders and notes (and, asked, attachments) a mirrored folder shows. */
export function mirrorChildren(dir: DirNode, attachments = false): string[] {
  const names: string[] = [];
  for (const [name, child] of dir.children) if (mirrored(child, attachments)) names.push(name);
  return names;
}

function mirrored(node: Node, attachments: boolean): boolean {
  if (node.kind === "local") return attachments && Boolean(node.attachment?.id);
  return node.kind === "file" || !node.localOnly;
}

/** Answers kept for a moment (`ls -l` lists, then stats every entry: one request for all). */
export class Recent<V> {
  private readonly kept = new Map<string, { at: number; value: Promise<V> }>();
  private readonly ttlMs: number;
  private readonly max: number;

  constructor(ttlMs: number, max = 1000) {
    this.ttlMs = ttlMs;
    this.max = max;
  }

  get(key: string, fetch: () => Promise<V>): Promise<V> {
    const hit = this.kept.get(key);
    if (hit && performance.now() - hit.at < this.ttlMs) return hit.value;
    const value = fetch();
    this.kept.delete(key);
    this.kept.set(key, { at: performance.now(), value }); // elapsed time: no wall clock set back keeps it
    if (this.kept.size > this.max) this.kept.delete(this.kept.keys().next().value as string);
    // A failure is not kept: the next call asks again.
    value.catch(() => {
      if (this.kept.get(key)?.value === value) this.kept.delete(key);
    });
    return value;
  }

  /** Forgets every key starting with `prefix` (our own change: shown at once). */
  drop(prefix: string): void {
    for (const key of [...this.kept.keys()]) if (key.startsWith(prefix)) this.kept.delete(key);
  }
}

/** How long `.txtfs/` answers are kept: well within the 2 s in which a change must show. */
export const FRESH_MS = 1000;
