// Runs one sequence of operations on a target tree (a folder of the mount, or a local directory for
// the harness's own control runs) and on the model (a local directory under /var/tmp), and says
// where they first differ: exit status of an operation, names or bytes of the tree, a note's
// identity (user.txtfs.id) or tags, and — after `txtfs sync` — the notes on the service.
import { isUtf8 } from "node:buffer";
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { q } from "../mount.ts";
import type { Api } from "../server.ts";
import { type Op, opScript, PYTHON, renameOf } from "./ops.ts";

const MANIFEST_PY = fileURLToPath(new URL("./manifest.py", import.meta.url));

export interface Manifest {
  files: Record<string, string>; // path -> base64 bytes
  dirs: string[];
  ids: Record<string, string | null>;
  tags: Record<string, string | null>;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a bash script in a child process; never rejects. */
export function bash(script: string, cwd: string, env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000) {
  return new Promise<RunResult>((resolve) => {
    execFile(
      "bash",
      ["-c", script],
      { cwd, env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (err as { code?: unknown }).code : 0;
        resolve({ code: typeof code === "number" ? code : 255, stdout, stderr });
      },
    );
  });
}

/** Manifests of the given roots, read by one child process. */
export async function readManifests(roots: string[]): Promise<Manifest[]> {
  const r = await bash(`exec ${PYTHON} -S ${MANIFEST_PY} ${roots.map((x) => `'${x}'`).join(" ")}`, "/");
  if (r.code !== 0) throw new Error(`manifest failed (${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout) as Manifest[];
}

/** The model's manifest, read in this process (the model is a local directory, never the mount). */
export function localManifest(root: string): Manifest {
  const files: Record<string, string> = {};
  const dirs: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      const rel = relative(root, full);
      if (/(^|\/)(\.[^/]*\.sw[a-z]|4913|\.fuse_hidden[^/]*)$/.test(rel)) continue;
      const st = statSync(full);
      if (st.isDirectory()) {
        dirs.push(rel);
        walk(full);
      } else files[rel] = readFileSync(full).toString("base64");
    }
  };
  walk(root);
  return { files, dirs: dirs.sort(), ids: {}, tags: {} };
}

const isNote = (p: string) => p.endsWith(".md") || p.endsWith(".txt");
const show = (b64: string | undefined) =>
  b64 === undefined
    ? "(absent)"
    : b64.startsWith("!")
      ? b64
      : JSON.stringify(Buffer.from(b64, "base64").toString("latin1"));

/** Every difference in names and bytes between target and model, one line each. */
export function treeDiff(target: Manifest, model: Manifest): string[] {
  const out: string[] = [];
  const dirsT = new Set(target.dirs);
  const dirsM = new Set(model.dirs);
  for (const d of dirsM) if (!dirsT.has(d)) out.push(`folder ${d}/: missing on the mount`);
  for (const d of dirsT) if (!dirsM.has(d)) out.push(`folder ${d}/: only on the mount`);
  const paths = new Set([...Object.keys(target.files), ...Object.keys(model.files)]);
  for (const p of [...paths].sort()) {
    const t = target.files[p];
    const m = model.files[p];
    if (t !== m) out.push(`${p}: mount ${show(t)} model ${show(m)}`);
  }
  return out;
}

/** Tracks which note should keep which identity, from the model's tree after each operation. */
export class IdentityModel {
  private next = 1;
  /** note path -> identity token */
  readonly tokens = new Map<string, number>();
  readonly tags = new Map<number, string>();
  /** token -> the id first seen on the target */
  readonly ids = new Map<number, string>();
  /** path -> the token of the note deleted there (docs/mount.md: a create of the path before the
   * delete left continues that note) */
  private readonly gone = new Map<string, number>();
  /** token of a note created where one was just deleted -> that one's token: either may be right
   * (it depends on whether the delete had left, i.e. on timing) until the target shows which */
  private readonly either = new Map<number, number>();
  /**
   * A note renamed to a name that is not a note's: its path -> the file standing for it. The note
   * stays on the service under that path until the path is taken again (then the new note continues
   * it), or the file goes (then the note does) or becomes a note again (then the note goes there).
   */
  readonly standIns = new Map<string, string>();

  /** Applies one operation's outcome (model exit code, model tree before and after). */
  step(op: Op, code: number, before: Manifest, after: Manifest) {
    const ren = renameOf(op);
    if (ren && code === 0 && ren.from !== ren.to) {
      const fromTok = this.tokens.get(ren.from);
      const standing = [...this.standIns].find(([, file]) => file === ren.from)?.[0];
      if (standing !== undefined) {
        if (isNote(ren.to)) this.standIns.delete(standing);
        else this.standIns.set(standing, ren.to);
      } else if (isNote(ren.from) && !isNote(ren.to) && fromTok !== undefined) {
        this.standIns.set(ren.from, ren.to);
        this.gone.set(ren.from, fromTok); // a note made there next may continue it
      }
      // A rename over an existing note keeps the target note (README: saves through temp files);
      // onto a free name the note moves.
      if (!(ren.to in before.files) && fromTok !== undefined) this.tokens.set(ren.to, fromTok);
      this.tokens.delete(ren.from);
    }
    if ((op.k === "tag" || op.k === "sidecar") && code === 0) {
      const tok = this.tokens.get(op.p);
      if (tok !== undefined) this.tags.set(tok, op.tags);
    }
    this.sync(after);
  }

  /** Forgets notes that are gone, gives new notes a token. */
  sync(tree: Manifest) {
    for (const [p, file] of [...this.standIns]) {
      // The name was taken again (the note went on there), or its folder went (so did the note).
      const folder = p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "";
      const ended = p in tree.files || (folder !== "" && !tree.dirs.includes(folder));
      if (ended) this.tokens.delete(file);
      if (ended || !(file in tree.files)) this.standIns.delete(p);
    }
    for (const [p, tok] of [...this.tokens]) {
      if (p in tree.files) continue;
      this.tokens.delete(p);
      this.gone.set(p, tok);
    }
    for (const p of Object.keys(tree.files)) {
      if (!isNote(p) || this.tokens.has(p)) continue;
      const tok = this.next++;
      this.tokens.set(p, tok);
      const old = this.gone.get(p);
      if (old !== undefined) this.either.set(tok, old);
    }
    for (const p of [...this.gone.keys()]) if (p in tree.files) this.gone.delete(p);
  }

  /** Differences in identity and tags between what the target shows and what should hold. */
  check(target: Manifest, where: string): string[] {
    const out: string[] = [];
    const seen = new Map<string, string>();
    for (const [p, t] of [...this.tokens]) {
      let tok = t;
      const id = target.ids[p];
      if (!id) continue; // not a note on the target (a difference treeDiff reports) or a local-only control
      // The notes this one may continue (each made where the one before was just deleted), up to
      // one whose id the target showed: a burst is compared only at its end, so a chain of
      // delete + re-create (rm, then a write; tar -x) is resolved here, all at once.
      const chain = [tok];
      while (!this.ids.has(chain.at(-1)!)) {
        const up = this.either.get(chain.at(-1)!);
        if (up === undefined || chain.includes(up)) break;
        chain.push(up);
      }
      for (const c of chain) this.either.delete(c);
      // The tags of the note made of chain[0..k]: the newest set on any of them (chain[0] is the youngest).
      const newest = (k: number) => chain.slice(0, k + 1).find((c) => this.tags.has(c));
      const oldest = chain.at(-1)!;
      const oldestId = this.ids.get(oldest);
      if (chain.length > 1 && oldestId === id) {
        // The note continued all along (same id, same tags; tags set since went to it).
        const t = newest(chain.length - 1);
        if (t !== undefined) this.tags.set(oldest, this.tags.get(t)!);
        tok = oldest;
        this.tokens.set(p, oldest);
      } else if (chain.length > 1) {
        // It continued some of them and was new at one (which depends on timing): any split is right.
        const splits = chain.length - (oldestId ? 1 : 0);
        const options = new Set(
          Array.from({ length: splits }, (_, k) => {
            const t = newest(k);
            return t === undefined ? "" : this.tags.get(t)!;
          }),
        );
        const got = target.tags[p] ?? "";
        if (options.has(got)) this.tags.set(tok, got);
      }
      const first = this.ids.get(tok);
      if (first && first !== id) out.push(`${p}: id ${id} ${where}, was ${first} (identity lost)`);
      if (!first) this.ids.set(tok, id);
      const other = seen.get(id);
      if (other) out.push(`${p} and ${other} share id ${id} ${where}`);
      seen.set(id, p);
      const want = this.tags.get(tok) ?? "";
      const got = target.tags[p] ?? "";
      if (got !== want)
        out.push(`${p}: tags ${JSON.stringify(got)} ${where}, expected ${JSON.stringify(want)}`);
    }
    return out;
  }
}

export interface ServiceView {
  /** The current client (a restarted daemon serves on a new port). */
  api(): Api;
  /** The run's folder as a path inside the mount ("model/r3"). */
  folder: string;
  /** Waits until every save is on the service (`txtfs sync`). */
  sync(): Promise<void>;
  /** SIGKILL the daemon, then mount the same cache and data again. */
  kill?(): Promise<void>;
}

export interface RunOptions {
  /** Root of the tree under test (a folder of the mount, or a local dir for the control). */
  target: string;
  /** Root of the model (a local dir). */
  model: string;
  /** Scratch dir outside both trees. */
  stage: string;
  /** "step": compare after every operation; a number: run the target's operations in one burst with this pause (ms) between them, compare at the end. */
  mode: "step" | number;
  service?: ServiceView;
  /** Counts what ran: operations that succeeded on the model, the slowest operation on the target. */
  stats?: RunStats;
}

export interface RunStats {
  effective: number;
  slowestMs: number;
}

export interface RunFailure {
  step: number; // index of the operation after which the difference showed (-1: setup, ops.length: final check)
  problems: string[];
}

/** Notes that exist before the sequence starts: edits of notes already on the service. */
export const SETUP_SCRIPT =
  "mkdir d1 && printf 'banana\\ncat\\n' > a.md && printf 'apple pie\\n' > b.md && printf abc > c.txt && printf 'cat\\n' > d1/a.md";

/** Seconds one operation may take: past that it counts as hung (exit status 124). */
export const OP_TIMEOUT_S = 10;
const wrap = (op: Op, side: "target" | "model") =>
  `timeout -k 2 ${OP_TIMEOUT_S} bash -c ${q(opScript(op, side))} >/dev/null`;

export async function runSequence(ops: Op[], o: RunOptions): Promise<RunFailure | undefined> {
  for (const dir of [o.model, o.stage]) mkdirSync(dir, { recursive: true });
  const env = { STAGE: o.stage };
  // Sidecars exist on the mount only; a local target (the harness's control) writes them aside.
  const targetEnv = o.service ? env : { ...env, NO_SIDECARS: "1" };
  const identity = new IdentityModel();
  // Setup: the same starting notes on both sides, delivered before the sequence starts.
  const setT = await bash(`mkdir -p '${o.target}' && cd '${o.target}' && ${SETUP_SCRIPT}`, "/", env);
  const setM = await bash(SETUP_SCRIPT, o.model, env);
  if (setT.code !== 0 || setM.code !== 0)
    return { step: -1, problems: [`setup failed: ${setT.stderr} ${setM.stderr}`] };
  await o.service?.sync();
  let [targetTree] = await readManifests([o.target]);
  let modelTree = localManifest(o.model);
  identity.sync(modelTree);
  const setupProblems = [...treeDiff(targetTree!, modelTree), ...identity.check(targetTree!, "after setup")];
  if (setupProblems.length) return { step: -1, problems: setupProblems };

  if (o.mode === "step") {
    for (const [i, op] of ops.entries()) {
      const started = Date.now();
      const t =
        op.k === "control" ? await control(op, o) : await bash(wrap(op, "target"), o.target, targetEnv);
      if (o.stats) o.stats.slowestMs = Math.max(o.stats.slowestMs, Date.now() - started);
      const m = await bash(wrap(op, "model"), o.model, env);
      if (o.stats && m.code === 0) o.stats.effective++;
      const before = modelTree;
      [targetTree] = await readManifests([o.target]);
      modelTree = localManifest(o.model);
      identity.step(op, m.code, before, modelTree);
      const problems: string[] = [];
      if (t.code !== m.code)
        problems.push(`exit status: mount ${t.code} model ${m.code}; mount stderr: ${t.stderr.trim()}`);
      problems.push(...treeDiff(targetTree!, modelTree), ...identity.check(targetTree!, `after step ${i}`));
      if (problems.length) return { step: i, problems };
    }
  } else {
    // The target runs the operations in one child process, `mode` ms apart, printing each exit
    // status (a sync or a daemon restart, run by the test, splits the burst); the model runs them
    // one by one (its timing does not matter) to follow identities.
    const pause = o.mode > 0 ? `sleep ${(o.mode / 1000).toFixed(3)}; ` : "";
    const codes: (number | undefined)[] = [];
    let stderr = "";
    for (let start = 0; start < ops.length; ) {
      const first = ops[start]!;
      if (first.k === "control") {
        codes.push((await control(first, o)).code);
        start++;
        continue;
      }
      let end = start;
      while (end < ops.length && ops[end]!.k !== "control") end++;
      const segment = ops.slice(start, end);
      const script = segment
        .map((op) => `t0=$EPOCHREALTIME; ${wrap(op, "target")}; echo "rc $? $t0 $EPOCHREALTIME"`)
        .join(`\n${pause}`);
      const t = await bash(
        script,
        o.target,
        targetEnv,
        segment.length * (o.mode + (OP_TIMEOUT_S + 1) * 1000) + 30_000,
      );
      stderr += t.stderr;
      const rcs = [...t.stdout.matchAll(/^rc (\d+) ([\d.]+) ([\d.]+)$/gm)];
      for (let k = 0; k < segment.length; k++) codes.push(rcs[k] ? Number(rcs[k]![1]) : undefined);
      if (o.stats)
        for (const x of rcs)
          o.stats.slowestMs = Math.max(o.stats.slowestMs, (Number(x[3]) - Number(x[2])) * 1000);
      start = end;
    }
    for (const [i, op] of ops.entries()) {
      const m = await bash(wrap(op, "model"), o.model, env);
      if (o.stats && m.code === 0) o.stats.effective++;
      const before = modelTree;
      modelTree = localManifest(o.model);
      identity.step(op, m.code, before, modelTree);
      if (codes[i] !== m.code)
        return {
          step: i,
          problems: [
            `exit status: mount ${codes[i]} model ${m.code}; mount stderr (whole burst): ${stderr.trim()}`,
          ],
        };
    }
    [targetTree] = await readManifests([o.target]);
    const problems = [...treeDiff(targetTree!, modelTree), ...identity.check(targetTree!, "at the end")];
    if (problems.length) return { step: ops.length - 1, problems };
  }

  if (o.service) {
    await o.service.sync();
    [targetTree] = await readManifests([o.target]);
    const problems = [
      ...treeDiff(targetTree!, modelTree).map((d) => `after sync: ${d}`),
      ...identity.check(targetTree!, "after sync"),
      ...(await serviceDiff(o.service, modelTree, targetTree!, identity.standIns)),
    ];
    if (problems.length) return { step: ops.length, problems };
  }
  return undefined;
}

/** Runs a control operation on the target (nothing to do without a service: the local control). */
async function control(op: Extract<Op, { k: "control" }>, o: RunOptions): Promise<RunResult> {
  try {
    if (op.what === "sync") await o.service?.sync();
    else await o.service?.kill?.();
    return { code: 0, stdout: "", stderr: "" };
  } catch (err) {
    return { code: 1, stdout: "", stderr: String(err) };
  }
}

/** The notes under the run's folder on the service against the model's .md/.txt files. */
export async function serviceDiff(
  view: ServiceView,
  model: Manifest,
  target: Manifest,
  standIns: ReadonlyMap<string, string> = new Map(),
): Promise<string[]> {
  const res = await view.api().get("/api/me/files");
  if (res.status !== 200) return [`GET /api/me/files: ${res.status}`];
  const { files, folders } = res.body as { files: any[]; folders: any[] };
  const pathOf = new Map<string | null, string>([[null, ""]]);
  const byId = new Map(folders.map((f) => [f.id, f]));
  const folderPath = (id: string | null): string | undefined => {
    if (pathOf.has(id)) return pathOf.get(id);
    const f = byId.get(id);
    if (!f) return undefined;
    const parent = folderPath(f.parentFolderId);
    const p = parent === undefined ? undefined : parent ? `${parent}/${f.name}` : f.name;
    if (p !== undefined) pathOf.set(id, p);
    return p;
  };
  const prefix = `${view.folder}/`;
  const remote = new Map<string, any>();
  const out: string[] = [];
  for (const f of files) {
    const dir = folderPath(f.folderId);
    if (dir === undefined) continue;
    const full = dir ? `${dir}/${f.name}` : f.name;
    if (!full.startsWith(prefix)) continue;
    const rel = full.slice(prefix.length);
    if (remote.has(rel)) out.push(`service: two notes named ${rel} (${remote.get(rel).id}, ${f.id})`);
    remote.set(rel, f);
  }
  const remoteDirs = new Set(
    folders
      .map((f) => folderPath(f.id))
      .filter((p): p is string => !!p?.startsWith(prefix))
      .map((p) => p.slice(prefix.length)),
  );
  for (const d of model.dirs) if (!remoteDirs.has(d)) out.push(`service: folder ${d}/ missing`);
  for (const d of remoteDirs) if (!model.dirs.includes(d)) out.push(`service: folder ${d}/ should not exist`);
  // A note whose bytes are not valid UTF-8 stays local with exactly those bytes (docs/mount.md):
  // the service keeps its last text, if it had one. (pwrite at a byte offset can split a character.)
  const notText = (p: string) => !isUtf8(Buffer.from(model.files[p]!, "base64"));
  const modelNotes = Object.keys(model.files).filter(isNote);
  for (const p of modelNotes) {
    if (notText(p)) continue;
    const rec = remote.get(p);
    const want = Buffer.from(model.files[p]!, "base64");
    if (!rec) {
      out.push(`service: note ${p} missing (model ${show(model.files[p])})`);
      continue;
    }
    const body = await view.api().get(`/api/v1/files/${rec.id}`);
    const got = body.status === 200 ? Buffer.from(String(body.body.content), "utf8") : undefined;
    if (!got?.equals(want))
      out.push(
        `service: ${p} is ${got ? JSON.stringify(got.toString("latin1")) : body.status}, model ${show(model.files[p])}`,
      );
    const mountId = target.ids[p];
    if (mountId && mountId !== rec.id) out.push(`service: ${p} is ${rec.id}, the mount shows ${mountId}`);
  }
  for (const p of remote.keys())
    if (!modelNotes.includes(p) && !standIns.has(p)) out.push(`service: note ${p} should not exist`);
  return out;
}

/** Removes a directory tree (the model's, never the mount's). */
export function removeLocal(dir: string) {
  if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
}
