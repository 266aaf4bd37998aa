// The simulated world: one real service on loopback (in-process, SQLite), N devices, each a real Vfs
// with its own cache dir behind its own fault proxy (test/helpers/faultProxy.ts), and a witness
// reading the service's change feed directly (no faults) as the account's record of what happened.
//
// A device's life: killed (its Vfs dropped where it stands, its proxy cut so it reaches nothing from
// then on, the cache dir copied as a kill -9 leaves it, optionally rolled back to a snapshot taken
// earlier: a power cut), started again on that dir (the journal replays). The service restarts on
// the same port and data.
//
// Each device reads its own wall clock (src/vfs/clock.ts), the service's plus an offset the `skew`
// fault sets (minutes ahead or behind) and `clockback` moves back mid-run, as NTP can. It is the
// machine's: a kill keeps it, and a phase's end leaves it as it is (no fault heals a clock).
//
// On PostgreSQL (TXTFS_SIM_PG=1) the service is two `txtfs serve` processes on one database (a
// throwaway cluster, or TXTFS_TEST_PG_URL's server), device n reaching server n % 2 through its
// proxy; the `restart` fault then kills one of them (SIGKILL: its requests in flight cut where they
// stand) and starts it again on its port.
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TxtfsClient } from "../../../src/client/api.ts";
import type { ChangeRecord } from "../../../src/lib/apiTypes.ts";
import { createLogger } from "../../../src/lib/logger.ts";
import { createKey, createUser } from "../../../src/server/domain/accounts.ts";
import { type RunningServer, startServer } from "../../../src/server/serve.ts";
import { PostgresStore } from "../../../src/store/postgres/postgresStore.ts";
import type { Clock } from "../../../src/vfs/clock.ts";
import { Vfs } from "../../../src/vfs/vfs.ts";
import { type ServeProcess, spawnServe } from "../../helpers/cli.ts";
import { type Exchange, type FaultProxy, type Faults, startFaultProxy } from "../../helpers/faultProxy.ts";
import { createDatabase, dropDatabase, type PgCluster, startPgCluster } from "../../helpers/pgCluster.ts";
import { Api, startTestServer, type TestServer, type TestUser } from "../../helpers/server.ts";

/** One cluster per test process (or TXTFS_TEST_PG_URL's server), started at the first world on PostgreSQL. */
let cluster: Promise<PgCluster> | undefined;
async function pgAdminUrl(): Promise<string> {
  if (process.env.TXTFS_TEST_PG_URL) return process.env.TXTFS_TEST_PG_URL;
  cluster ??= startPgCluster();
  return (await cluster).url;
}

/** Stops the cluster the worlds on PostgreSQL started, if any (the test file's afterAll). */
export async function stopSimPostgres(): Promise<void> {
  const c = await cluster?.catch(() => undefined);
  cluster = undefined;
  c?.stop();
}

/** The two servers on one database, and the store the harness makes the account in. */
interface PgService {
  db: string;
  servers: ServeProcess[];
  ports: string[];
  store: PostgresStore;
}

const serveArgs = (db: string, port: string) => ["--db", db, "--port", port, "--rate-limit", "1000000"];

/** A device's client gives up on a request after this long (a pause longer than it is a timeout). */
export const CLIENT_TIMEOUT_MS = 2000;

/** One page of the feed as a device received it (its answer arrived); `from` -1: a listing. */
export interface FeedPage {
  from: number;
  cursor: number;
  seqs: number[];
}

export interface Incarnation {
  vfs: Vfs;
  proxy: FaultProxy;
  cacheDir: string;
  /** The cursor its listing started from, then the feed pages it received, in order. */
  listedAt: number | undefined;
  pages: FeedPage[];
  dead: boolean;
}

/** A device's wall clock: the real one `offsetMs` ahead (negative: behind). */
export class SkewedClock implements Clock {
  offsetMs = 0;
  now(): number {
    return Date.now() + this.offsetMs;
  }
}

export interface Device {
  n: number;
  now: Incarnation;
  clock: SkewedClock;
  /** A copy of the cache dir taken earlier, and whether a promise of durability was made since (fsync, sync). */
  snapshot?: { dir: string; step: number; promisedSince: boolean };
  /** What the device's faults are now (restored to none at each phase's end). */
  faults: Partial<Faults>;
}

/** A tiny seeded generator (mulberry32): the proxies' fault decisions follow the run's seed. */
export function rngOf(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class SimWorld {
  readonly devices: Device[] = [];
  /** Every feed record the witness saw, in order (the feed keeps each item's latest state only). */
  readonly witnessed: ChangeRecord[] = [];
  witnessCursor = 0;
  counts = {
    kills: 0,
    rollbacks: 0,
    restarts: 0,
    pauses: 0,
    cuts: 0,
    delays: 0,
    lossy: 0,
    dups: 0,
    skews: 0,
    clockbacks: 0,
    serverKills: 0,
  };
  private t!: TestServer;
  private server!: RunningServer;
  user!: TestUser;
  private readonly dirs: string[] = [];
  private readonly dropped: Incarnation[] = [];
  private witnessing = true;
  private witnessLoop: Promise<void> | undefined;
  private readonly random: () => number;
  private readonly trace?: (n: number, e: Exchange) => void;
  private readonly postgres: boolean;
  private pg: PgService | undefined;

  constructor(o: { seed: number; trace?: (device: number, e: Exchange) => void; postgres?: boolean }) {
    this.random = rngOf(o.seed);
    this.trace = o.trace;
    this.postgres = o.postgres ?? false;
  }

  get url(): string {
    return this.pg ? this.pg.servers[0]!.url : this.server.url;
  }

  /** Where device `n` reaches the service (its proxy's upstream). */
  private upstreamOf(n: number): string {
    return this.pg ? this.pg.servers[n % this.pg.servers.length]!.url : this.server.url;
  }

  async start(devices: number): Promise<void> {
    if (this.postgres) await this.startPg();
    else {
      this.t = await startTestServer();
      this.server = this.t.server;
      this.user = await this.t.user();
    }
    this.witnessLoop = this.witness();
    for (let n = 0; n < devices; n++) {
      const dir = this.newDir();
      const clock = new SkewedClock();
      this.devices.push({ n, now: await this.incarnation(n, dir, clock), faults: {}, clock });
    }
  }

  /** The witness: the feed from the start, long-polled, straight to the service. */
  private async witness(): Promise<void> {
    while (this.witnessing) {
      try {
        const page = (
          await this.user.api.get(`/api/v1/changes?cursor=${this.witnessCursor}&limit=1000&wait=1`)
        ).body as { changes: ChangeRecord[]; cursor: number };
        if (!this.witnessing) return;
        this.witnessed.push(...page.changes);
        this.witnessCursor = page.cursor;
      } catch {
        await new Promise((r) => setTimeout(r, 50)); // the service restarting
      }
    }
  }

  /** The service's feed head now. */
  async head(): Promise<number> {
    return (await this.user.api.get("/api/v1/changes?cursor=latest")).body.cursor as number;
  }

  /** Waits until the witness has read the feed up to `cursor`. */
  async witnessUpTo(cursor: number): Promise<void> {
    const deadline = Date.now() + 20_000;
    while (this.witnessCursor < cursor) {
      if (Date.now() > deadline)
        throw new Error(`the witness is at ${this.witnessCursor}, the feed at ${cursor}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  setFaults(d: Device, faults: Partial<Faults>): void {
    d.faults = { ...d.faults, ...faults };
    d.now.proxy.set(faults);
  }

  /** kill -9; `rollback`: the cache dir as the snapshot left it (a power cut losing what was not durable). */
  async kill(d: Device, rollback: boolean, loseJournal = false): Promise<boolean> {
    const old = d.now;
    const usable = rollback && d.snapshot !== undefined && !d.snapshot.promisedSince;
    const dir = this.newDir();
    // Synchronous: no step of the old Vfs runs between the copy and the cut.
    cpSync(usable ? d.snapshot!.dir : old.cacheDir, dir, { recursive: true });
    // Self-test only: the journal lost, and the local files with it (an attachment's binding and
    // bytes live there: with the journal alone gone, the start finds the bound file unsaved and
    // saves it again, so nothing would be lost).
    if (loseJournal)
      for (const f of ["journal", "local", "local.json", "local.log", "attachments"])
        rmSync(join(dir, f), { recursive: true, force: true });
    old.dead = true;
    old.proxy.set({ cut: true, paused: false });
    this.dropped.push(old);
    this.counts.kills++;
    if (usable) this.counts.rollbacks++;
    d.snapshot = undefined;
    // A machine frozen, then killed, starts again running: its pause ends with it (the runner gives
    // it operations again at once; left paused, nothing would end the pause before the phase's end).
    d.faults = { ...d.faults, paused: false };
    d.now = await this.incarnation(d.n, dir, d.clock);
    d.now.proxy.set(d.faults);
    return usable;
  }

  /** The device's clock set `ms` from the service's (a wrong clock), or moved back `ms` (NTP mid-run). */
  skew(d: Device, ms: number, jumpBack = false): void {
    if (jumpBack) {
      d.clock.offsetMs -= ms;
      this.counts.clockbacks++;
    } else {
      d.clock.offsetMs = ms;
      this.counts.skews++;
    }
  }

  /** A copy of the device's cache dir now (what a power cut may roll it back to). */
  snapshot(d: Device, step: number): void {
    const dir = this.newDir();
    cpSync(d.now.cacheDir, dir, { recursive: true });
    d.snapshot = { dir, step, promisedSince: false };
  }

  /** Two servers on a fresh database (both migrate it at once), and the account. */
  private async startPg(): Promise<void> {
    const db = await createDatabase(await pgAdminUrl(), "txtfs_sim");
    const servers = await Promise.all([spawnServe(serveArgs(db, "0")), spawnServe(serveArgs(db, "0"))]);
    const ports = servers.map((s) => new URL(s.url).port);
    const store = await PostgresStore.open(db);
    this.pg = { db, servers, ports, store };
    const { id, email, secret } = await store.transaction(async (tx) => {
      const u = await createUser(tx, "sim@example.com", "Sim");
      return { id: u.id, email: u.email, secret: (await createKey(tx, u.id, { label: "sim" })).secret };
    });
    this.user = { id, email, key: secret, api: new Api(servers[0]!.url, secret) };
  }

  /**
   * The service stops and starts again on the same port and data; on PostgreSQL, one of its two
   * servers is killed (SIGKILL) and started again on its port.
   */
  async restartService(): Promise<void> {
    if (this.pg) {
      const s = this.random() < 0.5 ? 0 : 1;
      const old = this.pg.servers[s]!;
      old.child.kill("SIGKILL");
      await old.exited;
      this.pg.servers[s] = await spawnServe(serveArgs(this.pg.db, this.pg.ports[s]!));
      this.counts.restarts++;
      this.counts.serverKills++;
      return;
    }
    const port = new URL(this.server.url).port;
    await this.server.close();
    this.server = await startServer({
      host: "127.0.0.1",
      port: Number(port),
      dataDir: this.t.dataDir,
      db: this.t.db,
      retentionDays: 90,
      logger: createLogger("sim-service", "silent"),
      rateLimit: { limit: 1_000_000, anonymousLimit: 1_000_000 },
    });
    this.counts.restarts++;
  }

  async close(): Promise<void> {
    this.witnessing = false;
    const all = [...this.dropped, ...this.devices.map((d) => d.now)];
    await Promise.all(
      all.map((x) => Promise.race([x.vfs.stop().catch(() => {}), new Promise((r) => setTimeout(r, 3000))])),
    );
    for (const x of all) await x.proxy.close();
    await this.server?.close();
    if (this.pg) {
      for (const s of this.pg.servers) s.child.kill("SIGKILL");
      await Promise.all(this.pg.servers.map((s) => s.exited));
      await this.pg.store.close();
      await dropDatabase(this.pg.db);
    }
    await this.witnessLoop;
    if (this.t) rmSync(this.t.dataDir, { recursive: true, force: true });
    for (const dir of this.dirs) rmSync(dir, { recursive: true, force: true });
  }

  private newDir(): string {
    const d = mkdtempSync(join(tmpdir(), "txtfs-sim-"));
    this.dirs.push(d);
    return d;
  }

  private async incarnation(n: number, cacheDir: string, clock: Clock): Promise<Incarnation> {
    const self: Incarnation = {
      cacheDir,
      listedAt: undefined,
      pages: [],
      dead: false,
    } as unknown as Incarnation;
    self.proxy = await startFaultProxy(this.upstreamOf(n), {
      random: this.random,
      trace: (e) => {
        if (!self.dead) this.record(self, e);
        this.trace?.(n, e);
      },
    });
    const client = new TxtfsClient({
      url: self.proxy.url,
      key: this.user.key,
      source: "mount",
      timeoutMs: CLIENT_TIMEOUT_MS,
    });
    self.vfs = new Vfs({
      client,
      cacheDir,
      cacheSize: 1 << 20,
      uid: 0,
      gid: 0,
      logger: createLogger(`sim-device-${n}`, (process.env.VFS_LOG as "silent") ?? "silent"),
      pollWait: 1,
      clock,
    });
    await self.vfs.start();
    return self;
  }

  /** What reached the device: its listing's cursor and each feed page, in the order they arrived. */
  private record(self: Incarnation, e: Exchange): void {
    if (typeof e.status !== "number" || e.status !== 200) return;
    const path = e.path.split("?")[0];
    if (e.method === "GET" && path === "/api/me/files") {
      const m = /"cursor":(\d+)/.exec(e.answer.slice(-200));
      if (!m) return;
      self.listedAt ??= Number(m[1]);
      self.pages.push({ from: -1, cursor: Number(m[1]), seqs: [] }); // a listing: the chain starts again
      return;
    }
    if (e.method !== "GET" || path !== "/api/v1/changes") return;
    const from = Number(new URL(e.path, "http://x").searchParams.get("cursor"));
    const page = JSON.parse(e.answer) as { changes: ChangeRecord[]; cursor: number };
    self.pages.push({ from, cursor: page.cursor, seqs: page.changes.map((c) => c.seq) });
  }
}
