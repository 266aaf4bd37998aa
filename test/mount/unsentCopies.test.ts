// A save the service refuses for a reason the mount could not foresee (a share made read-only while
// the save waited) keeps its bytes in a local `NAME.unsent` copy; `txtfs status`, `txtfs sync` and
// `txtfs unmount` say what happened and where the bytes are for as long as that copy is there,
// mounted or not, across a remount, and sync exits 1 until it is dealt with. Real mount, real CLI.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runTxtfs } from "../helpers/cli.ts";
import {
  contentAt,
  isMounted,
  type MountDirs,
  makeMountDirs,
  q,
  type RunningMount,
  removeMountDirs,
  sh,
  startMount,
  txtfsEnv,
  undoAfterEach,
  waitFor,
} from "../helpers/mount.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startSlowProxy } from "../helpers/slowProxy.ts";

const later = undoAfterEach();
let t: TestServer;
beforeEach(async () => {
  t = await startTestServer();
});
afterEach(() => t?.close());

describe("refused saves kept as .unsent copies", () => {
  it("are reported by sync (exit 1, every time), status and unmount until the copy is gone, mounted or not", async () => {
    const alice = await t.user();
    const bob = await t.user();
    const team = (await alice.api.post("/api/v1/folders", { name: "Team" })).body.folder;
    await alice.api.post("/api/v1/files", { name: "plan.md", content: "v1\n", folderId: team.id });
    const share = (
      await alice.api.post(`/api/v1/folders/${team.id}/share`, { email: bob.email, role: "writer" })
    ).body.share;
    // Bob's mount reaches the service through a link that can be cut (the service unreachable).
    let cut = false;
    const link = await startSlowProxy(t.url, () => (cut ? -1 : 0));
    later(() => link.close());
    const dirs: MountDirs = makeMountDirs("txtfs-unsent-");
    later(() => removeMountDirs(dirs));
    const env = txtfsEnv(dirs);
    let m = await startMount(dirs, { service: { url: link.url, key: bob.key } });
    later(() => m.stop());
    const note = `/Shared with me/${alice.email}/Team/plan.md`;
    expect((await sh(waitFor(`[ -e ${q(m.mnt + note)} ]`, 10), { cwd: "/" })).code).toBe(0);

    // Saved while the service cannot be reached; meanwhile the share becomes read-only.
    cut = true;
    expect((await sh(`printf "bob's edit\\n" > ${q(m.mnt + note)}`, { cwd: "/" })).code).toBe(0);
    expect(
      (await alice.api.request("PATCH", `/api/v1/shares/${share.id}`, { json: { role: "reader" } })).status,
    ).toBe(200);
    cut = false;
    const first = await runTxtfs(["sync", m.mnt, "--timeout", "30"], env);
    expect(first.code, first.stdout + first.stderr).toBe(1);
    expect(first.stdout).toContain(`${m.mnt}: the service refused the save of ${m.mnt}${note} (`);
    expect(first.stdout).toContain(`; its bytes are kept in ${m.mnt}${note}.unsent\n`);
    expect(await contentAt(alice.api, "Team/plan.md")).toBe("v1\n");
    expect((await sh(`cat ${q(`${m.mnt}${note}.unsent`)}`, { cwd: "/" })).stdout).toBe("bob's edit\n");

    // Not only once: while the copy is there, sync says so again and fails; status lists it.
    const kept = new RegExp(
      `the service refused the save of ${literal(m.mnt + note)} \\(.+\\) at \\S+; its bytes are kept in ${literal(`${m.mnt}${note}.unsent`)}`,
    );
    const again = await runTxtfs(["sync", m.mnt], env);
    expect(again.code).toBe(1);
    expect(again.stdout).toMatch(kept);
    expect((await runTxtfs(["status"], env)).stdout).toMatch(kept);

    // The unmount says so too (exit 1); unmounted, status and sync still do.
    const un = await runTxtfs(["unmount", m.mnt], env);
    expect(un.code, un.stderr).toBe(1);
    expect(un.stderr).toMatch(kept);
    expect(un.stderr).toContain(`(in ${dirs.cache} until it is mounted again)`);
    expect(isMounted(m.mnt)).toBe(false);
    expect((await runTxtfs(["status"], env)).stdout).toMatch(kept);
    const unmounted = await runTxtfs(["sync"], env);
    expect(unmounted.code).toBe(1);
    expect(unmounted.stdout).toMatch(kept);

    // Mounted again: the copy and its reason are still there. Deleted, everything is clean.
    m = await startMount(dirs, { service: { url: link.url, key: bob.key } });
    later(() => m.stop());
    expect((await sh(`cat ${q(`${m.mnt}${note}.unsent`)}`, { cwd: "/" })).stdout).toBe("bob's edit\n");
    expect((await runTxtfs(["sync", m.mnt], env)).stdout).toMatch(kept);
    expect((await sh(`rm ${q(`${m.mnt}${note}.unsent`)}`, { cwd: "/" })).code).toBe(0);
    const clean = await runTxtfs(["sync", m.mnt], env);
    expect(clean.code, clean.stdout).toBe(0);
    expect(clean.stdout).toBe(`${m.mnt}: every save is on the service\n`);
    expect((await runTxtfs(["status"], env)).stdout).not.toMatch(/refused/);
    const un2 = await runTxtfs(["unmount", m.mnt], env);
    expect(un2.code, un2.stderr).toBe(0);
    expect((await runTxtfs(["sync"], env)).stderr).toBe("txtfs: no txtfs mounts\n");
  }, 120_000);
  it("a change refused in the last delivery of a stop (nothing kept: a rename) is reported once, by unmount or else by the next sync", async () => {
    const alice = await t.user();
    const bob = await t.user();
    const shares: string[] = [];
    for (const name of ["One", "Two"]) {
      const folder = (await alice.api.post("/api/v1/folders", { name })).body.folder;
      await alice.api.post("/api/v1/files", { name: "plan.md", content: "v1\n", folderId: folder.id });
      shares.push(
        (await alice.api.post(`/api/v1/folders/${folder.id}/share`, { email: bob.email, role: "writer" }))
          .body.share.id,
      );
    }
    let cut = false;
    const link = await startSlowProxy(t.url, () => (cut ? -1 : 0));
    later(() => link.close());
    const dirs: MountDirs = makeMountDirs("txtfs-unsent-");
    later(() => removeMountDirs(dirs));
    const env = txtfsEnv(dirs);
    const shared = `/Shared with me/${alice.email}`;
    /** Renamed while the service cannot be reached; meanwhile the share becomes read-only. */
    const renameRefused = async (m: RunningMount, folder: string, share: string) => {
      expect(
        (await sh(waitFor(`[ -e ${q(`${m.mnt}${shared}/${folder}/plan.md`)} ]`, 10), { cwd: "/" })).code,
      ).toBe(0);
      cut = true;
      const mv = await sh(
        `mv ${q(`${m.mnt}${shared}/${folder}/plan.md`)} ${q(`${m.mnt}${shared}/${folder}/moved.md`)}`,
        {
          cwd: "/",
        },
      );
      expect(mv.code, mv.stderr).toBe(0);
      const patch = await alice.api.request("PATCH", `/api/v1/shares/${share}`, { json: { role: "reader" } });
      expect(patch.status).toBe(200);
      cut = false;
    };
    const refusal = (folder: string) =>
      new RegExp(
        `the service refused a change to ${literal(`${dirs.mnt}${shared}/${folder}/`)}\\S+ \\(.+\\) at \\S+; it was not applied, the note is as the service has it`,
      );

    // Stopped by a signal (systemd, Ctrl-C): the next sync reports it, once.
    let m = await startMount(dirs, { service: { url: link.url, key: bob.key } });
    later(() => m.stop());
    await renameRefused(m, "One", shares[0]!);
    expect(await m.stop()).toBe(0);
    expect(m.stderr()).toMatch(refusal("One"));
    expect((await runTxtfs(["status"], env)).stdout).toMatch(refusal("One"));
    const sync = await runTxtfs(["sync"], env);
    expect(sync.code).toBe(1);
    expect(sync.stdout).toMatch(refusal("One"));
    expect((await runTxtfs(["sync"], env)).stderr).toBe("txtfs: no txtfs mounts\n");

    // Stopped by txtfs unmount: it says so itself (exit 1), and nobody again.
    m = await startMount(dirs, { service: { url: link.url, key: bob.key } });
    later(() => m.stop());
    await renameRefused(m, "Two", shares[1]!);
    const un = await runTxtfs(["unmount", m.mnt], env);
    expect(un.code, un.stderr).toBe(1);
    expect(un.stderr).toMatch(refusal("Two"));
    expect((await runTxtfs(["sync"], env)).stderr).toBe("txtfs: no txtfs mounts\n");
    expect(await contentAt(alice.api, "Two/plan.md")).toBe("v1\n");
  }, 120_000);
});

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
