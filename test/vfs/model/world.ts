// The Vfs under test and its life: a real server on loopback, reached through a proxy of its own so
// that a kill -9 can be simulated in-process. A kill copies the cache dir as it is at that instant
// (what a killed daemon leaves on disk), cuts the proxy (answers on their way are lost; the dropped
// Vfs, still running, reaches nothing from then on: its listener stays, refusing, so its port is
// never another's) and starts a new Vfs on the copy, which replays the journal.
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TxtfsClient } from "../../../src/client/api.ts";
import { createLogger } from "../../../src/lib/logger.ts";
import { Vfs } from "../../../src/vfs/vfs.ts";
import type { TestServer, TestUser } from "../../helpers/server.ts";
import { type SlowProxy, startSlowProxy } from "../../helpers/slowProxy.ts";

interface Incarnation {
  vfs: Vfs;
  proxy: SlowProxy;
  cacheDir: string;
  dead: boolean;
}

export class VfsWorld {
  private current!: Incarnation;
  private readonly dropped: Incarnation[] = [];
  private readonly dirs: string[] = [];
  /** Kills so far. */
  kills = 0;
  /** The cursor the live Vfs's latest poll of the change feed asked from: it waits for what comes after. */
  polledFrom = -1;

  private readonly server: TestServer;
  private readonly user: TestUser;

  constructor(server: TestServer, user: TestUser) {
    this.server = server;
    this.user = user;
  }

  get vfs(): Vfs {
    return this.current.vfs;
  }

  async start(): Promise<void> {
    this.current = await this.incarnation(this.newDir());
  }

  /** kill -9: the Vfs is dropped without a clean close; a new one starts on what it left on disk. */
  async kill(o: { loseJournal?: boolean } = {}): Promise<void> {
    const old = this.current;
    const dir = this.newDir();
    cpSync(old.cacheDir, dir, { recursive: true }); // synchronous: no step of the old Vfs runs meanwhile
    if (o.loseJournal) rmSync(join(dir, "journal"), { recursive: true, force: true }); // self-test only
    old.dead = true;
    old.proxy.cut();
    this.dropped.push(old);
    this.kills++;
    this.polledFrom = -1;
    this.current = await this.incarnation(dir);
  }

  async close(): Promise<void> {
    // The dropped ones reach nothing; stopping them only ends their timers.
    const stops = [...this.dropped, this.current].map((x) =>
      Promise.race([x.vfs.stop().catch(() => {}), new Promise((r) => setTimeout(r, 3000))]),
    );
    await Promise.all(stops);
    for (const x of [...this.dropped, this.current]) await x.proxy.close();
    for (const d of this.dirs) rmSync(d, { recursive: true, force: true });
  }

  private newDir(): string {
    const d = mkdtempSync(join(tmpdir(), "txtfs-vfsmodel-"));
    this.dirs.push(d);
    return d;
  }

  private async incarnation(cacheDir: string): Promise<Incarnation> {
    const self = { dead: false } as Incarnation;
    self.proxy = await startSlowProxy(this.server.url, (_method, path) => {
      if (self.dead) return -1;
      // The follower moves its cursor before it asks again: the poll asks from that one.
      if (path === "/api/v1/changes") this.polledFrom = self.vfs.stats().cursor;
      return 0;
    });
    self.cacheDir = cacheDir;
    const client = new TxtfsClient({
      url: self.proxy.url,
      key: this.user.key,
      source: "mount",
      timeoutMs: 5000,
    });
    self.vfs = new Vfs({
      client,
      cacheDir,
      cacheSize: 1 << 20,
      uid: 0,
      gid: 0,
      logger: createLogger("vfs-model", (process.env.VFS_LOG as "silent") ?? "silent"),
      pollWait: 1,
    });
    await self.vfs.start();
    return self;
  }
}
