// Runs one sequence of VfsOps on a fresh folder of the Vfs and on the model (a local directory), and
// says where they first differ: an operation's outcome (0 or its errno), the names and bytes shown,
// a note's id and tags (the FUSE model test's IdentityModel), a conflict copy or refused save where
// none may be, and after each sync (and at the end) the notes on the service.
//
// Remote operations run once everything made here is delivered, and the Vfs must show them before
// the next step: then there is exactly one right outcome, the remote one. (Remote edits racing
// local saves have several, and are the FUSE model test's remote property.)
import { constants as fsc, mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Vfs } from "../../../src/vfs/vfs.ts";
import type { Op } from "../../helpers/model/ops.ts";
import {
  IdentityModel,
  localManifest,
  type Manifest,
  type RunFailure,
  type RunStats,
  serviceDiff,
  treeDiff,
} from "../../helpers/model/runner.ts";
import type { Api } from "../../helpers/server.ts";
import { applyToModel, applyToVfs, type Outcome } from "./apply.ts";
import { vfsManifest } from "./manifest.ts";
import type { VfsOp } from "./ops.ts";
import type { VfsWorld } from "./world.ts";

/** The notes every run starts with, delivered before its first operation (the FUSE model's too). */
export const SETUP: VfsOp[] = [
  { k: "mkdir", d: "d1" },
  { k: "rewrite", p: "a.md", text: "banana\ncat\n" },
  { k: "rewrite", p: "b.md", text: "apple pie\n" },
  { k: "rewrite", p: "c.txt", text: "abc" },
  { k: "rewrite", p: "d1/a.md", text: "cat\n" },
];
export const SETUP_TEXT = "mkdir d1, a.md, b.md, c.txt, d1/a.md, delivered";

/** How long the Vfs may take to show a remote change (the feed is a long poll: it comes at once). */
const REMOTE_SHOWN_MS = 10_000;

let runs = 0;

/** Milliseconds spent per operation kind (its comparison included), for the test's report. */
export const timeByKind: Record<string, number> = {};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The operation in the FUSE model's terms, for its IdentityModel (renames and tags matter there). */
function identityOp(op: VfsOp): Op {
  if (op.k === "mv" || op.k === "rrename") return { k: "mv", p: op.p, to: op.to };
  if (op.k === "tag") return { k: "tag", p: op.p, tags: op.tags };
  return { k: "rm", p: "" };
}

/** A folder rename takes the notes inside along: so does the identity model. */
function moveTokens(identity: IdentityModel, from: string, to: string) {
  for (const [p, tok] of [...identity.tokens])
    if (p.startsWith(`${from}/`)) {
      identity.tokens.delete(p);
      identity.tokens.set(`${to}${p.slice(from.length)}`, tok);
    }
}

interface Remote {
  files: Map<string, { id: string; content?: string }>;
  folders: Map<string, string>;
}

/** The run's notes and folders on the service, by path below the run's folder. */
async function remoteOf(api: Api, folder: string): Promise<Remote> {
  const { files, folders } = (await api.get("/api/me/files")).body as { files: any[]; folders: any[] };
  const byId = new Map(folders.map((f) => [f.id, f]));
  const pathOf = (id: string | null): string | undefined => {
    if (id === null) return "";
    const f = byId.get(id);
    if (!f) return undefined;
    const parent = pathOf(f.parentFolderId);
    return parent === undefined ? undefined : parent ? `${parent}/${f.name}` : f.name;
  };
  const out: Remote = { files: new Map(), folders: new Map() };
  const prefix = `${folder}/`;
  for (const f of folders) {
    const p = pathOf(f.id);
    if (p === folder) out.folders.set("", f.id);
    else if (p?.startsWith(prefix)) out.folders.set(p.slice(prefix.length), f.id);
  }
  for (const f of files) {
    const dir = pathOf(f.folderId);
    if (dir === folder) out.files.set(f.name, { id: f.id });
    else if (dir?.startsWith(prefix)) out.files.set(`${dir.slice(prefix.length)}/${f.name}`, { id: f.id });
  }
  return out;
}

export interface RunContext {
  world: VfsWorld;
  api: Api;
}

export async function runVfsOps(
  ops: VfsOp[],
  ctx: RunContext,
  stats?: RunStats,
): Promise<RunFailure | undefined> {
  const folder = `r${++runs}`;
  const root = `/${folder}`;
  const model = mkdtempSync(join(tmpdir(), "txtfs-vfsmodel-tree-"));
  try {
    return await run(ops, ctx, folder, root, model, stats);
  } finally {
    rmSync(model, { recursive: true, force: true });
  }
}

async function run(
  ops: VfsOp[],
  { world, api }: RunContext,
  folder: string,
  root: string,
  modelDir: string,
  stats: RunStats | undefined,
): Promise<RunFailure | undefined> {
  const vfs = () => world.vfs;
  const identity = new IdentityModel();
  const view = { api: () => api, folder, sync: async () => void (await vfs().drain()) };
  let conflictsSeen = vfs().conflicts.length;
  let refusedSeen = vfs().refused.length;
  let lastKills = world.kills;

  await vfs().mkdir(root, 0o755);
  for (const op of SETUP) {
    const t = await applyToVfs(vfs(), root, op as never);
    const m = applyToModel(modelDir, op as never);
    if (t !== 0 || m !== 0)
      return { step: -1, problems: [`setup ${JSON.stringify(op)}: vfs ${t} model ${m}`] };
  }
  const left = await vfs().drain();
  if (left) return { step: -1, problems: [`setup: ${left} saves left after a drain`] };
  let target = await vfsManifest(vfs(), root, { xattrs: true });
  let modelTree = localManifest(modelDir);
  identity.sync(modelTree);
  const setupProblems = [...treeDiff(target, modelTree), ...identity.check(target, "after setup")];
  if (setupProblems.length) return { step: -1, problems: setupProblems };

  /** After a drain: what the service holds against the model, and the Vfs against both. */
  const serviceProblems = async (where: string) => {
    const out: string[] = [];
    const n = await vfs().drain();
    if (n) out.push(`${where}: ${n} saves still waiting after a drain (the service is up)`);
    target = await vfsManifest(vfs(), root, { xattrs: true });
    out.push(...treeDiff(target, modelTree).map((d) => `${where}: ${d}`));
    out.push(...identity.check(target, where));
    out.push(...(await serviceDiff(view, modelTree, target, identity.standIns)).map((d) => `${where}: ${d}`));
    return out;
  };

  for (const [i, op] of ops.entries()) {
    const started = performance.now();
    const before = modelTree;
    const problems: string[] = [];
    let t: Outcome = 0;
    let m: Outcome = 0;
    if (op.k === "feed") {
      const caughtUp = await feedApplied(world, api);
      if (caughtUp) problems.push(caughtUp);
    } else if (op.k === "drain") {
      const n = await vfs().drain();
      if (n) problems.push(`${n} saves still waiting after a drain (the service is up)`);
    } else if (op.k === "sync") {
      problems.push(...(await serviceProblems(`sync at step ${i}`)));
    } else if (op.k === "kill" || op.k === "lossykill") {
      await world.kill({ loseJournal: op.k === "lossykill" });
    } else if (op.k === "redit" || op.k === "rcreate" || op.k === "rrename" || op.k === "rdelete") {
      const r = await remote(op, vfs, api, folder, root, modelDir, modelTree);
      if (typeof r === "object") problems.push(...r.problems);
      else t = m = r;
    } else {
      t = await applyToVfs(vfs(), root, op);
      m = applyToModel(modelDir, op);
      if (op.k === "mvdir" && m === 0 && op.d !== op.to) moveTokens(identity, op.d, op.to);
    }
    if (stats && m === 0) stats.effective++;
    modelTree = localManifest(modelDir);
    identity.step(identityOp(op), m === 0 ? 0 : 1, before, modelTree);
    if (t !== m) problems.push(`outcome: vfs ${t} model ${m}`);
    if (world.kills !== lastKills) {
      lastKills = world.kills;
      conflictsSeen = vfs().conflicts.length;
      refusedSeen = vfs().refused.length;
    }
    // Ids and tags are compared at each sync (and at the end): asking for them delivers (manifest.ts).
    target = await vfsManifest(vfs(), root, { xattrs: false });
    problems.push(...treeDiff(target, modelTree), ...identity.check(target, `after step ${i}`));
    if (vfs().conflicts.length !== conflictsSeen)
      problems.push(`a conflict copy where none may be: ${vfs().conflicts.slice(conflictsSeen).join(", ")}`);
    if (vfs().refused.length !== refusedSeen)
      problems.push(`a save refused: ${JSON.stringify(vfs().refused.slice(refusedSeen))}`);
    timeByKind[op.k] = (timeByKind[op.k] ?? 0) + performance.now() - started;
    if (problems.length) return { step: i, problems };
  }
  const started = performance.now();
  const problems = await serviceProblems("after the last drain");
  timeByKind.end = (timeByKind.end ?? 0) + performance.now() - started;
  return problems.length ? { step: ops.length, problems } : undefined;
}

/** Waits until the Vfs has applied the service's change feed up to now and polls for what follows. */
async function feedApplied(world: VfsWorld, api: Api): Promise<string | undefined> {
  let cursor = 0;
  for (let more = true; more; ) {
    const page = (await api.get(`/api/v1/changes?cursor=${cursor}&limit=1000`)).body;
    cursor = page.cursor;
    more = page.hasMore;
  }
  const deadline = Date.now() + REMOTE_SHOWN_MS;
  while (world.polledFrom < cursor) {
    if (Date.now() > deadline)
      return `the Vfs's feed polls from ${world.polledFrom}, the service's feed is at ${cursor}`;
    await sleep(5);
  }
  return undefined;
}

type RemoteOp = Extract<VfsOp, { k: "redit" | "rcreate" | "rrename" | "rdelete" }>;

/**
 * A remote operation, once everything here is delivered; the model follows once the Vfs shows it.
 * "skip" when it has no exact outcome here (nothing at the path on the service, a name taken, a
 * note kept local because its bytes are not text): nothing is done on either side.
 */
async function remote(
  op: RemoteOp,
  vfs: () => Vfs,
  api: Api,
  folder: string,
  root: string,
  modelDir: string,
  modelTree: Manifest,
): Promise<Outcome | { problems: string[] }> {
  const left = await vfs().drain();
  if (left) return { problems: [`before a remote change: ${left} saves still waiting after a drain`] };
  const r = await remoteOf(api, folder);
  const at = (p: string) => `${root}/${p}`;
  const shows = async (p: string, text?: string) => {
    try {
      const st = await vfs().getattr(at(p));
      if (text === undefined) return true;
      if (st.size !== Buffer.byteLength(text)) return false;
      const fd = await vfs().open(at(p), fsc.O_RDONLY);
      try {
        return (await vfs().read(fd, st.size + 1, 0)).toString() === text;
      } finally {
        await vfs().release(fd);
      }
    } catch {
      return false;
    }
  };
  const until = async (what: string, check: () => Promise<boolean>) => {
    const deadline = Date.now() + REMOTE_SHOWN_MS;
    while (!(await check())) {
      if (Date.now() > deadline) return { problems: [`the Vfs never showed ${what}`] };
      await sleep(5);
    }
    return 0 as const;
  };
  // The service must hold exactly the model's bytes there (a note whose bytes are not text stays local).
  const exact = async (p: string) => {
    const rec = r.files.get(p);
    const want = modelTree.files[p];
    if (!rec || want === undefined) return undefined;
    const body = await api.get(`/api/v1/files/${rec.id}`);
    return body.status === 200 && Buffer.from(String(body.body.content)).toString("base64") === want
      ? rec
      : undefined;
  };
  const dirOf = (p: string) => (p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "");
  const nameOf = (p: string) => p.slice(p.lastIndexOf("/") + 1);
  switch (op.k) {
    case "redit": {
      const rec = await exact(op.p);
      if (!rec) return "skip";
      const res = await api.put(`/api/v1/files/${rec.id}`, { content: op.text });
      if (res.status !== 200) return { problems: [`remote edit: ${res.status} ${res.text}`] };
      const shown = await until(`the remote edit of ${op.p}`, () => shows(op.p, op.text));
      if (shown) return shown;
      writeFileSync(join(modelDir, op.p), op.text);
      return 0;
    }
    case "rcreate": {
      const folderId = r.folders.get(dirOf(op.p));
      const taken = op.p in modelTree.files || modelTree.dirs.includes(op.p) || r.files.has(op.p);
      if (!folderId || taken) return "skip";
      const res = await api.post("/api/v1/files", { name: nameOf(op.p), content: op.text, folderId });
      if (res.status !== 201 && res.status !== 200)
        return { problems: [`remote create: ${res.status} ${res.text}`] };
      const shown = await until(`the remote create of ${op.p}`, () => shows(op.p, op.text));
      if (shown) return shown;
      writeFileSync(join(modelDir, op.p), op.text);
      return 0;
    }
    case "rrename": {
      const rec = await exact(op.p);
      const folderId = r.folders.get(dirOf(op.to));
      const taken = op.to in modelTree.files || modelTree.dirs.includes(op.to) || r.files.has(op.to);
      if (!rec || !folderId || op.to === op.p || taken) return "skip";
      const res = await api.put(`/api/v1/files/${rec.id}`, { name: nameOf(op.to), folderId });
      if (res.status !== 200) return { problems: [`remote rename: ${res.status} ${res.text}`] };
      const shown = await until(
        `the remote rename of ${op.p} to ${op.to}`,
        async () => (await shows(op.to)) && !(await shows(op.p)),
      );
      if (shown) return shown;
      renameSync(join(modelDir, op.p), join(modelDir, op.to));
      return 0;
    }
    case "rdelete": {
      const rec = await exact(op.p);
      if (!rec) return "skip";
      const res = await api.delete(`/api/v1/files/${rec.id}`);
      if (res.status !== 200 && res.status !== 204)
        return { problems: [`remote delete: ${res.status} ${res.text}`] };
      const shown = await until(`the remote delete of ${op.p}`, async () => !(await shows(op.p)));
      if (shown) return shown;
      unlinkSync(join(modelDir, op.p));
      return 0;
    }
  }
}
