// Local saves interleaved with remote edits, renames and deletes through the API. A remote change
// has no local-directory analogue, so this property checks the promise instead of a model: every
// save a program saw succeed is kept — after `txtfs sync` its bytes are the current content or a
// version of some note in the folder (the note itself, or its conflict copy, wherever a remote
// rename took it) — unless the same path was saved again locally with no remote change between
// (then the later save is the one that must be kept), the note was deleted remotely afterwards
// (with its versions: every save of that path before the delete may go), or the note was moved
// locally over another one (the moved note goes with its versions; the note there keeps its
// identity and takes the moved bytes). A save is followed by its note's id, not only by the path
// it was made under: a remote rename takes the note to another name (soak seeds 3123 and 3217).
// A remote edit is kept the same way: after `txtfs sync` its text is the current content of some
// note, unless a later operation touched that note (a remote edit or delete of it, or a local
// program at a path it had then, which may have seen the edit and replaced it as it may). Local
// saves made before it and still on their way must become conflict copies or land on it, never
// replace it (the versions keep every text, so only the current contents show such a loss).
// The mount must also end showing what the service holds.
import { createHash } from "node:crypto";
import fc from "fast-check";
import { q } from "../mount.ts";
import type { Api } from "../server.ts";
import type { Op } from "./ops.ts";
import { opScript } from "./ops.ts";
import { bash, type RunFailure, type RunStats, readManifests } from "./runner.ts";

export type RemoteOp =
  | { k: "redit"; p: string; text: string }
  | { k: "rrename"; p: string; to: string }
  | { k: "rdelete"; p: string };
type LocalOp = Extract<Op, { k: "rewrite" | "append" | "vim" | "sed" | "replace" | "mv" }>;
export type MixedOp = LocalOp | RemoteOp;

const NAMES = ["a.md", "b.md", "c.md"];
const name = fc.constantFrom(...NAMES);
const text = fc.constantFrom("apple\n", "banana split\n", "cat a\n", "remote a\n", "a\nb\n");
let marker = 0;

export const mixedArb: fc.Arbitrary<MixedOp> = fc.oneof(
  { arbitrary: fc.record({ k: fc.constant("rewrite" as const), p: name, text }), weight: 3 },
  { arbitrary: fc.record({ k: fc.constant("append" as const), p: name, text }), weight: 3 },
  {
    arbitrary: fc.record({ k: fc.constant("vim" as const), p: name, flavour: fc.constant("es" as const) }),
    weight: 2,
  },
  { arbitrary: fc.record({ k: fc.constant("sed" as const), p: name, bak: fc.constant(false) }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant("replace" as const), p: name, text }), weight: 1 },
  // A local rename is delivered alone: what it lands on must never become the base of the saves
  // made meanwhile unless it is what they were based on.
  { arbitrary: fc.record({ k: fc.constant("mv" as const), p: name, to: name }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("redit" as const), p: name, text }), weight: 3 },
  { arbitrary: fc.record({ k: fc.constant("rrename" as const), p: name, to: name }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("rdelete" as const), p: name }), weight: 1 },
);

const isRemote = (op: MixedOp): op is RemoteOp =>
  op.k === "redit" || op.k === "rrename" || op.k === "rdelete";

export function showMixed(op: MixedOp): string {
  if (op.k === "redit") return `# remote: PUT ${op.p} content ${JSON.stringify(op.text)}`;
  if (op.k === "rrename") return `# remote: PUT ${op.p} name ${op.to}`;
  if (op.k === "rdelete") return `# remote: DELETE ${op.p}`;
  return opScript(op);
}

export interface RemoteRunOptions {
  api: Api;
  /** The mount's root and the run's folder name in it. */
  mnt: string;
  folder: string;
  pauseMs: number;
  sync(): Promise<void>;
  stats?: RunStats;
}

const sha = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function folderNotes(api: Api, folder: string) {
  const res = await api.get("/api/me/files");
  const f = (res.body.folders as any[]).find((x) => x.name === folder && x.parentFolderId === null);
  if (!f) return { folderId: undefined, files: [] as any[] };
  return { folderId: f.id as string, files: (res.body.files as any[]).filter((x) => x.folderId === f.id) };
}

interface Claim {
  step: number;
  path: string;
  bytes: Buffer;
  live: boolean;
  /**
   * The note it was saved on (`user.txtfs.id` right after; none for a note not on the service
   * yet): a remote rename takes the note elsewhere, possibly before the mount shows it, so a
   * later local move of it is found by this, not by the path the save was made under.
   */
  note?: string;
}

/** The text of every version the service keeps of note `id`. */
async function versionTexts(api: Api, id: string): Promise<string[]> {
  const texts: string[] = [];
  const versions = await api.get(`/api/v1/files/${id}/versions?limit=100`);
  for (const v of versions.body.versions ?? []) {
    const one = await api.get(`/api/v1/files/${id}/versions/${v.version_number}`);
    if (one.status === 200) texts.push(String(one.body.version?.content ?? ""));
  }
  return texts;
}

/** Note `id`'s content (none if it is gone) and the hashes of it and of every version the service keeps. */
async function history(api: Api, id: string): Promise<{ content?: string; hashes: Set<string> }> {
  const hashes = new Set<string>();
  const note = await api.get(`/api/v1/files/${id}`);
  if (note.status !== 200) return { hashes };
  const content = String(note.body.content);
  hashes.add(sha(Buffer.from(content, "utf8")));
  const versions = await api.get(`/api/v1/files/${id}/versions?limit=100`);
  for (const v of versions.body.versions ?? []) hashes.add(String(v.content_hash).replace(/^sha256:/, ""));
  return { content, hashes };
}

/**
 * Deletes note `id` (at `path`) as someone else would. The saves that reached it go with it (its
 * versions too), so they are no longer owed; a save still on its way must re-create the note.
 * If-Match makes "reached" exact: a save delivered between the look and the delete is seen again.
 */
async function deleteRemotely(api: Api, id: string, path: string, claims: Claim[], unseen: Unseen[]) {
  // `path`: only for the error below.
  for (let attempt = 0; attempt < 10; attempt++) {
    const note = await api.get(`/api/v1/files/${id}`);
    if (note.status !== 200) return;
    const texts = [String(note.body.content), ...(await versionTexts(api, id))];
    const res = await api.delete(`/api/v1/files/${id}`, { "if-match": String(note.headers.get("etag")) });
    if (res.status === 412) continue;
    const hashes = new Set(texts.map((t) => sha(Buffer.from(t, "utf8"))));
    // By bytes, not by path: saves carry markers of their own, and a remote rename may have
    // taken the note from the name a save was made under.
    for (const c of claims) if (hashes.has(sha(c.bytes))) c.live = false;
    for (let u = unseen.length - 1; u >= 0; u--)
      if (texts.some((t) => t.includes(unseen[u]!.text))) unseen.splice(u, 1);
    return;
  }
  throw new Error(`remote delete of ${path}: the note kept changing`);
}

/** Shell that prints `LETTER:` and the id of the note at `path` (nothing for one not on the service yet). */
const noteOf = (path: string, letter: string) =>
  `printf '${letter}:%s\\n' "$(getfattr --only-values -n user.txtfs.id ${q(path)} 2>/dev/null)"`;
const noteIn = (stdout: string, letter: string) =>
  new RegExp(`^${letter}:(.+)$`, "m").exec(stdout)?.[1] || undefined;

type Unseen = { step: number; path: string; text: string; shown: string };

/** A remote edit that must stay current: `paths` are the names its note had since (remote renames). */
type RemoteClaim = { step: number; text: string; paths: Set<string>; owed: boolean };

export async function runMixed(ops: MixedOp[], o: RemoteRunOptions): Promise<RunFailure | undefined> {
  const dir = `${o.mnt}/${o.folder}`;
  // Each run writes texts of its own, so a claim can only be met by this run's saves.
  const tag = `${o.folder}-${++marker}`;
  const setup = await bash(
    `mkdir ${q(dir)} && cd ${q(dir)} && for n in ${NAMES.join(" ")}; do printf 'start %s ${tag}\\n' $n > $n; done`,
    "/",
  );
  if (setup.code !== 0) return { step: -1, problems: [`setup: ${setup.stderr}`] };
  await o.sync();
  const claims: Claim[] = [];
  const lastClaim = new Map<string, Claim>();
  const unseen: Unseen[] = [];
  const remoteClaims: RemoteClaim[] = [];
  // Local renames so far: a note the service knows by one name may show here under another.
  const localMoves: [string, string][] = [];
  const shownAt = (p: string) => {
    const names = new Set([p]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const [from, to] of localMoves)
        if (names.has(from) && !names.has(to)) {
          names.add(to);
          grew = true;
        }
    }
    return names;
  };
  for (const [i, op] of ops.entries()) {
    if (i > 0 && o.pauseMs > 0) await sleep(o.pauseMs);
    // Whatever touches a note a remote edit went to releases that edit (see the top); a rename
    // of it takes it along.
    for (const r of remoteClaims) {
      if (op.k === "mv" && r.paths.has(op.to)) r.owed = false;
      else if ((op.k === "rrename" || op.k === "mv") && r.paths.has(op.p)) r.paths.add(op.to);
      else if (r.paths.has(op.p)) r.owed = false;
    }
    if (isRemote(op)) {
      const { files } = await folderNotes(o.api, o.folder);
      const rec = files.find((f) => f.name === op.p);
      // A path that is not on the service (yet) has nothing to change remotely.
      if (!rec) continue;
      if (op.k === "redit") {
        const text = `${op.text}${tag} r${i}\n`;
        const res = await o.api.put(`/api/v1/files/${rec.id}`, { content: text });
        if (res.status === 200) remoteClaims.push({ step: i, text, paths: shownAt(op.p), owed: true });
      } else if (op.k === "rrename") {
        if (op.to === op.p || files.some((f) => f.name === op.to)) continue;
        // A save made on a note not on the service yet has no id to follow: it is this note's if
        // the service holds its bytes there.
        const { hashes } = await history(o.api, rec.id);
        for (const c of claims) if (!c.note && hashes.has(sha(c.bytes))) c.note = rec.id;
        await o.api.put(`/api/v1/files/${rec.id}`, { name: op.to });
      } else await deleteRemotely(o.api, rec.id, op.p, claims, unseen);
      continue;
    }
    if (op.k === "mv") {
      // Not a save: the saves of `p` go along, and those it replaced at `to` are no longer owed (a
      // program removed them, as `rm` would).
      if (op.to === op.p) continue;
      // A save whose note was not known right after it (a remote rename took the note from the
      // path before its id or bytes were read: soak seed 4808, `> b.md` as the feed moved that
      // note to a.md) belongs to the note moved now if the service holds its bytes there: the
      // move deletes that note with its versions.
      const moving = noteIn((await bash(noteOf(op.p, "N"), dir)).stdout, "N");
      if (moving && (unseen.length || claims.some((c) => !c.note))) {
        const { content, hashes } = await history(o.api, moving);
        for (const c of claims) if (!c.note && hashes.has(sha(c.bytes))) c.note = moving;
        const texts = [content ?? "", ...(await versionTexts(o.api, moving))];
        for (const u of unseen) if (texts.some((t) => t.includes(u.text))) u.path = op.p;
      }
      // The bytes at `p` before (B:) and at `to` right after (A:): what was moved.
      const r = await bash(
        `${noteOf(op.p, "N")}; printf 'B:%s\\n' "$(base64 -w0 < ${q(op.p)} 2>/dev/null)"; ( ${opScript(op)} ) >/dev/null 2>&1 </dev/null; rc=$?; ` +
          `[ $rc = 0 ] && { a=$(base64 -w0 < ${q(op.to)} 2>/dev/null) && printf 'A:%s\\n' "$a"; ${noteOf(op.to, "I")}; }; exit $rc`,
        dir,
      );
      if (r.code !== 0) continue;
      if (o.stats) o.stats.effective++;
      localMoves.push([op.p, op.to]);
      // A save of `p` that a remote edit replaced before the move (also between the look before it
      // and the rename itself) is kept only in the versions of p's note, which a move over another
      // note deletes (the note there keeps its identity).
      const seen = /^A:(.*)$/m.exec(r.stdout)?.[1] ?? /^B:(.*)$/m.exec(r.stdout)?.[1] ?? "";
      const moved = Buffer.from(seen, "base64");
      for (const c of claims) if (c.path === op.p && !c.bytes.equals(moved)) c.live = false;
      for (let u = unseen.length - 1; u >= 0; u--)
        if (unseen[u]!.path === op.p && !moved.toString().includes(unseen[u]!.text)) unseen.splice(u, 1);
      for (const c of claims) if (c.path === op.to) c.live = false;
      for (let u = unseen.length - 1; u >= 0; u--) if (unseen[u]!.path === op.to) unseen.splice(u, 1);
      for (const c of claims)
        if (c.path === op.p) {
          c.path = op.to;
          c.note = noteIn(r.stdout, "I");
        }
      // The saves of the moved note made under another name (a remote rename took it
      // here); what it carried is now the target note's.
      const movedNote = noteIn(r.stdout, "N");
      if (movedNote)
        for (const c of claims)
          if (c.note === movedNote) {
            if (!c.bytes.equals(moved)) c.live = false;
            c.path = op.to;
            c.note = noteIn(r.stdout, "I");
          }
      for (const u of unseen) if (u.path === op.p) u.path = op.to;
      const last = lastClaim.get(op.p);
      lastClaim.delete(op.p);
      if (last) lastClaim.set(op.to, last);
      else lastClaim.delete(op.to);
      continue;
    }
    // Local saves carry the step's marker, so each acknowledged save has bytes of its own.
    const withMarker: LocalOp =
      op.k === "rewrite" || op.k === "append" || op.k === "replace"
        ? { ...op, text: `${op.text}${tag} l${i}\n` }
        : op;
    // The bytes the program found (B:) and the bytes it left (A:).
    const p = q(op.p);
    const r = await bash(
      `printf 'B:%s\\n' "$(base64 -w0 < ${p} 2>/dev/null)"; ( ${opScript(withMarker)} ) >/dev/null 2>&1 </dev/null; rc=$?; ` +
        `[ $rc = 0 ] && { a=$(base64 -w0 < ${p} 2>/dev/null) && printf 'A:%s\\n' "$a"; ${noteOf(op.p, "I")}; }; exit $rc`,
      dir,
    );
    if (o.stats && r.code === 0) o.stats.effective++;
    if (r.code !== 0) continue;
    const before = Buffer.from(/^B:(.*)$/m.exec(r.stdout)?.[1] ?? "", "base64");
    // No A: the path was gone right after (renamed or deleted remotely meanwhile): the save's
    // bytes are unknown, but a text it wrote must still be found on the service.
    const shown = /^A:(.*)$/m.exec(r.stdout)?.[1];
    const after = Buffer.from(shown ?? "", "base64");
    // The previous save of this path is replaced only if the program saw it: if the mount showed
    // other bytes (a remote change came in), that save must still be kept somewhere.
    // Saves carry markers of their own, so bytes seen at any path are that save's: a remote
    // rename may have taken it to another name (the mount applies it a moment later).
    const prev = lastClaim.get(op.p);
    if (prev?.bytes.equals(before)) prev.live = false;
    if (before.length > 0) for (const c of claims) if (c.bytes.equals(before)) c.live = false;
    // A save not seen right after (a remote rename took its note elsewhere) that the program finds
    // here now, and replaces: seen after all, and replaced as a program may (the journal then
    // sends only the newer bytes; soak seed 1725: `c.md` written, renamed remotely to `b.md`,
    // rewritten through `b.md` before the first save left).
    const found = before.toString();
    for (let u = unseen.length - 1; u >= 0; u--) if (found.includes(unseen[u]!.text)) unseen.splice(u, 1);
    // A write that succeeded but does not show in the read right after (a remote change may have
    // come in between): its text must still be found on the service, in some note or version.
    if ("text" in withMarker && !after.toString().includes(withMarker.text))
      unseen.push({ step: i, path: op.p, text: withMarker.text, shown: after.toString() });
    if (shown === undefined) continue;
    const claim = { step: i, path: op.p, bytes: after, live: true, note: noteIn(r.stdout, "I") };
    claims.push(claim);
    lastClaim.set(op.p, claim);
  }

  await o.sync();
  // Every live claim: the current content or a version of some note in the folder.
  const { files } = await folderNotes(o.api, o.folder);
  const hashes = new Set<string>();
  // Contents, not by name: two notes may share a name (a note re-created where another was renamed
  // to meanwhile, conflict copies made in one second); the mount shows the second with a suffix.
  const current: string[] = [];
  for (const f of files) {
    const note = await history(o.api, f.id);
    if (note.content === undefined) continue;
    current.push(note.content);
    for (const h of note.hashes) hashes.add(h);
  }
  const problems: string[] = [];
  if (unseen.length) {
    const texts: string[] = [...current];
    for (const f of files) texts.push(...(await versionTexts(o.api, f.id)));
    for (const u of unseen)
      if (!texts.some((t) => t.includes(u.text)))
        problems.push(
          `lost save: step ${u.step} wrote ${JSON.stringify(u.text)} to ${u.path} (exit 0); a read right after showed ${JSON.stringify(u.shown)}; not on the service`,
        );
  }
  for (const c of claims)
    if (c.live && !hashes.has(sha(c.bytes)))
      problems.push(
        `lost save: step ${c.step} saved ${c.path} as ${JSON.stringify(c.bytes.toString())}; not on the service`,
      );
  for (const r of remoteClaims)
    if (r.owed && !current.includes(r.text))
      problems.push(
        `lost remote edit: step ${r.step} put ${JSON.stringify(r.text)} (nothing touched that note after it); no note holds it now`,
      );

  // The mount ends showing the service's notes (the change feed has about a second to bring them).
  // Compared as contents, not names: two conflict copies made in one second share a name on the
  // service, and the mount shows the second with a suffix (README: two notes with one name).
  const want = [...current].sort();
  let mismatch: string[] = [];
  for (let attempt = 0; attempt < 15; attempt++) {
    const [tree] = await readManifests([dir]);
    // A name listed that could not be read is manifest.py's "!<error>": shown as that, not decoded.
    const textOf = (b: string) =>
      b.startsWith("!")
        ? `<listed, but reading it failed: ${b.slice(1)}>`
        : Buffer.from(b, "base64").toString();
    const shown = Object.entries(tree!.files)
      .filter(([p]) => p.endsWith(".md"))
      .map(([, b]) => textOf(b))
      .sort();
    mismatch = [];
    if (JSON.stringify(shown) !== JSON.stringify(want)) {
      const extra = Object.entries(tree!.files)
        .filter(([p, b]) => p.endsWith(".md") && !want.includes(textOf(b)))
        .map(([p]) => p);
      mismatch.push(
        `the mount shows ${JSON.stringify(shown)}, the service holds ${JSON.stringify(want)} (shown only here: ${JSON.stringify(extra)})`,
      );
    }
    if (!mismatch.length) break;
    await sleep(200);
  }
  problems.push(...mismatch.map((p) => `after sync: ${p}`));
  return problems.length ? { step: ops.length, problems } : undefined;
}
