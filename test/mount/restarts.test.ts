// The mount keeps what it was given across restarts of its daemon: its cache dir (journal,
// local-only files) is keyed by the service's identity, not by the port `--serve` happened to get,
// and `--serve` listens on the same port again so the TXTFS_URL it printed stays valid.
import { describe, expect, it } from "vitest";
import { runTxtfs, spawnServeWithKey } from "../helpers/cli.ts";
import {
  contentAt,
  flatIndex,
  type MountDirs,
  makeMountDirs,
  type RunningMount,
  removeMountDirs,
  sh,
  startMount,
  txtfsEnv,
  undoAfterEach,
} from "../helpers/mount.ts";

const later = undoAfterEach();

/** Fresh mount dirs and a `txtfs serve` of their own (both removed after the test). */
async function withService() {
  const dirs = makeMountDirs();
  later(() => removeMountDirs(dirs));
  const data = `${dirs.base}/service`;
  const first = await spawnServeWithKey(data);
  later(() => first.stop());
  return { dirs, data, first };
}

async function mountOn(dirs: MountDirs, url: string, key: string): Promise<RunningMount> {
  const m = await startMount(dirs, { service: { url, key }, defaultCacheDir: true });
  later(() => m.stop());
  return m;
}

/** kill -9: no chance to flush; what is on disk is all there is. */
async function killDaemon(m: RunningMount, mnt: string): Promise<void> {
  m.child.kill("SIGKILL");
  await m.exited;
  await sh(`fusermount -uz ${mnt} 2>/dev/null; true`);
}

describe("restarts", () => {
  it("a kill -9 right after cp -r loses nothing; local-only files survive a clean stop; the URL stays", async () => {
    const dirs = makeMountDirs();
    later(() => removeMountDirs(dirs));
    let m = await startMount(dirs, { defaultCacheDir: true });
    later(() => m.stop());
    const url = m.url;
    const src = `${dirs.base}/src`;
    const copied = await sh(
      `mkdir -p ${src}/notes && for i in $(seq 1 100); do echo "note $i" > ${src}/notes/n$i.md; done && ` +
        `printf 'PNG' > ${src}/notes/image.png && cp -r ${src}/notes ${m.mnt}/ && ls ${m.mnt}/notes | wc -l`,
      { timeoutMs: 30_000 },
    );
    expect(copied.stdout.trim()).toBe("101");
    m.child.kill("SIGKILL"); // no chance to flush: the journal on disk is all there is
    await m.exited;
    await sh(`fusermount -uz ${dirs.mnt} 2>/dev/null; true`);

    m = await startMount(dirs, { defaultCacheDir: true });
    expect(m.url).toBe(url);
    const sync = await runTxtfs(["sync", m.mnt], txtfsEnv(dirs));
    expect(sync.code, sync.stdout + sync.stderr).toBe(0);
    const index = await flatIndex(m.api);
    expect(index.files.filter((f) => /^n\d+\.md$/.test(f.name))).toHaveLength(100);
    expect((await sh(`cat ${m.mnt}/notes/n57.md ${m.mnt}/notes/image.png`)).stdout).toBe("note 57\nPNG");

    // A clean stop and start: local-only files are still there.
    await m.stop();
    m = await startMount(dirs, { defaultCacheDir: true });
    expect(m.url).toBe(url);
    expect((await sh(`cat ${m.mnt}/notes/image.png`)).stdout).toBe("PNG");
  }, 60_000); // three mount starts

  it("a note written with bytes that are not UTF-8 keeps exactly those bytes through a kill -9 right after", async () => {
    // It becomes a local-only file (docs/mount.md, "bytes are never altered"); its record once
    // waited 50 ms to be written, while the note's earlier save had already left the journal.
    const dirs = makeMountDirs();
    later(() => removeMountDirs(dirs));
    let m = await startMount(dirs, { defaultCacheDir: true });
    later(() => m.stop());
    const made = await sh("for i in 1 2 3 4 5 6; do echo delivered > d$i.md; done", { cwd: m.mnt });
    expect(made.code).toBe(0);
    expect((await runTxtfs(["sync", m.mnt], txtfsEnv(dirs))).code).toBe(0);
    // New notes and delivered ones; each a text save (pending) and then a write splitting a character.
    const r = await sh(
      `for f in n1.md n2.md n3.md n4.md n5.md n6.md d1.md d2.md d3.md d4.md d5.md d6.md; do
         printf 'a\\xc3\\xb1ejoapple' > $f && printf 'apple' | dd of=$f bs=4096 seek=2 oflag=seek_bytes conv=notrunc status=none
       done`,
      { cwd: m.mnt },
    );
    expect(r.code, r.stderr).toBe(0);
    await killDaemon(m, dirs.mnt);
    m = await startMount(dirs, { defaultCacheDir: true });
    const bytes = await sh("for f in n?.md d?.md; do od -An -tx1 $f | tr -d ' \\n'; echo; done", {
      cwd: m.mnt,
    });
    expect(bytes.stdout.trim().split("\n")).toEqual(Array(12).fill("61c36170706c6570706c65"));
    // Each once: the file kept stands for its note, which is not listed beside it (soak seed 5208:
    // after the restart the note showed too, as `d1 (xxxxxx).md`).
    const listed = await sh("ls", { cwd: m.mnt });
    expect(listed.stdout.trim().split("\n")).toEqual([
      ...["d1", "d2", "d3", "d4", "d5", "d6"].map((n) => `${n}.md`),
      ...["n1", "n2", "n3", "n4", "n5", "n6"].map((n) => `${n}.md`),
    ]);
    // The service keeps the notes' last text. A new note is there only if its text save went up
    // before the write that split the character (write-behind may deliver it in between on a busy
    // machine), and then with exactly that text.
    const sync = await runTxtfs(["sync", m.mnt], txtfsEnv(dirs));
    expect(sync.code, sync.stdout + sync.stderr).toBe(0);
    const names = (await flatIndex(m.api)).files.map((f) => f.name).sort();
    expect(names.filter((n) => n.startsWith("d"))).toEqual([
      "d1.md",
      "d2.md",
      "d3.md",
      "d4.md",
      "d5.md",
      "d6.md",
    ]);
    // A delivered note keeps its delivered text, or the text save made before the split if
    // write-behind sent it in between (a busy machine): a save its program saw succeed, either way.
    for (const d of ["d1.md", "d4.md", "d6.md"])
      expect(["delivered\n", "a\u00f1ejoapple"]).toContain(await contentAt(m.api, d));
    for (const n of names.filter((n) => !n.startsWith("d"))) {
      expect(n).toMatch(/^n[1-6]\.md$/);
      expect(await contentAt(m.api, n)).toBe("a\u00f1ejoapple");
    }
  }, 60_000); // two mount starts, a kill -9 and two syncs

  it("saves left in the cache dir of an earlier URL of the service (same key, same mountpoint) are delivered from the new one", async () => {
    const { dirs, data, first } = await withService();
    let m = await mountOn(dirs, first.url, first.key);
    expect((await sh(`mkdir kept && echo before > kept/a.md`, { cwd: m.mnt })).code).toBe(0);
    expect((await runTxtfs(["sync", m.mnt], txtfsEnv(dirs))).code).toBe(0);
    await first.stop(); // the service goes away; saves wait in the journal
    const offline = await sh("echo offline >> kept/a.md && echo new > kept/b.md", { cwd: m.mnt });
    expect(offline.code, offline.stderr).toBe(0);
    await killDaemon(m, dirs.mnt);

    // The service comes back on another port: another URL, another cache dir.
    const second = await spawnServeWithKey(data);
    later(() => second.stop());
    expect(second.url).not.toBe(first.url);
    m = await mountOn(dirs, second.url, first.key);
    expect(m.stderr()).toMatch(/picked up the saves still waiting in an earlier cache dir/);
    const sync = await runTxtfs(["sync", m.mnt], txtfsEnv(dirs));
    expect(sync.code, sync.stdout + sync.stderr).toBe(0);
    expect(await contentAt(m.api, "kept/a.md")).toBe("before\noffline\n");
    expect(await contentAt(m.api, "kept/b.md")).toBe("new\n");
  });

  /**
   * `count` notes reading "first" on a service of their own, then one round per delay: a new daemon
   * (no body cached: `>>` goes without it) runs `script(notes, round)` and is killed -9 `delay` ms
   * after it returned (before delivery, while the bulk request is on its way, after it). Returns a
   * last mount, its saves delivered.
   */
  async function killedRounds(
    dir: string,
    count: number,
    delays: number[],
    script: (notes: string, round: number) => string,
  ) {
    const { dirs, first } = await withService();
    let m = await mountOn(dirs, first.url, first.key);
    const notes = Array.from({ length: count }, (_, i) => `${dir}/n${i}.md`);
    const made = await sh(`mkdir ${dir} && for f in ${notes.join(" ")}; do echo first > $f; done`, {
      cwd: m.mnt,
    });
    expect(made.code).toBe(0);
    expect((await runTxtfs(["sync", m.mnt], txtfsEnv(dirs))).code).toBe(0);
    for (const [round, delay] of delays.entries()) {
      await killDaemon(m, dirs.mnt);
      m = await mountOn(dirs, first.url, first.key);
      const r = await sh(`${script(notes.join(" "), round)}; sleep ${delay / 1000}`, { cwd: m.mnt });
      expect(r.code, r.stderr).toBe(0);
    }
    await killDaemon(m, dirs.mnt);
    m = await mountOn(dirs, first.url, first.key);
    const sync = await runTxtfs(["sync", m.mnt], txtfsEnv(dirs));
    expect(sync.code, sync.stdout + sync.stderr).toBe(0);
    return { m, notes };
  }

  it("appends sent without the body (file.append) land exactly once across kill -9 at any moment of their delivery", async () => {
    const delays = [0, 5, 15, 30, 60, 120];
    const { m, notes } = await killedRounds(
      "log",
      8,
      delays,
      (notes, round) => `for f in ${notes}; do echo "round ${round}" >> $f; done`,
    );
    const want = `first\n${delays.map((_, round) => `round ${round}\n`).join("")}`;
    for (const note of notes) expect(await contentAt(m.api, note)).toBe(want);
    expect((await sh(`cat ${notes[3]}`, { cwd: m.mnt })).stdout).toBe(want);
  }, 90_000); // six kill -9 rounds, each a mount start: a minute on a loaded machine

  it("a rewrite right after appends sent without the body is no conflict with them, across kill -9 at any moment", async () => {
    const { m, notes } = await killedRounds(
      "rw",
      6,
      [0, 10, 30, 80],
      // A shell's `>` flushes its empty first step on its own, which a busy machine may deliver
      // alone: with a kill -9 before its answer was recorded, the next save once met our own
      // empty version as a remote change and became a conflict copy (CI; docs/mount.md).
      (notes, round) =>
        `for f in ${notes}; do echo "appended ${round}" >> $f; sleep 0.0${round}; printf 'rewritten ${round}\\n' > $f; done`,
    );
    for (const note of notes) expect(await contentAt(m.api, note)).toBe("rewritten 3\n");
    const names = (await flatIndex(m.api)).files.map((f) => f.name);
    expect(names.filter((n) => n.includes("conflict"))).toEqual([]);
  });

  it("an orphaned journal of another key is left where it is", async () => {
    const { dirs, first } = await withService();
    let m = await mountOn(dirs, first.url, first.key);
    await first.stop();
    expect((await sh("echo offline > waiting.md", { cwd: m.mnt })).code).toBe(0);
    await killDaemon(m, dirs.mnt);

    const other = await spawnServeWithKey(`${dirs.base}/other`); // another service, another key
    later(() => other.stop());
    m = await mountOn(dirs, other.url, other.key);
    expect(m.stderr()).not.toMatch(/picked up/);
    // This mount's saves are all on its service, and the other key's save still waits where it
    // was left: sync says both (and fails: that save is on no service yet).
    const sync = await runTxtfs(["sync", m.mnt], txtfsEnv(dirs));
    expect(sync.code).toBe(1);
    expect(sync.stdout).toMatch(
      new RegExp(
        `^${m.mnt}: every save is on the service\n${m.mnt}: 1 save for ${first.url} waits in ${dirs.cache}/[0-9a-f]{16}; mount ${m.mnt} again to send it\n$`,
      ),
    );
    expect(await contentAt(m.api, "waiting.md")).toBeUndefined();
  });

  it("renames and deletes of local files are on disk when they return: a kill -9 right after keeps them", async () => {
    const dirs = makeMountDirs();
    later(() => removeMountDirs(dirs));
    let m = await startMount(dirs, { defaultCacheDir: true });
    later(() => m.stop());
    expect(
      (await sh("printf 'v1\\n' > a.md && printf PNG > keep.png && printf PNG > gone.png", { cwd: m.mnt }))
        .code,
    ).toBe(0);
    expect((await runTxtfs(["sync", m.mnt], txtfsEnv(dirs))).code).toBe(0);
    // No pause between the last rename and the kill: within the manifest's 50 ms gathering.
    await sh(`sed -i.bak 's/v1/v2/' a.md && mv keep.png moved.png && rm gone.png && kill -9 ${m.pid}`, {
      cwd: m.mnt,
    });
    await m.exited;
    await sh(`fusermount -uz ${dirs.mnt} 2>/dev/null; true`);
    m = await startMount(dirs, { defaultCacheDir: true });
    const r = await sh("ls; cat a.md a.md.bak moved.png", { cwd: m.mnt });
    expect(r.stdout).toBe("a.md\na.md.bak\nmoved.png\nv2\nv1\nPNG");
  });
});
