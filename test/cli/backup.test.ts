// Operating the embedded store: one server per store, backups taken while writers run, restore.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runTxtfs, type ServeProcess, spawnServe, spawnServeWithKey } from "../helpers/cli.ts";
import { Api } from "../helpers/server.ts";

const dirs: string[] = [];
const servers: ServeProcess[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "txtfs-backup-"));
  dirs.push(d);
  return d;
};

afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("one server per embedded store", () => {
  it("a second serve on the same data is refused, naming the first; a crashed server's lock is taken over", async () => {
    const data = tempDir();
    const first = await spawnServe(["--data", data]);
    servers.push(first);
    const second = await runTxtfs(["serve", "--port", "0", "--data", data]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`pid ${first.child.pid}`);
    expect(second.stderr).toContain("stop it first, or give this one another --data");
    expect(second.stderr).not.toMatch(/\n\s+at /);
    // The first is untouched.
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
    // A crash leaves the lock file behind; the next server sees its owner is gone and starts.
    first.child.kill("SIGKILL");
    await first.exited;
    expect(readdirSync(data)).toContain("txtfs.db.serve-lock");
    const third = await spawnServe(["--data", data]);
    servers.push(third);
    expect((await fetch(`${third.url}/readyz`)).status).toBe(200);
    // A clean stop removes the lock.
    await third.stop();
    expect(readdirSync(data)).not.toContain("txtfs.db.serve-lock");
  });
});

describe("txtfs admin backup / restore", () => {
  it("backs up while writers run; the restored store has every write acknowledged before the backup", async () => {
    const data = tempDir();
    const s = await spawnServeWithKey(data);
    servers.push(s);
    const api = new Api(s.url, s.key);
    // Some bulk first, so the copy takes long enough to overlap the writers.
    const filler = "lorem ipsum ".repeat(4000);
    for (let i = 0; i < 40; i++) await api.post("/api/v1/files", { name: `filler-${i}.md`, content: filler });

    const acked: { id: string; content: string; at: number }[] = [];
    let writing = true;
    const writer = async (w: number) => {
      for (let i = 0; writing; i++) {
        const content = `writer ${w} note ${i} ${"x".repeat(i % 50)}`;
        const res = await api.post("/api/v1/files", { name: `w${w}-${i}.md`, content });
        if (res.status !== 201) throw new Error(`write failed: ${res.status} ${res.text}`);
        acked.push({ id: res.body.file.id, content, at: Date.now() });
      }
    };
    const writers = [0, 1, 2].map(writer);
    await new Promise((r) => setTimeout(r, 300));
    const backupStarted = Date.now();
    const backupFile = join(tempDir(), "txtfs-backup.db");
    const backup = await runTxtfs(["admin", "backup", "--data", data, "--to", backupFile]);
    const during = acked.filter((a) => a.at > backupStarted).length;
    await new Promise((r) => setTimeout(r, 200));
    writing = false;
    await Promise.all(writers);
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stderr).toMatch(/^backup: [\d.]+ MiB of about [\d.]+ MiB$/m);
    expect(backup.stdout).toMatch(/backed up .* users, \d+ notes/);
    expect(during).toBeGreaterThan(0); // the writers really ran while the backup did

    const before = acked.filter((a) => a.at < backupStarted);
    expect(before.length).toBeGreaterThan(0);

    // Restore into a new data directory and serve it.
    const restored = tempDir();
    const r = await runTxtfs(["admin", "restore", "--data", restored, "--from", backupFile]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/restored .* notes/);
    // The vault key travels with the backup: vaulted credentials stay readable.
    expect(backup.stdout).toContain(`${backupFile}.vault.key`);
    expect(r.stdout).toContain("vault key restored");
    expect(readFileSync(join(restored, "vault.key"), "utf8")).toBe(
      readFileSync(join(data, "vault.key"), "utf8"),
    );
    expect(statSync(`${backupFile}.vault.key`).mode & 0o777).toBe(0o600);
    expect(statSync(backupFile).mode & 0o777).toBe(0o600);
    const users = await runTxtfs(["admin", "user", "list", "--data", restored]);
    const email = users.stdout.trim().split("\n")[0]!.split("\t")[1]!;
    const key = (await runTxtfs(["admin", "key", "add", email, "--data", restored])).stdout
      .trim()
      .split("\n")
      .at(-1)!;
    const s2 = await spawnServe(["--data", restored]);
    servers.push(s2);
    const api2 = new Api(s2.url, key);
    for (const a of before) {
      const res = await api2.get(`/api/v1/files/${a.id}`);
      expect(res.status, a.id).toBe(200);
      expect(res.body.content).toBe(a.content);
    }
    // Nothing half-written: every note in the backup is one that was acknowledged, whole.
    const byId = new Map(acked.map((a) => [a.id, a.content]));
    const listed = (await api2.get("/api/me/files")).body;
    const files = listed.files as { id: string; name: string }[];
    expect(files.length).toBeGreaterThanOrEqual(40 + before.length);
    for (const f of files.filter((f) => byId.has(f.id)).slice(0, 50)) {
      const res = await api2.get(`/api/v1/files/${f.id}`);
      expect(res.body.content).toBe(byId.get(f.id));
    }
  }, 60_000);

  it("restore checks what it installs and never replaces a store in use or by surprise", async () => {
    const data = tempDir();
    const dir = tempDir();
    await runTxtfs(["admin", "user", "add", "a@example.com", "--data", data]);
    const good = join(dir, "good.db");
    expect((await runTxtfs(["admin", "backup", "--data", data, "--to", good])).code).toBe(0);
    // an existing backup file is not overwritten without --force
    const again = await runTxtfs(["admin", "backup", "--data", data, "--to", good]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("--force");

    const target = tempDir();
    await runTxtfs(["admin", "user", "add", "b@example.com", "--data", target]);
    const usersOf = async (d: string) => (await runTxtfs(["admin", "user", "list", "--data", d])).stdout;

    const garbage = join(dir, "garbage.db");
    writeFileSync(garbage, "not a database at all ".repeat(100));
    const notDb = await runTxtfs(["admin", "restore", "--data", target, "--from", garbage, "--force"]);
    expect(notDb.code).toBe(1);
    expect(notDb.stderr).toContain("not an SQLite database");
    const missing = await runTxtfs(["admin", "restore", "--data", target, "--from", join(dir, "nope.db")]);
    expect(missing.stderr).toContain("does not exist");
    // an existing store needs --force
    const noForce = await runTxtfs(["admin", "restore", "--data", target, "--from", good]);
    expect(noForce.code).toBe(1);
    expect(noForce.stderr).toContain("pass --force");
    expect(await usersOf(target)).toContain("b@example.com");
    // a store a server is using is never replaced
    const s = await spawnServe(["--data", target]);
    servers.push(s);
    const busy = await runTxtfs(["admin", "restore", "--data", target, "--from", good, "--force"]);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain(`pid ${s.child.pid}`);
    await s.stop();
    expect(await usersOf(target)).toContain("b@example.com");
    // with --force, the replaced store is kept beside it
    const forced = await runTxtfs(["admin", "restore", "--data", target, "--from", good, "--force"]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain("kept as");
    expect(await usersOf(target)).toContain("a@example.com");
    expect(await usersOf(target)).not.toContain("b@example.com");
    const kept = readdirSync(target).find(
      (f) => f.startsWith("txtfs.db.before-restore-") && !/-(wal|shm)$/.test(f),
    )!;
    expect(
      await runTxtfs(["admin", "user", "list", "--db", `sqlite:${join(target, kept)}`]).then((r) => r.stdout),
    ).toContain("b@example.com");
    // PostgreSQL is pg_dump's job: a clear pointer, not a failure deep inside
    const pg = await runTxtfs([
      "admin",
      "backup",
      "--db",
      "postgres://u@127.0.0.1:1/db",
      "--to",
      join(dir, "x"),
    ]);
    expect(pg.code).toBe(1);
    expect(pg.stderr).toContain("pg_dump");
  }, 60_000);
});
