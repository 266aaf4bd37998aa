// `.txtfs/` follows the caller's role: a reader of a shared note reads its history, related notes
// and comments and may comment (the service allows it), but cannot tag, connect, restore or
// label it (EACCES, nothing changed on the service).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requestSync } from "../../src/lib/mountControl.ts";
import { makeMountDirs, q, type RunningMount, removeMountDirs, sh, startMount } from "../helpers/mount.ts";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
let alice: TestUser; // owns solo.md, shared with bob as reader
let bob: TestUser; // mounts
let mount: RunningMount;
const dirs = makeMountDirs();
let solo: any;
let soloPath: string; // solo.md's path in bob's mount

const run = async (script: string) => {
  const result = await sh(script, { cwd: dirs.mnt });
  await requestSync(dirs.cache, 15_000).catch(() => undefined);
  return result;
};

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
  bob = await t.user();
  solo = (await alice.api.post("/api/v1/files", { name: "solo.md", content: "read only\n" })).body.file;
  await alice.api.put(`/api/v1/files/${solo.id}`, { content: "read only, twice\n" });
  await alice.api.post("/api/v1/shares", { fileId: solo.id, email: bob.email, role: "reader" });
  await bob.api.post("/api/v1/files", { name: "mine.md", content: "bob's own\n" });
  mount = await startMount(dirs, { service: { url: t.url, key: bob.key } });
  soloPath = `Shared with me/${alice.email}/solo.md`;
}, 30_000);

afterAll(async () => {
  try {
    await mount?.stop();
  } finally {
    await removeMountDirs(dirs);
    await t?.close();
  }
});

const soloNow = async () => (await alice.api.get(`/api/v1/files/${solo.id}`)).body;

describe(".txtfs/ for a reader", () => {
  it("reads the history of a note shared with it", async () => {
    const r = await run(
      `ls ${q(`.txtfs/versions/${soloPath}`)} | wc -l && cat ${q(`.txtfs/versions/${soloPath}/1`)}`,
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("2\nread only\n");
  });

  it("cannot tag, connect, restore or label it: EACCES, and nothing changes", async () => {
    const r = await run(
      [
        "mkdir .txtfs/tags/x",
        `ln -s ${q(`${dirs.mnt}/${soloPath}`)} .txtfs/tags/x/`,
        `ln -s ${q(`${dirs.mnt}/mine.md`)} ${q(`.txtfs/related/${soloPath}/`)}`,
        `setfattr -n user.txtfs.restore -v 1 ${q(soloPath)}`,
        `setfattr -n user.txtfs.commit -v mine ${q(soloPath)}`,
      ].join("; "),
    );
    expect(r.stderr.match(/Permission denied/g)?.length, r.stderr).toBe(4);
    const now = await soloNow();
    expect(now.tags).toEqual([]);
    expect(now.content).toBe("read only, twice\n");
    const versions = (await alice.api.get(`/api/v1/files/${solo.id}/versions`)).body.versions;
    expect(versions.map((v: any) => v.label)).toEqual([null, null]);
    const conns = (await alice.api.get(`/api/v1/files/${solo.id}/connections`)).body.connections;
    expect(conns.some((c: any) => c.reasons.some((x: any) => x.type === "explicit"))).toBe(false);
  });

  it("may comment (the service lets readers comment)", async () => {
    const file = `.txtfs/comments/${soloPath}`;
    const r = await run(`printf '> twice\\nWhy twice?\\n' >> ${q(file)} && grep -c 'Why twice?' ${q(file)}`);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("1\n");
    const comments = (await alice.api.get(`/api/v1/files/${solo.id}/comments`)).body.comments;
    expect(comments).toHaveLength(1);
    expect(comments[0]).toMatchObject({ body: "Why twice?", selected_text: "twice", user_email: bob.email });
  });
});

describe(".txtfs/ on a --read-only mount", () => {
  it("reads, and refuses every change with EROFS", async () => {
    const roDirs = makeMountDirs();
    const ro = await startMount(roDirs, { service: { url: t.url, key: bob.key }, args: ["--read-only"] });
    try {
      const r = await sh(
        [
          "cat .txtfs/versions/mine.md/1",
          "stat -c %A .txtfs/comments/mine.md .txtfs/tags",
          "mkdir .txtfs/tags/y",
          "ln -s ../../../../mine.md '.txtfs/related/Shared with me'/*/solo.md/",
          "printf '> own\\nx\\n' >> .txtfs/comments/mine.md",
          "setfattr -n user.txtfs.commit -v v1 mine.md",
        ].join("; "),
        { cwd: roDirs.mnt },
      );
      expect(r.stdout).toBe("bob's own\n-r--r--r--\ndr-xr-xr-x\n");
      expect(r.stderr.match(/Read-only file system/g)?.length, r.stderr).toBe(4);
    } finally {
      await ro.stop();
      await removeMountDirs(roDirs);
    }
    const mine = (await bob.api.get("/api/me/files")).body.files.find((f: any) => f.name === "mine.md");
    expect((await bob.api.get(`/api/v1/files/${mine.id}/comments`)).body.comments).toHaveLength(0);
    const versions = (await bob.api.get(`/api/v1/files/${mine.id}/versions`)).body.versions;
    expect(versions.map((v: any) => v.label)).toEqual([null]);
  }, 30_000);
});
