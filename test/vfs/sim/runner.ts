// Runs one sequence of simulation steps on a fresh world (a service and N devices) and returns what
// the checks found at the first phase end that failed (undefined: every phase held).
//
// Which acknowledged saves are owed: every save a program was told succeeded, read back through
// its device right after, if its bytes are text (bytes that are not stay on that device by design).
// A save is released (no longer owed) by a later operation that may take it away by design: a
// later save of the same path on the same device (the journal keeps only a note's newest bytes, as
// a disk keeps only its last write), an unlink or a rename from that path or over it, or a folder
// of it removed or renamed, on any device (the note's versions go with its delete); and a kill that
// rolls the device's cache dir back to a snapshot releases what it saved since (nothing durable was
// promised: no fsync, no sync since the snapshot).
import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";
import type { Exchange } from "../../helpers/faultProxy.ts";
import { applyToVfs } from "../model/apply.ts";
import {
  type Acked,
  contentHash,
  convergence,
  feedProblems,
  type Ident,
  identities,
  isNoteName,
  localKept,
  ROOT,
  readBack,
  savesKept,
  serviceAttachments,
  serviceNotes,
} from "./checks.ts";
import type { LocalOp, SimStep } from "./ops.ts";
import { CLIENT_TIMEOUT_MS, type Device, SimWorld } from "./world.ts";

export interface SimFailure {
  step: number;
  problems: string[];
}

export interface SimStats {
  steps: number;
  ops: number;
  acked: number;
  /** Of the acknowledged saves, those of attachments (files that are not notes). */
  ackedAttachments: number;
  /** Attachments on the service compared with every device at the phase ends (summed over phases). */
  attachmentsCompared: number;
  phases: number;
  faults: Record<string, number>;
}

export const newStats = (): SimStats => ({
  steps: 0,
  ops: 0,
  acked: 0,
  ackedAttachments: 0,
  attachmentsCompared: 0,
  phases: 0,
  faults: {},
});

const WRITES = new Set(["create", "rewrite", "append", "pwrite", "truncate", "replace", "vimsave", "bin"]);
const WHOLE = new Set(["create", "rewrite", "replace", "vimsave"]);
const SYNC_DEADLINE_MS = 60_000;
const PAUSE_MS = CLIENT_TIMEOUT_MS + 500;
const OP_DEADLINE_MS = 30_000;

const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Paths an operation may take a save at `path` away from (see the header). */
function takesAway(op: LocalOp, path: string): boolean {
  const under = (d: string) => path === d || path.startsWith(`${d}/`);
  switch (op.k) {
    case "rm":
      return op.p === path;
    case "mv":
      return op.p === path || op.to === path;
    case "rmdir":
    case "rmrf":
    case "mvdir":
      return under(op.d) || ("to" in op && under(op.to));
    case "vimsave":
    case "replace":
      return false;
    default:
      return false;
  }
}

export async function runSim(
  steps: SimStep[],
  o: {
    devices: number;
    seed: number;
    /** The service on PostgreSQL: two servers on one database (world.ts). */
    postgres?: boolean;
    stats?: SimStats;
    trace?: (d: number, e: Exchange) => void;
    onStep?: (i: number, step: SimStep) => void;
  },
): Promise<SimFailure | undefined> {
  const world = new SimWorld({ seed: o.seed, trace: o.trace, postgres: o.postgres });
  const stats = o.stats ?? newStats();
  try {
    await world.start(o.devices);
    return await run(world, steps, stats, o.onStep);
  } finally {
    await world.close();
  }
}

async function run(
  world: SimWorld,
  steps: SimStep[],
  stats: SimStats,
  onStep?: (i: number, step: SimStep) => void,
): Promise<SimFailure | undefined> {
  const api = world.user.api;
  const devices = world.devices;
  const acked: Acked[] = [];
  const idents: Ident[] = [];
  const pausedUntil = new Map<Device, number>();
  let identCount = 0;
  const count = (k: string) => (stats.faults[k] = (stats.faults[k] ?? 0) + 1);

  // The shared folder, made on one device and shown on every other.
  await devices[0]!.now.vfs.mkdir(`/${ROOT}`, 0o755);
  await devices[0]!.now.vfs.drain();
  const shown = await Promise.all(
    devices.map((d) =>
      waitFor(() =>
        d.now.vfs.getattr(`/${ROOT}`).then(
          () => true,
          () => false,
        ),
      ),
    ),
  );
  if (shown.some((s) => !s))
    return { step: -1, problems: ["the shared folder never showed on every device"] };

  const hung: string[] = [];
  const release = (why: string, test: (a: Acked) => boolean) => {
    for (const a of acked) if (!a.released && test(a)) a.released = why;
  };

  const runOp = async (d: Device, op: LocalOp, step: number) => {
    const vfs = d.now.vfs;
    // An operation that never returns (a hung FUSE request, on a mount) is a failure, said as one.
    const outcome = await Promise.race([
      applyToVfs(vfs, `/${ROOT}`, op),
      sleep(OP_DEADLINE_MS).then(() => "hung" as const),
    ]);
    if (outcome === "hung") {
      hung.push(`step ${step}: dev${d.n} ${JSON.stringify(op)} did not return in ${OP_DEADLINE_MS} ms`);
      return;
    }
    stats.ops++;
    if (outcome !== 0) return;
    if (op.k === "vimsave" && d.snapshot) d.snapshot.promisedSince = true; // its fsync
    if (!WRITES.has(op.k) || !("p" in op)) return;
    // A whole body is what the program wrote; read back, it may already be another device's
    // version (ours met it at delivery and became a conflict copy). Other writes build on what
    // was there: what the device shows right after is theirs to keep.
    const bytes =
      WHOLE.has(op.k) && "text" in op
        ? Buffer.from(op.text)
        : op.k === "bin" && op.off < 0
          ? Buffer.from(op.hex, "hex")
          : await readBack(vfs, `/${ROOT}/${op.p}`);
    if (!bytes) return;
    // A file that is not a note is an attachment on the service (bytes exact). A note's name whose
    // bytes are not text is local by design if it was a note once (the service keeps its last
    // text), else an attachment: which, the harness does not know, so that save is not owed.
    const attachment = !isNoteName(op.p);
    if (!attachment && !isUtf8(bytes)) return;
    acked.push({
      device: d.n,
      step,
      path: op.p,
      hash: attachment ? sha256(bytes) : contentHash(bytes),
      bytes: bytes.toString("base64"),
      attachment,
    });
    stats.acked++;
    if (attachment) stats.ackedAttachments++;
  };

  const endPhase = async (step: number): Promise<SimFailure | undefined> => {
    stats.phases++;
    for (const d of devices)
      world.setFaults(d, { cut: false, delayMs: 0, loseAnswer: 0, duplicate: 0, paused: false });
    pausedUntil.clear();
    const problems: string[] = [];
    // Synced: every device's journal empty, then every device's feed at the service's head, until
    // the head stays where it is (a delivery may make conflict copies, which move it).
    const deadline = Date.now() + SYNC_DEADLINE_MS;
    let head = -1;
    for (;;) {
      // A drain that never returns (a delivery going round without end) is a failure, said as one.
      const left = await Promise.race([
        Promise.all(devices.map((d) => d.now.vfs.drain())),
        sleep(SYNC_DEADLINE_MS).then(() => undefined),
      ]);
      if (!left)
        return {
          step,
          problems: [
            `a device's drain did not return in ${SYNC_DEADLINE_MS} ms; journalled: ${devices.map((d) => d.now.vfs.stats().dirty).join(", ")}`,
          ],
        };
      if (left.some((n) => n > 0)) {
        if (Date.now() > deadline)
          return {
            step,
            problems: [`saves still waiting after ${SYNC_DEADLINE_MS} ms of sync: ${left.join(", ")}`],
          };
        await sleep(100);
        continue;
      }
      const now = await world.head();
      const caughtUp = await Promise.all(devices.map((d) => waitFor(() => d.now.vfs.stats().cursor >= now)));
      if (caughtUp.some((c) => !c))
        return { step, problems: [`a device's feed never reached the service's head ${now}`] };
      if (now === head) break;
      head = now;
      if (Date.now() > deadline)
        return { step, problems: ["the service's feed kept moving after every device synced"] };
    }
    for (const d of devices) if (d.snapshot) d.snapshot.promisedSince = true; // sync made it all durable
    await world.witnessUpTo(head);
    const service = {
      ...(await serviceNotes(api)),
      attachments: await serviceAttachments(api, world.user.key, world.url),
    };
    problems.push(...(await savesKept(api, service, acked)));
    problems.push(...(await convergence(world, service)));
    problems.push(...localKept(world));
    stats.attachmentsCompared += service.attachments.length;
    problems.push(...identities(service, idents));
    problems.push(
      ...feedProblems(
        world,
        devices.map((d) => d.now),
        head,
      ),
    );
    for (const a of acked) a.released ??= "checked";
    for (const x of idents) x.released ??= "checked";
    return problems.length ? { step, problems } : undefined;
  };

  for (const [i, step] of steps.entries()) {
    stats.steps++;
    onStep?.(i, step);
    if (step.k === "ops") {
      const runs: Promise<void>[] = [];
      for (const [n, op] of step.ops.entries()) {
        const d = devices[n];
        if (!op || !d || (pausedUntil.get(d) ?? 0) > Date.now()) continue;
        // Taken away by design: released before the operation runs (it may race the save's delivery).
        for (const a of acked)
          if (!a.released && ((a.device === n && "p" in op && op.p === a.path) || takesAway(op, a.path)))
            a.released = `step ${i}: dev${n} ${op.k}`;
        for (const x of idents)
          if (!x.released && (takesAway(op, x.to) || takesAway(op, x.from)))
            x.released = `step ${i}: dev${n} ${op.k}`;
        runs.push(runOp(d, op, i));
      }
      await Promise.all(runs);
      if (hung.length) return { step: i, problems: hung };
    } else if (step.k === "fault") {
      const f = step.f;
      count(f.k);
      const d = "d" in f ? devices[f.d % devices.length]! : undefined;
      if (f.k === "restart") await world.restartService();
      else if (d && (f.k === "kill" || f.k === "lossykill")) {
        pausedUntil.delete(d);
        const snapAt = d.snapshot;
        const rolled = await world.kill(d, f.k === "kill" && f.rollback, f.k === "lossykill");
        if (rolled && snapAt)
          release(`step ${i}: dev${d.n} rolled back`, (a) => a.device === d.n && a.step >= snapAt.step);
      } else if (d && f.k === "snapshot") world.snapshot(d, i);
      else if (d && f.k === "cut") world.setFaults(d, { cut: true });
      else if (d && f.k === "heal")
        world.setFaults(d, { cut: false, delayMs: 0, loseAnswer: 0, duplicate: 0 });
      else if (d && f.k === "delay") world.setFaults(d, { delayMs: f.ms });
      else if (d && f.k === "lossy") world.setFaults(d, { loseAnswer: f.p });
      else if (d && f.k === "dup") world.setFaults(d, { duplicate: f.p });
      else if (d && f.k === "skew") world.skew(d, f.ms);
      else if (d && f.k === "clockback") world.skew(d, f.ms, true);
      else if (d && f.k === "pause") {
        world.setFaults(d, { paused: true });
        pausedUntil.set(d, Date.now() + PAUSE_MS);
        setTimeout(() => {
          if (pausedUntil.has(d)) world.setFaults(d, { paused: false });
        }, PAUSE_MS).unref();
      }
    } else if (step.k === "ident") {
      const a = devices[step.a % devices.length]!;
      const b = devices[step.b % devices.length]!;
      const { notes } = await serviceNotes(api);
      const names = new Map<string, number>();
      for (const n of notes) names.set(n.path, (names.get(n.path) ?? 0) + 1);
      // A note every device shows where the service has it (one of its name), not being paused.
      const candidates = [];
      for (const n of notes) {
        if (names.get(n.path) !== 1 || !n.path.endsWith(".md")) continue;
        const ids = await Promise.all(
          [a, b].map((d) =>
            d.now.vfs.getxattr(`/${ROOT}/${n.path}`, "user.txtfs.id").then(
              (x) => x?.toString(),
              () => undefined,
            ),
          ),
        );
        if (ids.every((x) => x === n.id)) candidates.push(n);
      }
      const n = candidates[step.pick % Math.max(1, candidates.length)];
      if (!n || pausedUntil.has(a) || pausedUntil.has(b)) continue;
      const dir = n.path.includes("/") ? n.path.slice(0, n.path.lastIndexOf("/") + 1) : "";
      const to = `${dir}ident-${++identCount}.md`;
      const edit: LocalOp = { k: "rewrite", p: n.path, text: `identity edit ${identCount}\n` };
      const move: LocalOp = { k: "mv", p: n.path, to };
      release(`step ${i}: identity rename`, (x) => x.path === n.path);
      await Promise.all([runOp(a, edit, i), runOp(b, move, i)]);
      idents.push({ id: n.id, from: n.path, to, step: i });
      count("ident");
    } else if (step.k === "check") {
      const failure = await endPhase(i);
      if (failure) return failure;
    }
  }
  return endPhase(steps.length);
}

async function waitFor(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) return false;
    await sleep(5);
  }
  return true;
}
