import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deriveSkill, frontMatter } from "../../src/server/domain/skills.ts";
import { expectError, startTestServer, type TestServer, type TestUser } from "../helpers/server.ts";

let t: TestServer;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
  bob = await t.user();
  carol = await t.user();
});
afterAll(() => t.close());

const skill = (name: string, extra = "") =>
  `---\nname: ${name}\ndescription: Does ${name}\n${extra}---\n# ${name}\n`;

describe("skill derivation", () => {
  it("follows the documented rule", () => {
    expect(deriveSkill(["skills", "pdf"], {})).toEqual({
      scope: "global",
      project: null,
      agent: null,
      skill: "pdf",
    });
    expect(deriveSkill([".claude", "skills", "pdf"], {})).toEqual({
      scope: "global",
      project: null,
      agent: "claude",
      skill: "pdf",
    });
    expect(deriveSkill(["webapp", ".codex", "skills", "deploy"], {})).toEqual({
      scope: "project",
      project: "webapp",
      agent: "codex",
      skill: "deploy",
    });
    expect(deriveSkill(["Team", "skills", "review"], {})).toEqual({
      scope: "project",
      project: "Team",
      agent: null,
      skill: "review",
    });
    expect(deriveSkill(["notes"], {})).toEqual({
      scope: "unknown",
      project: null,
      agent: null,
      skill: "notes",
    });
    expect(deriveSkill([], {})).toEqual({ scope: "unknown", project: null, agent: null, skill: "SKILL" });
    expect(deriveSkill(["skills"], { name: "x" }).skill).toBe("x");
    // front matter wins
    expect(deriveSkill(["Team", "skills", "r"], { scope: "global", agent: "claude", name: "rev" })).toEqual({
      scope: "global",
      project: null,
      agent: "claude",
      skill: "rev",
    });
    expect(deriveSkill(["notes"], { project: "api" })).toMatchObject({ scope: "project", project: "api" });
  });

  it("reads front matter scalars", () => {
    expect(frontMatter('---\nname: "pdf tools"\ndescription: Fill PDFs\nlist:\n  - a\n---\nbody')).toEqual({
      name: "pdf tools",
      description: "Fill PDFs",
    });
    expect(frontMatter("no front matter\n---\nname: x\n---")).toEqual({});
  });
});

describe("GET /api/v1/skills", () => {
  it("lists every SKILL.md the caller can read as TxtSkill records", async () => {
    const imp = await alice.api.post("/api/v1/files/import", {
      files: [
        { path: "skills/pdf/SKILL.md", content: skill("pdf") },
        { path: "webapp/.claude/skills/deploy/SKILL.md", content: skill("deploy") },
        { path: "webapp/.claude/skills/deploy/helper.md", content: "not a skill" },
        { path: "notes/SKILL.md", content: "no front matter" },
      ],
    });
    expect(imp.status, imp.text).toBe(200);
    const res = await alice.api.get("/api/v1/skills");
    expect(res.status, res.text).toBe(200);
    const byPath = Object.fromEntries(res.body.skills.map((s: any) => [s.path, s]));
    expect(Object.keys(byPath).sort()).toEqual([
      "notes/SKILL.md",
      "skills/pdf/SKILL.md",
      "webapp/.claude/skills/deploy/SKILL.md",
    ]);
    expect(byPath["webapp/.claude/skills/deploy/SKILL.md"]).toMatchObject({
      name: "SKILL.md",
      folderName: "deploy",
      type: "md",
      access: "owner",
      role: "owner",
      scope: "project",
      project: "webapp",
      agent: "claude",
      skill: "deploy",
      description: "Does deploy",
      context: "",
      tags: [],
    });
    const s = byPath["skills/pdf/SKILL.md"];
    expect(s).toMatchObject({ scope: "global", project: null, agent: null, skill: "pdf" });
    expect(s.endpoint).toBe(`/api/v1/files/${s.id}`);
    expect(s.raw).toBe(`/api/v1/files/${s.id}/raw`);
    expect(s).not.toHaveProperty("content");
    expect(byPath["notes/SKILL.md"]).toMatchObject({ scope: "unknown", skill: "notes", description: null });
    const me = await alice.api.get("/api/me/skills");
    expect(me.body.skills).toHaveLength(3);
  });

  it("a skill tree published into a shared folder appears for every member, with their role", async () => {
    const imp = await alice.api.post("/api/v1/files/import", {
      files: [{ path: "Team/readme.md", content: "team" }],
    });
    const team = imp.body.folders.find((f: any) => f.path === "Team").id;
    await alice.api.post(`/api/v1/folders/${team}/share`, { email: bob.email, role: "writer" });
    // bob publishes a skill tree into the shared folder
    const pub = await bob.api.post("/api/v1/files/import", {
      folderId: team,
      files: [
        { path: "skills/review/SKILL.md", content: skill("review") },
        { path: "skills/review/checklist.md", content: "- [ ] tests" },
      ],
    });
    expect(pub.status, pub.text).toBe(200);
    for (const [who, role] of [
      [alice, "owner"],
      [bob, "writer"],
    ] as const) {
      const found = (await who.api.get("/api/v1/skills")).body.skills.filter(
        (s: any) => s.skill === "review",
      );
      expect(found).toHaveLength(1);
      expect(found[0]).toMatchObject({
        role,
        scope: "project",
        project: "Team",
        path: "Team/skills/review/SKILL.md",
      });
    }
    expect((await carol.api.get("/api/v1/skills")).body.skills).toEqual([]);
  });

  it("needs files:read", async () => {
    const limited = await t.user(undefined, ["folders:read"]);
    expectError(await limited.api.get("/api/v1/skills"), 403, "insufficient_scope");
  });
});
