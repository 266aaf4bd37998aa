// Runs one sequence of VfsOps on a fresh folder of the Vfs and on the model (a local directory), and
// says where they first differ: an operation's outcome (0 or its errno), the names and bytes shown,
// a note's id and tags (the FUSE model test's IdentityModel), a conflict copy or refused save where
// none may be, and after each sync (and at the end) the notes on the service.
//
// Remote operations run once everything made here is delivered, and the Vfs must show them before
// the next step: then there is exactly one right outcome, the remote one. (Remote edits racing
// local saves have several, and are the FUSE model test's remote property.)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Op } from "../../helpers/model/ops.ts";
import {
  IdentityModel,
  localManifest,
  type RunFailure,
  type RunStats,
  serviceDiff,
  treeDiff,
} from "../../helpers/model/runner.ts";
import type { Api } from "../../helpers/server.ts";
import { applyToModel, applyToVfs, type Outcome } from "./apply.ts";
import { vfsManifest } from "./manifest.ts";
import type { VfsOp } from "./ops.ts";
import { feedApplied, remote } from "./remote.ts";
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

let runs = 0;

/** Milliseconds spent per operation kind (its comparison included), for the test's report. */
export const timeByKind: Record<string, number> = {};

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
