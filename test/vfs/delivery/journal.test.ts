// The mount's journal: an append-only log of pending saves that a restarted daemon replays.
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readJournal } from "../../../src/lib/journalFiles.ts";
import { Journal, type JournalEntry } from "../../../src/vfs/delivery/journal.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "txtfs-journal-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const save = (name: string, content: string, fileId: string | null = null) => ({
  fileId,
  createKey: `ck-${name}`,
  name,
  folderId: null,
  content,
  baseEtag: fileId ? '"1-x"' : null,
  path: `/${name}`,
});

/** What a new daemon finds: name -> content, in delivery order. */
async function reopened(): Promise<[string, string | undefined][]> {
  const j = new Journal(dir);
  const pending = await j.load();
  j.close();
  return pending.map((e) => [e.name, e.content]);
}

describe("journal", () => {
  it("read from disk with no daemon (txtfs status, sync), it holds what the open journal holds, and is not changed", async () => {
    const j = new Journal(dir);
    await j.load();
    await j.put(save("a.md", "a1"), false);
    const b = await j.put(save("b.md", "b1"));
    await j.put(save("c.md", "c1\nwith lines\n"), false);
    await j.put(save("a.md", "a2"), false);
    expect(readJournal(dir).saves.map((e) => e.path)).toEqual(["/a.md", "/b.md", "/c.md"]);
    await j.done(b, { id: "f_b", etag: '"1-b"', contentHash: "h" });
    const log = readFileSync(join(dir, "journal", "log"));
    expect(readJournal(dir).saves.map((e) => e.path)).toEqual(j.pending().map((e) => e.path));
    expect(readJournal(dir).saves).toHaveLength(j.size);
    expect(readFileSync(join(dir, "journal", "log"))).toEqual(log); // read only, also while it is open
    j.close();
    // The daemon killed while it wrote a record: the torn one counts as a restarted daemon counts it.
    appendFileSync(join(dir, "journal", "log"), '{"put":{"fileId":null,"createKey":"ck-d.md"');
    expect(readJournal(dir).saves.map((e) => e.path)).toEqual((await reopened()).map(([name]) => `/${name}`));
    const again = new Journal(dir);
    for (const e of await again.load())
      await again.done(e, { id: `f_${e.name}`, etag: '"1-x"', contentHash: "h" });
    again.close();
    expect(readJournal(dir)).toEqual({ saves: [], inflight: false });
    expect(readJournal(join(dir, "nothing-here"))).toEqual({ saves: [], inflight: false });
  });

  it("a restarted daemon finds every pending save, in first-saved order, the newest body of each", async () => {
    const j = new Journal(dir);
    await j.load();
    await j.put(save("a.md", "a1"), false);
    const b = await j.put(save("b.md", "b1"), false);
    await j.put(save("c.md", "c1"), false);
    await j.put(save("a.md", "a2"), false); // replaces a's body, keeps its place
    await j.done(b, { id: "f_b", etag: '"1-b"', contentHash: "h" });
    // no close(): the daemon is killed
    expect(await reopened()).toEqual([
      ["a.md", "a2"],
      ["c.md", "c1"],
    ]);
  });

  it("a save made while its older version was being delivered stays, rebased on what was delivered", async () => {
    const j = new Journal(dir);
    await j.load();
    const first = await j.put(save("n.md", "one"), false);
    await j.put(save("n.md", "two"), false); // saved again while `first` was on its way
    await j.done(first, { id: "f_n", etag: '"1-n"', contentHash: "h1" });
    const rebased = j.get("f_n") as JournalEntry;
    expect(rebased).toMatchObject({ fileId: "f_n", content: "two", baseEtag: '"1-n"' });
    expect(j.get(Journal.keyOf(first))).toBeUndefined();
    expect(await reopened()).toEqual([["n.md", "two"]]);
  });

  it("a save made while its older version was not applied (a conflict copy, a refusal) stays, on its own base", async () => {
    const j = new Journal(dir);
    await j.load();
    const first = await j.put(save("n.md", "one", "f_n"), false);
    await j.put(save("n.md", "one two", "f_n"), false); // built on "one", saved while it was on its way
    await j.done(first); // "one" became a conflict copy: nothing of ours reached the note
    expect(j.get("f_n")).toMatchObject({ content: "one two", baseEtag: '"1-x"' });
    await j.done({ ...first }); // an older copy of the entry (a bulk's answer): still not the newer save
    expect(j.get("f_n")).toMatchObject({ content: "one two" });
    expect(await reopened()).toEqual([["n.md", "one two"]]);
  });

  it("a line torn by a crash is skipped; the saves before it stand", async () => {
    const j = new Journal(dir);
    await j.load();
    await j.put(save("ok.md", "whole"), false);
    appendFileSync(join(dir, "journal", "log"), '{"put":{"seq":9,"fileId":null,"createKey":"ck-torn","na');
    expect(await reopened()).toEqual([["ok.md", "whole"]]);
  });

  it("bodies are kept byte for byte (newlines, multibyte, a lone quote); a log in the older format (bodies in the JSON) still loads", async () => {
    const bodies = ["line 1\nline 2\n", 'ünïcödé ✓ 😀\n"quoted"\\', "", "\n\n\n", '{"del":"new-ck-a.md"}\n'];
    const j = new Journal(dir);
    await j.load();
    for (const [i, body] of bodies.entries()) await j.put(save(`n${i}.md`, body), false);
    expect(await reopened()).toEqual(bodies.map((b, i) => [`n${i}.md`, b]));

    // The older format: one JSON line per record, the body inside it.
    rmSync(join(dir, "journal"), { recursive: true });
    mkdirSync(join(dir, "journal"));
    const entry = (name: string, content: string, seq: number) => ({
      put: { ...save(name, content), seq, savedAt: new Date().toISOString(), rev: seq, line: seq },
    });
    writeFileSync(
      join(dir, "journal", "log"),
      `${[
        entry("a.md", "one\ntwo\n", 1),
        entry("b.md", "b", 2),
        { del: "new-ck-b.md" },
        entry("c.md", "ç", 3),
      ]
        .map((r) => JSON.stringify(r))
        .join("\n")}\n`,
    );
    expect(await reopened()).toEqual([
      ["a.md", "one\ntwo\n"],
      ["c.md", "ç"],
    ]);
  });

  it("a body cut short by a crash ends the log; a body a machine crash left unwritten (zeros) is skipped, the saves around it stand", async () => {
    const j = new Journal(dir);
    await j.load();
    await j.put(save("a.md", "first a\n"), false);
    await j.put(save("b.md", "first b\n"), false);
    const log = join(dir, "journal", "log");
    await j.put(save("a.md", "second a, longer\n"), false);
    await j.put(save("c.md", "c\n"), false);
    j.close();
    const whole = readFileSync(log);
    // The second save of a.md with its body zeroed (same length: the framing holds).
    const zeroed = Buffer.from(whole);
    const at = zeroed.indexOf("second a");
    zeroed.fill(0, at, at + "second a, longer".length);
    writeFileSync(log, zeroed);
    expect(await reopened()).toEqual([
      ["a.md", "first a\n"],
      ["b.md", "first b\n"],
      ["c.md", "c\n"],
    ]);
    // Cut inside the second save of a.md's body: that save never completed, the ones before stand.
    writeFileSync(log, whole.subarray(0, at + 5));
    expect(await reopened()).toEqual([
      ["a.md", "first a\n"],
      ["b.md", "first b\n"],
    ]);
  });

  it("a save that does not fit on a full disk fails, and every save before it (and after space came back) stands", async (ctx) => {
    const small = join(dir, "small");
    mkdirSync(small);
    try {
      // A full disk of our own: a 256 KiB tmpfs (root, as CI and the FUSE tests run).
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", small], { stdio: "pipe" });
    } catch (err) {
      ctx.skip(`no tmpfs could be mounted here: ${(err as Error).message.split("\n")[0]}`);
    }
    try {
      const j = new Journal(small);
      await j.load();
      const body = (i: number) => `${i} ${"x".repeat(30_000)}\n`;
      const saved: [string, string][] = [];
      let refused = 0;
      for (let i = 0; i < 12; i++) {
        try {
          await j.put(save(`n${i}.md`, body(i)), false);
          saved.push([`n${i}.md`, body(i)]);
        } catch (err) {
          expect((err as NodeJS.ErrnoException).code).toBe("ENOSPC");
          refused++;
        }
      }
      expect(refused).toBeGreaterThan(0);
      expect(saved.length).toBeGreaterThan(2);
      // Space comes back (a delivery emptied entries): the next saves go in after the refused one.
      for (const [name] of saved.slice(0, 3)) await j.done(j.get(`new-ck-${name}`) as JournalEntry);
      await j.put(save("later.md", "after the disk was full\n"), false);
      j.close();
      const again = new Journal(small);
      const pending = (await again.load()).map((e) => [e.name, e.content]);
      again.close();
      expect(pending).toEqual([...saved.slice(3), ["later.md", "after the disk was full\n"]]);
    } finally {
      execFileSync("umount", [small]);
    }
  });

  it("the log is emptied when nothing is pending and stays small when one note is saved over and over", async () => {
    const j = new Journal(dir);
    await j.load();
    const log = join(dir, "journal", "log");
    const e = await j.put(save("x.md", "x"), false);
    await j.done(e, { id: "f_x", etag: '"1-x"', contentHash: "h" });
    expect(statSync(log).size).toBe(0);

    const big = "y".repeat(100_000);
    for (let i = 0; i < 60; i++) await j.put(save("big.md", `${i} ${big}`, "f_big"), false);
    // 60 saves of 100 KB appended 6 MB; the log was rewritten with the live entry along the way
    expect(statSync(log).size).toBeLessThan(1.3 * 1024 * 1024);
    j.close();
    expect(await reopened()).toEqual([["big.md", `59 ${big}`]]);
  });

  it("entries of a journal written before the log (one file each) are taken over", async () => {
    const jdir = join(dir, "journal");
    mkdirSync(jdir, { recursive: true });
    const old = { ...save("old.md", "from before"), seq: 3, savedAt: new Date().toISOString() };
    writeFileSync(join(jdir, `0000000003-new-${old.createKey}.json`), JSON.stringify(old));
    expect(await reopened()).toEqual([["old.md", "from before"]]);
    expect(existsSync(join(jdir, `0000000003-new-${old.createKey}.json`))).toBe(false);
    expect(await reopened()).toEqual([["old.md", "from before"]]); // now from the log
    const j = new Journal(dir);
    await j.load();
    const next = await j.put({ ...save("n.md", "new"), createKey: randomUUID() }, false);
    expect(next.seq).toBeGreaterThan(3);
    j.close();
  });
});

describe("journal: appends (file.append)", () => {
  const append = (content: string) => ({
    ...save("log.md", content, "f_log"),
    append: true as const,
    baseEtag: null,
  });

  it("appends add up; once some went, what came after them is what is left, across a restart", async () => {
    const j = new Journal(dir);
    await j.load();
    const first = await j.put(append("one\n"), false);
    await j.put(append("two\n"), false); // while `first` was on its way
    expect(j.get("f_log")?.content).toBe("one\ntwo\n");
    await j.done(first, { id: "f_log", etag: '"2-y"', contentHash: "h" }, "one\n");
    expect(j.get("f_log")).toMatchObject({ content: "two\n", append: true, baseEtag: null });
    j.close();
    expect(await reopened()).toEqual([["log.md", "two\n"]]);
  });

  it("a request sent again after a restart is about the line it was made from, never a newer one of the note", async () => {
    // The answer to a bulk was applied (the entry delivered, the log emptied), then kill -9 before
    // the request on disk was forgotten; the next daemon journals a new append of the same note
    // and sends that request again: its answer must not finish the new append (it was lost).
    const j = new Journal(dir);
    await j.load();
    const first = await j.put(append("same line\n"), false);
    j.setInflightBulk({
      idempotencyKey: "bulk-1",
      items: [
        {
          key: "f_log",
          rev: first.rev,
          op: "file.append",
          target: "f_log",
          body: { content: "same line\n" },
        },
      ],
    });
    await j.done(first, { id: "f_log", etag: '"2-y"', contentHash: "h" }, "same line\n");
    expect(j.size).toBe(0);
    j.close(); // (kill -9: the log as it was)
    const again = new Journal(dir);
    await again.load();
    expect(again.inflightBulk()).toBeDefined();
    const next = await again.put(append("same line\n"), false); // the same text, appended again
    expect(next.rev).toBeGreaterThan(first.rev ?? 0);
    expect(again.ofItem("f_log", first.rev)).toBeUndefined();
    expect(again.ofItem("f_log", next.rev)).toBe(next);
    // Appended to again while a request of it is on its way: the same line, so its answer leaves the rest.
    const more = await again.put(append("more\n"), false);
    expect(again.ofItem("f_log", next.rev)).toBe(more);
    await again.done({ ...more }, { id: "f_log", etag: '"3-z"', contentHash: "h" }, "same line\n");
    expect(again.get("f_log")?.content).toBe("more\n");
    // ... and is a line of its own from then on: that answer, sent once more, is about nothing here.
    expect(again.ofItem("f_log", next.rev)).toBeUndefined();
    again.close();
  });

  it("all that was appended went: nothing is left", async () => {
    const j = new Journal(dir);
    await j.load();
    const first = await j.put(append("one\n"), false);
    await j.done({ ...first }, { id: "f_log", etag: '"2-y"', contentHash: "h" }, "one\n");
    expect(j.get("f_log")).toBeUndefined();
    j.close();
  });

  it("a rename keeps the appends; a whole body written after them supersedes them, on the base it was given", async () => {
    const j = new Journal(dir);
    await j.load();
    const first = await j.put(append("one\n"), false);
    await j.put({ ...save("renamed.md", "", "f_log"), content: undefined, move: true }, false);
    expect(j.get("f_log")).toMatchObject({ content: "one\n", append: true, move: true });
    await j.put(save("log.md", "whole body", "f_log"), false); // `> log.md` after `>> log.md`
    expect(j.get("f_log")).toMatchObject({ content: "whole body", baseEtag: '"1-x"', move: true });
    expect(j.get("f_log")?.append).toBeUndefined();
    // The appends were on their way meanwhile: the body goes on the version they made.
    await j.done(first, { id: "f_log", etag: '"2-y"', contentHash: "h" }, "one\n");
    expect(j.get("f_log")).toMatchObject({ content: "whole body", baseEtag: '"2-y"' });
    j.close();
  });

  describe("a note deleted remotely while a save of it went, and created again (soak seed 1008)", () => {
    // The save `l4` of note X is on its way; the program saves again (`> c.md` truncates first:
    // ""), then the PUT answers 404 and the note is created again under a new create key, while
    // the program writes `l5`, keyed by that create. Both later saves then come under the new
    // note's id: `l5`, the newest, must be what is left.
    const x = (content: string) => save("c.md", content, "f_x");
    const created = { id: "f_y", etag: '"1-y"', contentHash: "hy" };

    it("the newest save stays on top, whichever of the two is carried over first", async () => {
      const j = new Journal(dir);
      await j.load();
      const sent = await j.put(x("l4"), false);
      await j.put(x(""), false); // saved again while `l4` went (keyed by the old id)
      await j.put({ ...save("c.md", "l5"), createKey: "ck-again" }, false); // keyed by the create
      await j.rekeyCreated("ck-again", created);
      await j.done(sent, created);
      expect(j.pending()).toHaveLength(1);
      expect(j.get("f_y")).toMatchObject({ fileId: "f_y", content: "l5", baseEtag: '"1-y"' });
      expect(await reopened()).toEqual([["c.md", "l5"]]);
    });

    it("a save made once the new note had its id stays on top of one carried over from the create", async () => {
      const j = new Journal(dir);
      await j.load();
      await j.put({ ...save("c.md", "l5"), createKey: "ck-again" }, false);
      await j.put(save("c.md", "l6", "f_y"), false); // after the create answered, before the rekey
      await j.rekeyCreated("ck-again", created);
      expect(j.get("f_y")).toMatchObject({ content: "l6" });
      expect(await reopened()).toEqual([["c.md", "l6"]]);
    });

    it("appends made under the new id go on top of the body carried over", async () => {
      const j = new Journal(dir);
      await j.load();
      const sent = await j.put(x("l4"), false);
      await j.put(x("body\n"), false);
      await j.put({ ...save("c.md", "tail\n", "f_y"), append: true, baseEtag: null }, false);
      await j.done(sent, created);
      expect(j.get("f_y")).toMatchObject({ content: "body\ntail\n", baseEtag: '"1-y"' });
      expect(j.get("f_y")?.append).toBeUndefined();
    });
  });
});
