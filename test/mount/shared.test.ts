// Files shared with the mount's user appear under `Shared with me/OWNER/` with modes that follow
// the role; a reader's write fails with EACCES and changes nothing; a skill tree copied into a
// shared folder is published to every member.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requestSync } from "../../src/lib/mountControl.ts";
import {
  makeMountDirs,
  type RunningMount,
  removeMountDirs,
  sh,
  startMount,
  waitFor,
} from "../helpers/mount.ts";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
let alice: TestUser; // shares with bob
let bob: TestUser; // mounts
let mount: RunningMount;
const dirs = makeMountDirs();
let team: any;
let solo: any;
let shared: string; // the mount path of alice's shares

/** Runs a script in the mount, then waits for its saves to reach the service (write-behind). */
const run = async (script: string) => {
  const result = await sh(script, { cwd: dirs.mnt });
  await requestSync(dirs.cache, 15_000).catch(() => undefined);
  return result;
};

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
  bob = await t.user();
  team = (await alice.api.post("/api/v1/folders", { name: "Team" })).body.folder;
  await alice.api.post("/api/v1/files", { name: "plan.md", content: "team plan\n", folderId: team.id });
  solo = (await alice.api.post("/api/v1/files", { name: "solo.md", content: "read only\n" })).body.file;
  await alice.api.post(`/api/v1/folders/${team.id}/share`, { email: bob.email, role: "writer" });
  await alice.api.post("/api/v1/shares", { fileId: solo.id, email: bob.email, role: "reader" });
  await bob.api.post("/api/v1/files", { name: "mine.md", content: "bob's own\n" });
  mount = await startMount(dirs, { service: { url: t.url, key: bob.key } });
  shared = `Shared with me/${alice.email}`;
}, 30_000);

afterAll(async () => {
  try {
    await mount?.stop();
  } finally {
    await removeMountDirs(dirs);
    await t?.close();
  }
});

describe("Shared with me", () => {
  it("shows what others shared under their email, beside your own notes", async () => {
    const r = await run(
      `ls -1; echo ---; ls -1 "Shared with me"; echo ---; ls -1 "${shared}" "${shared}/Team"`,
    );
    expect(r.code, r.stderr).toBe(0);
    const [top, owners, inside] = r.stdout.split("---\n");
    expect(top!.split("\n").filter(Boolean).sort()).toEqual(["Shared with me", "mine.md"]);
    expect(owners!.trim()).toBe(alice.email);
    expect(inside).toContain("solo.md");
    expect(inside).toContain("plan.md");
    const cat = await run(`cat "${shared}/Team/plan.md" "${shared}/solo.md"`);
    expect(cat.stdout).toBe("team plan\nread only\n");
  });

  it("modes follow the role: reader 0444, writer 0644, the synthetic folders are read-only", async () => {
    const r = await run(
      `stat -c '%a %n' "${shared}/solo.md" "${shared}/Team/plan.md" "${shared}/Team" "Shared with me" "${shared}"`,
    );
    expect(r.stdout.split("\n").filter(Boolean)).toEqual([
      `444 ${shared}/solo.md`,
      `644 ${shared}/Team/plan.md`,
      `755 ${shared}/Team`,
      "555 Shared with me",
      `555 ${shared}`,
    ]);
  });

  it("a reader's write fails with EACCES and changes nothing; nothing can be made in the synthetic folders", async () => {
    const r = await run(`echo vandal >> "${shared}/solo.md"`);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/Permission denied/);
    expect((await alice.api.get(`/api/v1/files/${solo.id}`)).body.content).toBe("read only\n");
    const mk = await run(`mkdir "Shared with me/x" ; touch "${shared}/new.md"`);
    expect(mk.stderr).toMatch(/mkdir: cannot create directory.*Permission denied/);
    expect(mk.stderr).toMatch(/touch: cannot touch.*Permission denied/);
    expect((await bob.api.get("/api/v1/files")).body.files.map((f: any) => f.name).sort()).toEqual([
      "mine.md",
      "plan.md",
      "solo.md",
    ]);
  });

  it("a writer's edit goes to the owner's note", async () => {
    const r = await run(`echo "bob was here" >> "${shared}/Team/plan.md"`);
    expect(r.code, r.stderr).toBe(0);
    const plan = (await alice.api.get("/api/v1/files")).body.files.find((f: any) => f.name === "plan.md");
    expect((await alice.api.get(`/api/v1/files/${plan.id}`)).body.content).toBe("team plan\nbob was here\n");
    // the version history records who and through what
    const versions = (await alice.api.get(`/api/v1/files/${plan.id}/versions`)).body.versions;
    expect(versions[0]).toMatchObject({ version_number: 2, source: "mount", author_user_id: bob.id });
  });

  it("cp -r of a skill tree into the shared folder publishes it to every member", async () => {
    const r = await run(
      `mkdir -p /tmp/skills-$$/review && printf -- '---\\nname: review\\ndescription: Reviews\\n---\\n# Review\\n' > /tmp/skills-$$/review/SKILL.md && mkdir "${shared}/Team/skills" && cp -r /tmp/skills-$$/review "${shared}/Team/skills/" ; s=$?; rm -rf /tmp/skills-$$; exit $s`,
    );
    expect(r.code, r.stderr).toBe(0);
    for (const who of [alice, bob]) {
      const skills = (await who.api.get("/api/v1/skills")).body.skills;
      expect(skills).toEqual([
        expect.objectContaining({
          skill: "review",
          scope: "project",
          project: "Team",
          description: "Reviews",
        }),
      ]);
    }
  });

  it("new shares appear and revoked ones disappear while mounted", async () => {
    const later = (await alice.api.post("/api/v1/files", { name: "later.md", content: "new\n" })).body.file;
    const res = await alice.api.post("/api/v1/shares", {
      fileId: later.id,
      email: bob.email,
      role: "reader",
    });
    expect(res.status).toBe(201);
    let r = await run(waitFor(`[ -f "${shared}/later.md" ]`, 5));
    expect(r.code).toBe(0);
    expect((await run(`cat "${shared}/later.md"`)).stdout).toBe("new\n");
    await alice.api.delete(`/api/v1/shares/${res.body.share.id}`);
    r = await run(waitFor(`[ ! -e "${shared}/later.md" ]`, 5));
    expect(r.code).toBe(0);
  });
});
