// What must hold once faults stop and every device has synced (issue 50): no acknowledged save
// lost, every device showing the service's tree byte for byte, every device's feed contiguous and
// in commit order with each item's last change seen, and identities kept through renames.
import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";
import { TxtfsClient } from "../../../src/client/api.ts";
import { contentHash } from "../../../src/lib/contentHash.ts";
import type { Vfs } from "../../../src/vfs/vfs.ts";
import type { Api } from "../../helpers/server.ts";
import { vfsManifest } from "../model/manifest.ts";
import type { Incarnation, SimWorld } from "./world.ts";

export const ROOT = "sim";

/** A save a program was told succeeded, as it read it back right after (its exact bytes). */
export interface Acked {
  device: number;
  step: number;
  path: string;
  hash: string;
  bytes: string;
  /** A file that is not a note: owed as an attachment's bytes (hash: SHA-256 hex), not a note's. */
  attachment?: boolean;
  /** Released by a later operation that may take it away by design (see runner.ts). */
  released?: string;
}

export interface Ident {
  id: string;
  from: string;
  to: string;
  step: number;
  released?: string;
}

interface ServiceNote {
  id: string;
  path: string;
  content: string;
}

interface ServiceAttachment {
  id: string;
  path: string;
  bytes: Buffer;
  /** Every version's SHA-256 (the current one included). */
  hashes: string[];
}

const folderPaths = (folders: any[]) => {
  const byId = new Map(folders.map((f) => [f.id, f]));
  const pathOf = (id: string | null): string | undefined => {
    if (id === null) return "";
    const f = byId.get(id);
    if (!f) return undefined;
    const parent = pathOf(f.parentFolderId);
    return parent === undefined ? undefined : parent ? `${parent}/${f.name}` : f.name;
  };
  return pathOf;
};
const under = (p: string | undefined) =>
  p === ROOT ? "" : p?.startsWith(`${ROOT}/`) ? p.slice(ROOT.length + 1) : undefined;

/** The attachments under the shared folder on the service: path, bytes, every version's hash. */
export async function serviceAttachments(api: Api, key: string, url: string): Promise<ServiceAttachment[]> {
  const client = new TxtfsClient({ url, key, source: "test", timeoutMs: 10_000 });
  const { folders } = (await api.get("/api/me/files")).body as { folders: any[] };
  const pathOf = folderPaths(folders);
  const out: ServiceAttachment[] = [];
  for (const a of await client.attachments.all()) {
    const dir = under(pathOf(a.folderId));
    if (dir === undefined) continue;
    const got = await client.attachments.read(a.id).catch(() => null);
    if (!got) continue; // deleted since the listing
    const versions = await client.attachments.versions(a.id).catch(() => []);
    out.push({
      id: a.id,
      path: dir ? `${dir}/${a.name}` : a.name,
      bytes: got.bytes,
      hashes: [a.contentHash, ...versions.map((v) => v.contentHash)],
    });
  }
  return out;
}

/** The notes under the shared folder on the service, with their contents. */
export async function serviceNotes(api: Api): Promise<{ notes: ServiceNote[]; dirs: string[] }> {
  const { files, folders } = (await api.get("/api/me/files")).body as { files: any[]; folders: any[] };
  const pathOf = folderPaths(folders);
  const notes: ServiceNote[] = [];
  for (const f of files) {
    const dir = under(pathOf(f.folderId));
    if (dir === undefined) continue;
    const body = await api.get(`/api/v1/files/${f.id}`);
    if (body.status !== 200) continue; // deleted since the listing
    notes.push({ id: f.id, path: dir ? `${dir}/${f.name}` : f.name, content: String(body.body.content) });
  }
  const dirs = folders
    .map((f) => under(pathOf(f.id)))
    .filter((p): p is string => !!p)
    .sort();
  return { notes, dirs };
}

/** Every content hash a note's versions hold (the current one included). */
async function versionHashes(api: Api, id: string): Promise<string[]> {
  const out: string[] = [];
  let before = "";
  for (let page = 0; page < 50; page++) {
    const res = await api.get(`/api/v1/files/${id}/versions?limit=100${before}`);
    if (res.status !== 200) break;
    for (const v of res.body.versions as any[]) out.push(v.contentHash ?? v.content_hash);
    if (!res.body.hasMore) break;
    before = `&before=${res.body.nextBefore}`;
  }
  return out;
}

/** A path as two notes or folders of one name show here (`d1 (2ef197)/a (cq32q2).md`), back to the service's. */
const unsuffixed = (path: string) =>
  path
    .split("/")
    .map((seg) => seg.replace(/ \([0-9a-z]{6}\)(?=(\.[^./]+)?$)/, ""))
    .join("/");
export const isNoteName = (p: string) => p.endsWith(".md") || p.endsWith(".txt");
const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/**
 * Convergence and identity: every device shows exactly the service's notes under the shared folder,
 * each at its path (a second note of one name under its shown name), with its bytes and its id.
 * A device keeping bytes that are not text at a path (a local-only file, by design) is not asked
 * for the service's note there: the file may stand for it (hidden), or be a file of its own beside
 * it (then the note shows under a suffixed name, and must match).
 */
export async function convergence(
  world: SimWorld,
  service: { notes: ServiceNote[]; attachments: ServiceAttachment[] },
): Promise<string[]> {
  const problems: string[] = [];
  const manifests = await Promise.all(
    world.devices.map((d) =>
      vfsManifest(d.now.vfs, `/${ROOT}`, { xattrs: true }).catch((err: Error) => {
        throw new Error(
          `dev${d.n}: its tree could not be walked (root shows ${JSON.stringify([...d.now.vfs.readdir("/")])}): ${err.message}`,
        );
      }),
    ),
  );
  const byId = new Map(service.notes.map((n) => [n.id, n]));
  for (const [i, m] of manifests.entries()) {
    const keptLocal = new Set<string>();
    for (const [p, b64] of Object.entries(m.files))
      if (isNoteName(p) && !b64.startsWith("!") && !isUtf8(Buffer.from(b64, "base64"))) keptLocal.add(p);
    const seen = new Set<string>();
    for (const [p, b64] of Object.entries(m.files)) {
      if (!isNoteName(p) || keptLocal.has(p)) continue;
      const id = m.ids[p];
      const note = id ? byId.get(id) : undefined;
      if (b64.startsWith("!")) problems.push(`dev${i}: ${p}: ${b64.slice(1)}`);
      else if (!id) problems.push(`dev${i}: ${p} has no note id after every device synced`);
      else if (!note) problems.push(`dev${i}: ${p} (${id}) is not a note on the service`);
      else {
        seen.add(id);
        if (unsuffixed(p) !== note.path)
          problems.push(`dev${i}: ${id} shown at ${p}, on the service at ${note.path}`);
        const text = Buffer.from(b64, "base64").toString("utf8");
        if (text !== note.content)
          problems.push(
            `dev${i}: ${p} shows ${JSON.stringify(text)}, the service has ${JSON.stringify(note.content)}`,
          );
      }
    }
    for (const note of service.notes)
      if (!seen.has(note.id) && !keptLocal.has(note.path))
        problems.push(`dev${i}: does not show ${note.path} (${note.id}), which the service has`);
    problems.push(...attachmentsShown(i, m.files, keptLocal, world.devices[i]!.now.vfs, service.attachments));
  }
  if (problems.length) {
    // What each side holds, for the report.
    problems.push(`  service: ${service.notes.map((n) => `${n.path}=${n.id.slice(-6)}`).join(" ")}`);
    problems.push(
      `  service attachments: ${service.attachments.map((a) => `${a.path}=${a.id.slice(-6)}:${a.bytes.length}B:${sha256(a.bytes).slice(0, 8)}`).join(" ")}`,
    );
    for (const [i, m] of manifests.entries())
      problems.push(
        `  dev${i}: ${Object.keys(m.files)
          .map((p) => `${p}=${(m.ids[p] ?? "-").slice(-6)}`)
          .join(" ")}`,
      );
  }
  return problems;
}

/**
 * Every device shows exactly the service's attachments under the shared folder, byte for byte, at
 * their paths (a folder of a name two folders have under its suffixed name): each file that is not
 * a note (or a note's name holding bytes that are not text, unless the device keeps it local) is one
 * of them, and each of them is on every device.
 */
function attachmentsShown(
  i: number,
  files: Record<string, string>,
  keptLocal: Set<string>,
  vfs: Vfs,
  attachments: ServiceAttachment[],
): string[] {
  const problems: string[] = [];
  const local = new Set(
    vfs
      .localOnly()
      .map((l) => l.path)
      .filter((p) => p.startsWith(`/${ROOT}/`))
      .map((p) => p.slice(ROOT.length + 2)),
  );
  // Path (unsuffixed) -> the hashes shown there, as a multiset on both sides.
  const shown = new Map<string, string[]>();
  for (const [p, b64] of Object.entries(files)) {
    if (isNoteName(p) && !keptLocal.has(p)) continue; // a note (convergence above)
    if (local.has(p)) continue; // local by design: localKept says whether it may be
    if (b64.startsWith("!")) {
      problems.push(`dev${i}: ${p}: ${b64.slice(1)}`);
      continue;
    }
    const key = unsuffixed(p);
    shown.set(key, [...(shown.get(key) ?? []), sha256(Buffer.from(b64, "base64"))]);
  }
  const want = new Map<string, string[]>();
  for (const a of attachments) want.set(a.path, [...(want.get(a.path) ?? []), sha256(a.bytes)]);
  const describe = (hs: string[] | undefined) =>
    hs
      ? hs
          .map((h) => h.slice(0, 8))
          .sort()
          .join(",")
      : "nothing";
  for (const p of new Set([...shown.keys(), ...want.keys()])) {
    const a = describe(shown.get(p));
    const b = describe(want.get(p));
    if (a === b) continue;
    if (!want.has(p)) problems.push(`dev${i}: shows ${p} (${a}), which is no attachment on the service`);
    else if (!shown.has(p) && [...local].some((l) => unsuffixed(l) === p)) continue;
    else problems.push(`dev${i}: attachment ${p} shows ${a}, the service has ${b}`);
  }
  return problems;
}

/**
 * Nothing kept on a device that should be on the service: every local-only file under the shared
 * folder is a note's name holding bytes that are not text (a note once: local by design) or a name
 * the mount keeps local by design (an editor's backup `a.md~` that vim left when the folder it
 * saved in was renamed under it: excluded by `*~`). And no save refused for good (none of the
 * faults makes one: a refusal is the service's no, never a network's).
 */
export function localKept(world: SimWorld): string[] {
  const out: string[] = [];
  const byDesign = (l: { path: string; why: string }) =>
    (isNoteName(l.path) && /UTF-8/.test(l.why)) || l.why.startsWith("excluded by ");
  for (const d of world.devices) {
    for (const l of d.now.vfs.localOnly())
      if (l.path.startsWith(`/${ROOT}/`) && !byDesign(l))
        out.push(`dev${d.n}: ${l.path} kept local-only (${l.why})`);
    for (const r of d.now.vfs.takeRefused())
      out.push(
        `dev${d.n}: a save refused: ${r.path}: ${r.reason}${r.keptAs ? ` (kept as ${r.keptAs})` : ""}`,
      );
  }
  return out;
}

/** No acknowledged save lost: its bytes are the content or a version of some note on the service. */
export async function savesKept(
  api: Api,
  service: { notes: ServiceNote[]; attachments: ServiceAttachment[] },
  acked: Acked[],
): Promise<string[]> {
  const owed = acked.filter((a) => !a.released);
  if (owed.length === 0) return [];
  const have = new Set<string>();
  if (owed.some((a) => !a.attachment))
    for (const n of service.notes) for (const h of await versionHashes(api, n.id)) have.add(h);
  for (const a of service.attachments) for (const h of a.hashes) have.add(h);
  const show = (a: Acked) => {
    const b = Buffer.from(a.bytes, "base64");
    return a.attachment
      ? `${b.length} bytes ${b.subarray(0, 24).toString("hex")}`
      : JSON.stringify(b.toString());
  };
  return owed
    .filter((a) => !have.has(a.hash))
    .map(
      (a) =>
        `lost: dev${a.device}'s save of ${a.path} at step ${a.step} (${show(a)}) is in no ${a.attachment ? "attachment" : "note"} or version on the service`,
    );
}

/** The identity scenarios: the note edited on one device and renamed on another kept its id. */
export function identities(service: { notes: ServiceNote[] }, idents: Ident[]): string[] {
  const byId = new Map(service.notes.map((n) => [n.id, n]));
  const out: string[] = [];
  for (const x of idents) {
    if (x.released) continue;
    const n = byId.get(x.id);
    if (!n)
      out.push(`identity: note ${x.id} (renamed to ${x.to} at step ${x.step}) is gone from the service`);
    else if (n.path !== x.to)
      out.push(`identity: note ${x.id} is at ${n.path}, renamed to ${x.to} at step ${x.step}`);
  }
  return out;
}

/**
 * The feed as each device received it: after each listing, pages asked from exactly the cursor the
 * one before ended at (no gap), records in commit order, none twice; and at the end every item's
 * last change since the listing among them (a tombstone for each delete).
 */
export function feedProblems(world: SimWorld, incarnations: Incarnation[], head: number): string[] {
  const out: string[] = [];
  const last = new Map<string, number>();
  for (const r of world.witnessed) last.set(`${r.kind}:${r.id}`, r.seq);
  for (const [i, inc] of incarnations.entries()) {
    const live = !inc.dead;
    const name = `dev incarnation ${i}${live ? "" : " (killed)"}`;
    let cursor: number | undefined;
    let prev = -1;
    const got = new Set<number>();
    for (const page of inc.pages) {
      if (page.from === -1) {
        cursor = page.cursor;
        prev = page.cursor;
        got.clear();
        continue;
      }
      if (cursor === undefined) {
        out.push(`${name}: a feed page before any listing`);
        continue;
      }
      if (page.from !== cursor)
        out.push(`${name}: asked the feed from ${page.from}, its last page ended at ${cursor}`);
      for (const s of page.seqs) {
        if (s <= prev) out.push(`${name}: record ${s} after ${prev} (not in commit order, or twice)`);
        if (got.has(s)) out.push(`${name}: record ${s} received twice`);
        if (s > page.cursor || s <= page.from)
          out.push(`${name}: record ${s} outside its page (${page.from}, ${page.cursor}]`);
        got.add(s);
        prev = Math.max(prev, s);
      }
      cursor = page.cursor;
    }
    if (!live || cursor === undefined) continue;
    if (cursor < head) out.push(`${name}: its feed is at ${cursor}, the service's at ${head}`);
    const listed = [...inc.pages].reverse().find((p) => p.from === -1)!.cursor;
    for (const [item, seq] of last)
      if (seq > listed && seq <= cursor && !got.has(seq))
        out.push(`${name}: never received ${item}'s last change (record ${seq})`);
  }
  return out;
}

export { contentHash };

/** Reads `path` on `vfs` whole: what the program saw it save (undefined if it is not there). */
export async function readBack(vfs: Vfs, path: string): Promise<Buffer | undefined> {
  try {
    const st = await vfs.getattr(path);
    const fd = await vfs.open(path, 0);
    try {
      return await vfs.read(fd, st.size + 4096, 0);
    } finally {
      await vfs.release(fd);
    }
  } catch {
    return undefined;
  }
}
