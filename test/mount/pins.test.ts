// Devices and pinning through a real mount: `txtfs pin` keeps notes on disk, they read and edit
// with the service stopped, and the edits are delivered (conflicts as copies) when it returns.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runTxtfs, spawnServeWithKey } from "../helpers/cli.ts";
import {
  contentAt,
  flatIndex,
  type MountDirs,
  makeMountDirs,
  removeMountDirs,
  sh,
  startMount,
  txtfsEnv,
  undoAfterEach,
} from "../helpers/mount.ts";
import { Api } from "../helpers/server.ts";

const later = undoAfterEach();

async function service(data: string, port = "0") {
  const s = await spawnServeWithKey(data, port);
  later(() => s.stop());
  return s;
}

async function until(check: () => Promise<boolean> | boolean, what: string, ms = 10_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out: ${what}`);
}

describe("pinning", () => {
  it("pinned notes stay readable and editable offline; edits replay, conflicts become copies", async () => {
    const dirs: MountDirs = makeMountDirs();
    later(() => removeMountDirs(dirs));
    const data = `${dirs.base}/service`;
    const first = await service(data);
    const port = new URL(first.url).port;
    const api = new Api(first.url, first.key);
    const dir = (await api.post("/api/v1/folders", { name: "keep" })).body.folder;
    const a = (await api.post("/api/v1/files", { name: "a.md", content: "alpha\n", folderId: dir.id })).body
      .file;
    const b = (await api.post("/api/v1/files", { name: "b.md", content: "beta\n", folderId: dir.id })).body
      .file;
    await api.post("/api/v1/files", { name: "loose.md", content: "not pinned\n" });

    const m = await startMount(dirs, { service: { url: first.url, key: first.key } });
    later(() => m.stop());
    // the daemon registered itself once, and keeps the id in its config
    const devices = (await api.get("/api/v1/devices")).body.devices;
    expect(devices).toHaveLength(1);
    expect(devices[0]).toMatchObject({ platform: "linux", clientName: "txtfs mount" });

    const pin = await runTxtfs(["pin", join(m.mnt, "keep")], txtfsEnv(dirs));
    expect(pin.code, pin.stderr).toBe(0);
    expect(pin.stdout).toContain(`pinned\t${join(m.mnt, "keep")}`);
    const attr = await sh(
      "getfattr --only-values -n user.txtfs.state keep/a.md; echo; getfattr --only-values -n user.txtfs.state loose.md",
      { cwd: m.mnt },
    );
    expect(attr.stdout).toBe("pinned\nonline-only");
    // recorded on the service for this device, inherited by the folder's notes
    const state = (await api.get(`/api/v1/devices/${devices[0].id}/state`)).body;
    expect(state.items).toEqual([expect.objectContaining({ folderId: dir.id, state: "pinned" })]);
    expect(state.files.map((f: any) => f.fileId).sort()).toEqual([a.id, b.id].sort());
    // the bodies are on disk without ever having been read through the mount
    await until(
      () => existsSync(join(dirs.cache, "pinned", a.id)) && existsSync(join(dirs.cache, "pinned", b.id)),
      "pinned bodies",
    );
    await until(
      async () =>
        (await runTxtfs(["status"], txtfsEnv(dirs))).stdout.includes(
          "kept on disk (pinned/available) 2 notes",
        ),
      "status shows the kept notes",
    );
    const bad = await sh("setfattr -n user.txtfs.state -v always keep/a.md", { cwd: m.mnt });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/Invalid argument/);

    // the service goes away
    expect(await first.stop()).toBe(0);
    const offline = await sh(
      "cat keep/a.md keep/b.md && echo 'edited offline' >> keep/a.md && printf 'beta from us\\n' > keep/b.md && cat keep/a.md",
      { cwd: m.mnt },
    );
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stdout).toBe("alpha\nbeta\nalpha\nedited offline\n");
    const unpinned = await sh("cat loose.md", { cwd: m.mnt });
    expect(unpinned.code).not.toBe(0); // online-only and never read: not available offline

    // meanwhile b.md changes on the service (another client, through another server process)
    const other = await service(data);
    await new Api(other.url, first.key).put(`/api/v1/files/${b.id}`, { content: "beta from them\n" });
    await other.stop();

    // the service returns on its port: our edits are delivered, the stale one as a conflict copy
    const back = await service(data, port);
    const api2 = new Api(back.url, first.key);
    await until(
      async () => (await contentAt(api2, "keep/a.md")) === "alpha\nedited offline\n",
      "a.md replayed",
      20_000,
    );
    await until(
      async () => (await flatIndex(api2)).files.some((f: any) => /^b\.conflict-.+\.md$/.test(f.name)),
      "conflict copy",
      20_000,
    );
    expect(await contentAt(api2, "keep/b.md")).toBe("beta from them\n");
    // a.md went up in the one sync request of the catch-up; b.md's conflict took the one-by-one path
    expect(m.stderr()).toMatch(/"path":"\/keep\/a.md".*delivered \(bulk\)/);
    expect(m.stderr()).not.toMatch(/"path":"\/keep\/b.md".*delivered \(bulk\)/);
    const copy = (await flatIndex(api2)).files.find((f: any) => /^b\.conflict-.+\.md$/.test(f.name));
    expect(copy.folderId).toBe(dir.id);
    expect((await api2.get(`/api/v1/files/${copy.id}`)).body.content).toBe("beta from us\n");

    // unpin frees the disk copies
    const unpin = await runTxtfs(["unpin", join(m.mnt, "keep")], txtfsEnv(dirs));
    expect(unpin.code, unpin.stderr).toBe(0);
    expect(existsSync(join(dirs.cache, "pinned", a.id))).toBe(false);
    expect((await sh("getfattr --only-values -n user.txtfs.state keep/a.md", { cwd: m.mnt })).stdout).toBe(
      "online-only",
    );

    // a state set for this device by another client is adopted at the next mount, same device id
    const loose = (await flatIndex(api2)).files.find((f: any) => f.name === "loose.md");
    await api2.put(`/api/v1/devices/${devices[0].id}/state`, { fileId: loose.id, state: "pinned" });
    await m.stop();
    const again = await startMount(dirs, { service: { url: back.url, key: first.key } });
    later(() => again.stop());
    expect((await api2.get("/api/v1/devices")).body.devices.map((d: any) => d.id)).toEqual([devices[0].id]);
    await until(() => existsSync(join(dirs.cache, "pinned", loose.id)), "remotely pinned body");
    const st = await sh("getfattr --only-values -n user.txtfs.state loose.md keep/a.md", { cwd: again.mnt });
    expect(st.stdout).toBe("pinnedonline-only");

    // `available`: kept on disk once read, not before
    const avail = await runTxtfs(["pin", "--available", join(again.mnt, "keep", "a.md")], txtfsEnv(dirs));
    expect(avail.code, avail.stderr).toBe(0);
    expect(existsSync(join(dirs.cache, "pinned", a.id))).toBe(false);
    expect((await sh("cat keep/a.md", { cwd: again.mnt })).stdout).toBe("alpha\nedited offline\n");
    await until(() => existsSync(join(dirs.cache, "pinned", a.id)), "available body kept after a read");
  }, 90_000);
});

describe("txtfs pin outside a mount", () => {
  it("fails clearly and sets nothing", async () => {
    const dirs: MountDirs = makeMountDirs();
    later(() => removeMountDirs(dirs));
    await sh(`echo x > '${dirs.base}/plain.md'`, { cwd: "/" });
    const r = await runTxtfs(["pin", join(dirs.base, "plain.md")], txtfsEnv(dirs));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/plain\.md: not inside a txtfs mount/);
    expect((await sh(`getfattr -n user.txtfs.state '${dirs.base}/plain.md'`, { cwd: "/" })).code).not.toBe(0);
    expect(r.stderr).toMatch(/1 of 1 paths could not be set \(are they in a txtfs mount\?\)/);
  });
});
