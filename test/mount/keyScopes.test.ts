// What the key and the role allow is known at mount and per note, so a change the service would
// refuse is refused at the system call, before any byte is accepted: a key without files:write
// makes a read-only mount (EROFS, said when mounted), one without folders:write refuses folder
// changes (EACCES), and a note or folder shared as reader refuses every change (EACCES). Nothing
// changes on the service and nothing is left as `.unsent` (write-behind accepted such saves, and
// they came back as `.unsent` files a moment later: issue 52).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requestSync } from "../../src/lib/mountControl.ts";
import { createKey } from "../../src/server/domain/accounts.ts";
import { makeMountDirs, q, type RunningMount, removeMountDirs, sh, startMount } from "../helpers/mount.ts";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
let alice: TestUser; // owns everything below; mounts with keys of fewer scopes
let bob: TestUser; // reads alice's Team folder

const mounts: { mount: RunningMount; dirs: ReturnType<typeof makeMountDirs> }[] = [];

async function mountWith(key: string) {
  const dirs = makeMountDirs();
  const mount = await startMount(dirs, { service: { url: t.url, key } });
  mounts.push({ mount, dirs });
  const run = async (script: string) => {
    const result = await sh(script, { cwd: dirs.mnt });
    await requestSync(dirs.cache, 15_000).catch(() => undefined);
    return result;
  };
  return { mount, dirs, run };
}

async function keyOf(user: TestUser, scopes: string[]): Promise<string> {
  const k = await t.server.store.transaction((tx) => createKey(tx, user.id, { label: "limited", scopes }));
  return k.secret;
}

/** Every note and folder alice has, with each note's content: what must not change. */
async function aliceState() {
  const index = (await alice.api.get("/api/me/files")).body;
  const notes: Record<string, string> = {};
  for (const f of index.files)
    notes[`${f.folderId ?? ""}/${f.name}`] = (await alice.api.get(`/api/v1/files/${f.id}`)).body.content;
  return { notes, folders: index.folders.map((f: any) => `${f.parentFolderId ?? ""}/${f.name}`).sort() };
}

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
  bob = await t.user();
  await alice.api.post("/api/v1/files", { name: "hello.md", content: "hello\n" });
  const docs = (await alice.api.post("/api/v1/folders", { name: "Docs" })).body.folder;
  await alice.api.post("/api/v1/files", { name: "a.md", content: "a\n", folderId: docs.id });
  await alice.api.post("/api/v1/folders", { name: "Empty" });
  const team = (await alice.api.post("/api/v1/folders", { name: "Team" })).body.folder;
  await alice.api.post("/api/v1/files", { name: "plan.md", content: "plan\n", folderId: team.id });
  await alice.api.post(`/api/v1/folders/${team.id}/share`, { email: bob.email, role: "reader" });
}, 30_000);

afterAll(async () => {
  try {
    for (const { mount } of mounts) await mount.stop();
  } finally {
    for (const { dirs } of mounts) await removeMountDirs(dirs);
    await t?.close();
  }
});

/** Runs each command alone; every one must fail with `message` (and its program's exit status). */
async function expectRefused(
  run: (s: string) => Promise<{ code: number | null; stderr: string }>,
  commands: string[],
  message: RegExp,
) {
  for (const command of commands) {
    const r = await run(command);
    expect(r.code, command).not.toBe(0);
    expect(r.stderr, command).toMatch(message);
  }
}

const NOTE_CHANGES = [
  "echo try > new.md",
  "echo more >> hello.md",
  "echo over > hello.md",
  "cp hello.md copy.md",
  "mv hello.md moved.md",
  "mv Docs/a.md a.md",
  "rm hello.md",
  "truncate -s 0 hello.md",
  "touch made.md",
  `python3 -c 'import os; os.open("hello.md", os.O_RDWR)'`,
  `python3 -c 'import os; os.open("hello.md", os.O_WRONLY | os.O_TRUNC)'`,
  "setfattr -n user.txtfs.tags -v x hello.md",
  `echo '{"tags":["x"]}' > hello.md.meta.json`,
];

describe("a key with files:read only", () => {
  let m: Awaited<ReturnType<typeof mountWith>>;
  beforeAll(async () => {
    m = await mountWith(await keyOf(alice, ["files:read", "folders:read"]));
  }, 30_000);

  it("is mounted read-only, and says so", () => {
    expect(m.mount.stdout()).toMatch(/^mounted \S+ \(\d+ ms\) read-only: the key has no files:write$/m);
  });

  it("refuses every change with EROFS before any byte is accepted; nothing changes anywhere", async () => {
    const before = await aliceState();
    // Read first: a note the daemon holds whole (C may answer its read-only opens) is still refused.
    expect((await m.run("cat hello.md Docs/a.md")).stdout).toBe("hello\na\n");
    await expectRefused(
      m.run,
      [...NOTE_CHANGES, "mkdir d", "rmdir Empty", "mv Empty Empty2", "mkdir .obsidian"],
      /Read-only file system/,
    );
    const r = await m.run("stat -c '%a %n' hello.md Docs; cat hello.md; find . -name '*.unsent*'");
    expect(r.stdout).toBe("444 hello.md\n555 Docs\nhello\n");
    expect(await aliceState()).toEqual(before);
  });
});

describe("a key without folders:write", () => {
  let m: Awaited<ReturnType<typeof mountWith>>;
  beforeAll(async () => {
    m = await mountWith(await keyOf(alice, ["files:read", "files:write", "folders:read"]));
  }, 30_000);

  it("refuses making, renaming and removing folders with EACCES, and writes notes", async () => {
    const before = await aliceState();
    expect(m.mount.stdout()).not.toMatch(/read-only/);
    await expectRefused(
      m.run,
      ["mkdir d", "mkdir -p Docs/x/y", "rmdir Empty", "mv Empty Empty2", "mv Docs Empty/"],
      /Permission denied/,
    );
    // A folder that stays on this machine needs no scope; one that would go up with its first note does.
    expect((await m.run("mkdir .git && echo ok > .git/HEAD && cat .git/HEAD")).stdout).toBe("ok\n");
    expect(
      (await m.run("mkdir .obsidian && echo '{}' > .obsidian/app.json && cat .obsidian/app.json")).stdout,
    ).toBe("{}\n");
    await expectRefused(m.run, ["echo x > .obsidian/n.md"], /Permission denied/);
    const wrote = await m.run("echo hi > new.md && echo more >> Docs/a.md && find . -name '*.unsent*'");
    expect([wrote.code, wrote.stdout, wrote.stderr]).toEqual([0, "", ""]);
    const now = await aliceState();
    expect(now.folders).toEqual(before.folders);
    expect(now.notes["/new.md"]).toBe("hi\n");
    expect(Object.values(now.notes)).toContain("a\nmore\n");
  });
});

describe("a folder shared as reader", () => {
  let m: Awaited<ReturnType<typeof mountWith>>;
  let team: string;
  beforeAll(async () => {
    m = await mountWith(bob.key);
    team = `Shared with me/${alice.email}/Team`;
  }, 30_000);

  it("refuses creating inside it and every change to its notes with EACCES; nothing changes", async () => {
    const before = await aliceState();
    const plan = q(`${team}/plan.md`);
    expect((await m.run(`cat ${plan}`)).stdout).toBe("plan\n");
    await expectRefused(
      m.run,
      [
        `echo x > ${q(`${team}/new.md`)}`,
        `touch ${q(`${team}/new.md`)}`,
        `mkdir ${q(`${team}/sub`)}`,
        `echo more >> ${plan}`,
        `echo over > ${plan}`,
        `truncate -s 0 ${plan}`,
        `mv ${plan} ${q(`${team}/p2.md`)}`,
        `mv ${plan} mine.md`,
        `rm ${plan}`,
        `rmdir ${q(team)}`,
        `python3 -c 'import os, sys; os.open(sys.argv[1], os.O_RDWR)' ${plan}`,
        `setfattr -n user.txtfs.tags -v x ${plan}`,
        `echo '{"tags":["x"]}' > ${q(`${team}/plan.md.meta.json`)}`,
      ],
      /Permission denied/,
    );
    const r = await m.run(`cat ${plan}; ls ${q(team)}; find . -name '*.unsent*'`);
    expect(r.stdout).toBe("plan\nplan.md\n");
    expect(await aliceState()).toEqual(before);
    expect((await bob.api.get("/api/me/files")).body.files.map((f: any) => f.name)).toEqual(["plan.md"]);
  });
});
