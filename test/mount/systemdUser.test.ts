// The mount under systemd: the user unit (scripts/install-user-unit, checked by systemd-analyze),
// sd_notify to a real AF_UNIX datagram socket standing in for systemd's (READY=1 once mounted,
// STOPPING=1 while flushing at `txtfs unmount`, the unit's ExecStop), and SIGHUP (the unit's
// ExecReload): a rotated key file and config are read again, the listing fetched again, the log
// file reopened. (No systemd runs here: the unit is verified, its commands run as it would.)
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createKey, listKeys, revokeKey } from "../../src/server/domain/accounts.ts";
import { ROOT, runTxtfs } from "../helpers/cli.ts";
import {
  contentAt,
  createNote,
  type MountDirs,
  makeMountDirs,
  type RunningMount,
  removeMountDirs,
  sh,
  startMount,
  txtfsEnv,
} from "../helpers/mount.ts";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe("scripts/install-user-unit", () => {
  it("writes txtfs-mount@.service (Type=notify, ExecStop=txtfs unmount) and systemd-analyze accepts it", () => {
    const dir = mkdtempSync(join(tmpdir(), "txtfs-user-unit-"));
    try {
      const r = spawnSync(join(ROOT, "scripts/install-user-unit"), ["--dir", dir], { encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toContain("systemd-analyze verify: ok");
      const unit = readFileSync(join(dir, "txtfs-mount@.service"), "utf8");
      for (const line of ["Type=notify", "NotifyAccess=all", "ExecReload=kill -HUP $MAINPID"])
        expect(unit).toContain(`\n${line}\n`);
      // The Node that runs this checkout (its own, or the one on PATH), with absolute paths.
      expect(unit).toMatch(
        new RegExp(`^ExecStart=/\\S*node ${ROOT}/bin/txtfs mount %f \\$TXTFS_MOUNT_ARGS$`, "m"),
      );
      expect(unit).toMatch(new RegExp(`^ExecStop=/\\S*node ${ROOT}/bin/txtfs unmount %f$`, "m"));
      // Checked as an instance by a user manager, as the installer does: clean, and a broken one fails.
      const env = { ...process.env, XDG_RUNTIME_DIR: dir };
      const instance = join(dir, "txtfs-mount@var-tmp-x.service");
      writeFileSync(instance, unit);
      const ok = spawnSync("systemd-analyze", ["--user", "verify", instance], { encoding: "utf8", env });
      expect(ok.status, ok.stderr).toBe(0);
      expect(ok.stderr.trim()).toBe("");
      writeFileSync(instance, unit.replace("Type=notify", "Type=notifyy"));
      const bad = spawnSync("systemd-analyze", ["--user", "verify", instance], { encoding: "utf8", env });
      expect(bad.stderr).toMatch(/Failed to parse service type|notifyy/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a mount under systemd", () => {
  let dirs: MountDirs;
  let m: RunningMount | undefined;
  let receiver: ChildProcess | undefined;
  afterEach(async () => {
    receiver?.kill();
    await m?.stop();
    await removeMountDirs(dirs);
  });

  /** A datagram socket like systemd's notify socket (python3): what it received, one entry per datagram. */
  function notifySocket(path: string): { bound: () => boolean; received: () => string[] } {
    const script = [
      "import socket, sys, json",
      "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)",
      "s.bind(sys.argv[1])",
      "print('ready', flush=True)",
      "while True:",
      // Ancillary data (systemd-notify's barrier pipe) is dropped, which closes it: the barrier passes.
      "    data = s.recv(4096)",
      "    print(json.dumps(data.decode()), flush=True)",
    ].join("\n");
    receiver = spawn("python3", ["-c", script, path], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    receiver.stdout!.on("data", (d) => {
      out += d;
    });
    return {
      bound: () => out.startsWith("ready\n"),
      received: () =>
        out
          .split("\n")
          .filter((l) => l.startsWith('"'))
          .map((l) => JSON.parse(l) as string),
    };
  }

  async function until(what: string, test: () => boolean, ms = 10_000): Promise<void> {
    for (const deadline = Date.now() + ms; !test(); ) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it("sends READY=1 once mounted and STOPPING=1 when txtfs unmount (ExecStop) flushes", async () => {
    dirs = makeMountDirs("txtfs-notify-");
    const user = await server.user();
    const socket = join(dirs.base, "notify.sock");
    const notify = notifySocket(socket);
    await until("the socket", () => notify.bound());
    m = await startMount(dirs, {
      service: { url: server.url, key: user.key },
      env: { NOTIFY_SOCKET: socket },
    });
    await until("READY=1", () => notify.received().some((d) => d.split("\n").includes("READY=1")));
    const ready = notify.received().find((d) => d.includes("READY=1"))!;
    expect(ready).toMatch(new RegExp(`^READY=1\\nSTATUS=mounted ${dirs.mnt} from ${server.url}$`));
    expect((await sh("printf 'written before stop\\n' > n.md", { cwd: dirs.mnt })).code).toBe(0);
    const r = await runTxtfs(["unmount", dirs.mnt], txtfsEnv(dirs));
    expect(r.code, r.stderr).toBe(0);
    const messages = notify.received().filter((d) => !d.startsWith("BARRIER"));
    expect(messages).toEqual([ready, "STOPPING=1\nSTATUS=flushing pending writes"]);
    expect(await m.exited).toBe(0);
    expect(await contentAt(user.api, "n.md")).toBe("written before stop\n");
  }, 60_000);

  it("without NOTIFY_SOCKET nothing is sent and nothing fails", async () => {
    dirs = makeMountDirs("txtfs-notify-");
    const user = await server.user();
    m = await startMount(dirs, { service: { url: server.url, key: user.key } });
    expect(m.stderr()).not.toMatch(/notify/);
  });

  it("SIGHUP (ExecReload): a rotated key file is read again, the listing refetched, the log file reopened", async () => {
    dirs = makeMountDirs("txtfs-hup-");
    const user: TestUser = await server.user();
    const keyFile = join(dirs.base, "key");
    writeFileSync(keyFile, `${user.key}\n`, { mode: 0o600 });
    const log = join(dirs.base, "mount.log");
    m = await startMount(dirs, {
      service: { url: server.url },
      args: ["--key-file", keyFile, "--log-file", log, "--poll-wait", "30"],
    });
    expect((await sh("printf 'one\\n' > one.md", { cwd: dirs.mnt })).code).toBe(0);
    expect((await runTxtfs(["sync", dirs.mnt], txtfsEnv(dirs))).code).toBe(0);
    expect(await contentAt(user.api, "one.md")).toBe("one\n");

    // The key is rotated: a new one in the file, the old one revoked.
    const store = server.server.store;
    const fresh = await store.transaction(async (tx) => {
      const old = (await listKeys(tx, user.id))[0]!;
      const k = await createKey(tx, user.id, { label: "rotated" });
      await revokeKey(tx, (old as { id: string }).id);
      return k.secret;
    });
    expect((await user.api.get("/api/me/files")).status).toBe(401); // the old key is refused now
    writeFileSync(keyFile, `${fresh}\n`);
    // logrotate moved the log away.
    renameSync(log, `${log}.1`);
    const before = (await sh("ls", { cwd: dirs.mnt })).stdout;
    process.kill(m.pid, "SIGHUP");
    await until("the reload", () => {
      try {
        return readFileSync(log, "utf8").includes("SIGHUP: reloaded");
      } catch {
        return false;
      }
    });
    const reloaded = readFileSync(log, "utf8");
    expect(reloaded).toContain(`the key from --key-file ${keyFile}`);
    expect(reloaded).toContain("the directory listing (refetched)");
    await until("the listing", () =>
      readFileSync(log, "utf8").includes("asked to list again (SIGHUP); re-listing"),
    );
    expect(before).toBe("one.md\n");
    // One reload per signal (a library's signal hook once raised it a second time).
    await new Promise((r) => setTimeout(r, 300));
    expect(readFileSync(log, "utf8").split("SIGHUP: reloaded")).toHaveLength(2);

    // The mount lives on and saves with the new key (the old one is refused by now).
    const api = server.client(fresh);
    expect((await sh("printf 'two\\n' > two.md", { cwd: dirs.mnt })).code).toBe(0);
    const synced = await runTxtfs(["sync", dirs.mnt, "--timeout", "5"], txtfsEnv(dirs));
    expect(synced.code, synced.stdout + synced.stderr).toBe(0);
    expect(await contentAt(api, "two.md")).toBe("two\n");

    // A key file that became unreadable: the old key stays, one error line in the log, still mounted.
    writeFileSync(keyFile, "");
    await createNote(api, { name: "remote.md", content: "r" });
    process.kill(m.pid, "SIGHUP");
    await until("the second reload", () => readFileSync(log, "utf8").split("SIGHUP: reloaded").length === 3);
    expect(readFileSync(log, "utf8")).toMatch(/credentials could not be read again; keeping the old ones/);
    // The note made remotely shows (through the feed or the listing asked for: either may come
    // first, and a busy machine's took longer than the reload's log line).
    let listing = "";
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
      listing = (await sh("ls", { cwd: dirs.mnt })).stdout;
      if (listing.includes("remote.md")) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(listing).toBe("one.md\nremote.md\ntwo.md\n");
    expect(m.child.exitCode).toBe(null);
    chmodSync(keyFile, 0o600);
  }, 60_000);
});
