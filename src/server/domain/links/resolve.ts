// Which note a link names, by Obsidian's rules. A link's path is relative to the linking note's
// folder, or to the vault root (the account's root); a bare name names a note by its name without
// `.md`/`.txt`, case-insensitively. When several notes match, the one in the linking note's own
// folder wins, else the shortest path. A front-matter alias counts as a name when no note's name
// or path matches. Pure: the candidates (every note sharing the link's keys) are given.

export interface NoteAt {
  id: string;
  name: string;
  /** Folder names from the account's root down to the note's folder. */
  folders: readonly string[];
  aliases: readonly string[];
}

const NOTE_EXT = /\.(md|txt)$/i;

const fold = (s: string) => s.normalize("NFC").toLowerCase();

/** The key a note is found by through its name: lower case, without `.md`/`.txt`. */
export function nameKey(name: string): string {
  return fold(name).replace(NOTE_EXT, "");
}

/** An alias, or a link's whole path, as an alias key. */
export function aliasKey(s: string): string {
  return fold(s.trim());
}

/** A link path's segments: `/`-separated, empty and `.` ones dropped (a leading `/` is the root). */
function segments(path: string): string[] {
  return path
    .replace(/\\/g, "/")
    .split("/")
    .map((s) => s.trim())
    .filter((s) => s && s !== ".");
}

/** The keys a link is looked up by: its last segment's name key, and its whole path as an alias. */
export function linkKeys(path: string): { name: string; alias: string } {
  const segs = segments(path);
  return { name: nameKey(segs.at(-1) ?? ""), alias: aliasKey(segs.join("/")) };
}

/** `from` + `segs`, `..` climbing; null when it climbs above the root. */
function join(from: readonly string[], segs: readonly string[]): string[] | null {
  const out = [...from];
  for (const s of segs) {
    if (s === "..") {
      if (!out.length) return null;
      out.pop();
    } else out.push(s);
  }
  return out;
}

/** Does the note's path end with `segs` (folders compared case-insensitively, the name by key)? */
function endsWith(note: NoteAt, segs: readonly string[]): boolean {
  const last = segs.at(-1)!;
  // [[Note.md]] names Note.md only; [[Note]] names Note.md or Note.txt.
  if (NOTE_EXT.test(last) ? fold(note.name) !== fold(last) : nameKey(note.name) !== fold(last)) return false;
  const folders = segs.slice(0, -1);
  if (folders.length > note.folders.length) return false;
  const tail = note.folders.slice(note.folders.length - folders.length);
  return folders.every((f, i) => fold(f) === fold(tail[i]!));
}

const samePlace = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((f, i) => fold(f) === fold(b[i]!));

const pathOf = (n: NoteAt) => [...n.folders, n.name].join("/");

/** Nearest first: the linking note's folder, then fewer folders, shorter path, .md before .txt, path. */
function nearest(from: readonly string[], notes: NoteAt[]): NoteAt | null {
  const ranked = [...notes].sort((a, b) => {
    const here = Number(samePlace(b.folders, from)) - Number(samePlace(a.folders, from));
    if (here) return here;
    if (a.folders.length !== b.folders.length) return a.folders.length - b.folders.length;
    const pa = pathOf(a);
    const pb = pathOf(b);
    if (pa.length !== pb.length) return pa.length - pb.length;
    const md = Number(/\.md$/i.test(b.name)) - Number(/\.md$/i.test(a.name));
    if (md) return md;
    return pa < pb ? -1 : pa > pb ? 1 : a.id < b.id ? -1 : 1;
  });
  return ranked[0] ?? null;
}

/**
 * The note `path` names, linked from a note in folder `from`, among `candidates`; null when none.
 * Exact paths first (relative to the linking note, then from the root), then the nearest note
 * whose path ends with the link's, then the nearest with the link as an alias.
 */
export function resolveLink(
  path: string,
  from: readonly string[],
  candidates: readonly NoteAt[],
): string | null {
  const segs = segments(path);
  if (!segs.length) return null;
  const rooted = path.trimStart().startsWith("/");
  const exact = (place: string[] | null) =>
    place
      ? nearest(
          from,
          candidates.filter((n) => endsWith(n, place) && n.folders.length === place.length - 1),
        )
      : null;
  if (segs.length > 1 || rooted || /^\s*\.\.?\//.test(path)) {
    const hit = (!rooted && exact(join(from, segs))) || exact(join([], segs));
    if (hit) return hit.id;
  }
  if (!segs.includes("..")) {
    const byName = nearest(
      from,
      candidates.filter((n) => endsWith(n, segs)),
    );
    if (byName) return byName.id;
  }
  const alias = aliasKey(segs.join("/"));
  return (
    nearest(
      from,
      candidates.filter((n) => n.aliases.some((a) => aliasKey(a) === alias)),
    )?.id ?? null
  );
}
