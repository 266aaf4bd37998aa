// The journal against faults of its own disk and file: damage found on loading (torn, garbage, a
// wrong length, a failed checksum) is recovered around, reported and kept aside; the bulk request
// on its way is kept by reference and read back exactly (also after a kill -9 in the middle of
// its answer); and on a full disk delivering needs no new space. Crafted files, a real tmpfs.
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readJournalDamage } from "../../../src/lib/journalDamage.ts";
import { encodeRecord, scanLog } from "../../../src/lib/journalRecords.ts";
import { Journal } from "../../../src/vfs/delivery/journal.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "txtfs-journal-faults-"));
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

const put = (name: string, content: string, seq: number) =>
  Buffer.concat(
    encodeRecord({
      put: { ...save(name, content), seq, savedAt: "2026-12-01T00:00:00.000Z", rev: seq, line: seq },
    }),
  );

async function open(): Promise<Journal> {
  const j = new Journal(dir);
  await j.load();
  return j;
}

const names = (j: Journal) => j.pending().map((e) => [e.name, e.content]);
const logFile = () => join(dir, "journal", "log");

describe("a damaged journal", () => {
  it("scanLog: after garbage, a wrong length (longer or shorter) or a failed checksum it reads on; a torn end ends it; each stretch is named", () => {
    const a = put("a.md", "alpha\n", 1);
    const b = put("b.md", "bravo\nwith lines\n", 2);
    const c = put("c.md", "charlie\n", 3);
    const d = put("d.md", "delta\n", 4);
    const longer = Buffer.from(b.toString("latin1").replace('"body":17', '"body":40'), "latin1");
    const shorter = Buffer.from(c.toString("latin1").replace('"body":8', '"body":3'), "latin1");
    const badCrc = Buffer.from(d.toString("latin1").replace("delta", "DELTA"), "latin1");
    const garbage = Buffer.from("\u0000\u0000junk that is no record\n", "latin1");
    const e = put("e.md", "echo\n", 5);
    const torn = e.subarray(0, e.length - 3);
    const log = Buffer.concat([a, garbage, longer, shorter, badCrc, put("f.md", "fox\n", 6), torn]);
    const scanned = scanLog<{ name: string; content?: string }>(log);
    expect(scanned.records.map((r) => ("put" in r ? [r.put.name, r.put.content] : r))).toEqual([
      ["a.md", "alpha\n"],
      ["f.md", "fox\n"],
    ]);
    expect(scanned.damage.map((x) => [x.why, x.path])).toEqual([
      ["unreadable", undefined],
      ["length", "/b.md"],
      ["length", "/c.md"],
      ["checksum", "/d.md"],
      ["torn", "/e.md"],
    ]);
    // Every byte is accounted for: records, damage, and nothing else.
    const damaged = scanned.damage.reduce((n, x) => n + x.bytes, 0);
    expect(damaged + a.length + put("f.md", "fox\n", 6).length).toBe(log.length);
    expect(scanned.end).toBe(log.length - torn.length);
  });

  it("load recovers what can be read, says what was dropped, keeps the damaged log aside and starts a clean one", async () => {
    mkdirSync(join(dir, "journal"));
    const whole = Buffer.concat([
      put("a.md", "alpha\n", 1),
      put("b.md", "bravo\n", 2),
      put("c.md", "charlie\n", 3),
    ]);
    const damaged = Buffer.from(
      whole.toString("latin1").replace('"body":6,"crc"', '"body":9,"crc"'),
      "latin1",
    );
    writeFileSync(logFile(), Buffer.concat([damaged, Buffer.from("garbage\n")]));
    const j = await open();
    expect(names(j)).toEqual([
      ["b.md", "bravo\n"],
      ["c.md", "charlie\n"],
    ]);
    const report = j.health().damaged!;
    expect(report.recovered).toBe(2);
    expect(report.dropped.map((x) => [x.why, x.path])).toEqual([
      ["length", "/a.md"],
      ["unreadable", undefined],
    ]);
    expect(readFileSync(report.keptAs)).toEqual(Buffer.concat([damaged, Buffer.from("garbage\n")]));
    expect(readJournalDamage(dir)).toEqual([report]);
    // The log was started again with what was recovered: the next load finds it whole.
    j.close();
    const again = await open();
    expect(names(again)).toEqual(names(j));
    expect(again.health().damaged).toBeUndefined();
    again.close();
    // Once the user removes the copy, status names it no more.
    rmSync(report.keptAs);
    expect(readJournalDamage(dir)).toEqual([]);
  });

  it("a torn last record is cut off before the next one is appended (else that one would be lost too)", async () => {
    mkdirSync(join(dir, "journal"));
    const torn = put("b.md", "bravo\n", 2);
    writeFileSync(logFile(), Buffer.concat([put("a.md", "alpha\n", 1), torn.subarray(0, torn.length - 3)]));
    const j = await open();
    expect(j.health().damaged?.dropped.map((x) => [x.why, x.path])).toEqual([["torn", "/b.md"]]);
    await j.put(save("c.md", "charlie\n"), false);
    j.close();
    const again = await open();
    expect(names(again)).toEqual([
      ["a.md", "alpha\n"],
      ["c.md", "charlie\n"],
    ]);
    again.close();
  });

  it("an unreadable record of the bulk request on its way is said, not taken for none", async () => {
    const j = await open();
    await j.put(save("a.md", "alpha\n"), false);
    j.close();
    writeFileSync(join(dir, "journal", "bulk.inflight"), '{"idempotencyKey":"bulk-1","items":[{"key"');
    const again = await open();
    expect(again.health().damaged?.inflightLost).toBe(true);
    expect(again.inflightBulk()).toBeUndefined();
    expect(names(again)).toEqual([["a.md", "alpha\n"]]);
    again.close();
  });
});

describe("the bulk request on its way", () => {
  it("is kept by reference (a few bytes an item, not its bodies) and read back exactly, key order included", async () => {
    const j = await open();
    const big = "x".repeat(200_000);
    const a = await j.put(save("a.md", `a ${big}`), false);
    const b = await j.put(save("b.md", `b ${big}`, "f_b"), false);
    const bulk = {
      idempotencyKey: "bulk-1",
      items: [
        {
          key: Journal.keyOf(a),
          rev: a.rev,
          op: "file.create",
          body: { name: "a.md", content: a.content, folderId: null, tags: ["t"] },
        },
        {
          key: Journal.keyOf(b),
          rev: b.rev,
          op: "file.update",
          target: "f_b",
          baseEtag: '"1-x"',
          move: false,
          body: { content: b.content },
        },
      ],
    };
    j.setInflightBulk(bulk);
    expect(statSync(join(dir, "journal", "bulk.inflight")).size).toBeLessThan(1000);
    // Saved again while it was on its way: the request still holds the body it was made with.
    await j.put(save("a.md", "a, newer"), false);
    // A kill -9 here: the next daemon finds the same request.
    const next = await open();
    expect(JSON.stringify(next.inflightBulk())).toBe(JSON.stringify(bulk));
    expect(names(next)).toEqual([
      ["a.md", "a, newer"],
      ["b.md", `b ${big}`],
    ]);
    // And again after that one was killed (its load did not compact away what the request needs).
    const third = await open();
    expect(JSON.stringify(third.inflightBulk())).toBe(JSON.stringify(bulk));
    third.close();
    next.close();
    j.close();
  });

  it("kill -9 while its answer is applied (some entries done): the next daemon has the same request and the rest still pending", async () => {
    const j = await open();
    const entries = [];
    for (const n of ["a", "b", "c"]) entries.push(await j.put(save(`${n}.md`, `${n} body\n`), false));
    const bulk = {
      idempotencyKey: "bulk-2",
      items: entries.map((e) => ({
        key: Journal.keyOf(e),
        rev: e.rev,
        op: "file.create",
        body: { name: e.name, content: e.content },
      })),
    };
    j.setInflightBulk(bulk);
    await j.done(entries[0]!, { id: "f_a", etag: '"1-a"', contentHash: "h" });
    await j.done(entries[1]!, { id: "f_b", etag: '"1-b"', contentHash: "h" });
    const next = await open();
    expect(JSON.stringify(next.inflightBulk())).toBe(JSON.stringify(bulk));
    expect(names(next)).toEqual([["c.md", "c body\n"]]);
    // All done, then killed before the request was forgotten: still the same request, nothing pending.
    await j.done(entries[2]!, { id: "f_c", etag: '"1-c"', contentHash: "h" });
    const last = await open();
    expect(JSON.stringify(last.inflightBulk())).toBe(JSON.stringify(bulk));
    expect(last.size).toBe(0);
    j.setInflightBulk(undefined);
    expect(statSync(logFile()).size).toBe(0); // forgotten, and nothing pending: the log started over
    last.close();
    next.close();
    j.close();
  });
});

describe("a full disk", () => {
  it("refuses new saves, but the delivery of those it took needs no new space: the request on its way, each entry done, then the log emptied", async (ctx) => {
    const small = join(dir, "small");
    mkdirSync(small);
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=512k", "tmpfs", small], { stdio: "pipe" });
    } catch (err) {
      ctx.skip(`no tmpfs could be mounted here: ${(err as Error).message.split("\n")[0]}`);
    }
    try {
      const j = new Journal(small);
      await j.load();
      const saved = [];
      for (let i = 0; i < 200; i++) {
        try {
          saved.push(await j.put(save(`n${i}.md`, `${i} ${"y".repeat(9_000)}\n`), false));
        } catch (err) {
          expect((err as NodeJS.ErrnoException).code).toBe("ENOSPC");
          break;
        }
      }
      expect(saved.length).toBeGreaterThan(10);
      expect(saved.length).toBeLessThan(200);
      expect(j.health().fault).toMatchObject({
        code: "ENOSPC",
        message: "the cache dir's disk is full",
        path: small,
      });
      // What delivery will need stays held: the reserve (journal/reserve) for every entry pending.
      expect(statSync(join(small, "journal", "reserve")).size).toBeGreaterThanOrEqual(
        64 * 1024 + 512 * j.size,
      );
      const free = Number(
        execFileSync("df", ["--output=avail", "-B1", small], { encoding: "utf8" }).split("\n")[1],
      );
      expect(free).toBeLessThan(16 * 1024);

      const bulk = {
        idempotencyKey: "bulk-full",
        items: saved.map((e) => ({
          key: Journal.keyOf(e),
          rev: e.rev,
          op: "file.create",
          body: { name: e.name, content: e.content },
        })),
      };
      j.setInflightBulk(bulk); // the request on its way: recorded
      for (const [i, e] of saved.entries())
        await j.done(e, { id: `f_${i}`, etag: `"1-${i}"`, contentHash: "h" });
      j.setInflightBulk(undefined);
      expect(j.size).toBe(0);
      expect(statSync(join(small, "journal", "log")).size).toBe(0);
      expect(j.health().fault).toBeUndefined(); // room again
      await j.put(save("later.md", "after\n"), false);
      j.close();
      const again = new Journal(small);
      expect((await again.load()).map((e) => e.name)).toEqual(["later.md"]);
      again.close();
    } finally {
      execFileSync("umount", ["-l", small]);
    }
  });
});

it("a cache dir that cannot be written is refused at load with a message that says so", async (ctx) => {
  const ro = join(dir, "ro");
  mkdirSync(ro);
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k,ro", "tmpfs", ro], { stdio: "pipe" });
  } catch (err) {
    ctx.skip(`no tmpfs could be mounted here: ${(err as Error).message.split("\n")[0]}`);
  }
  try {
    await expect(new Journal(ro).load()).rejects.toThrow(
      `the cache dir ${ro} is read-only: saves could not be kept there`,
    );
    expect(existsSync(join(ro, "journal"))).toBe(false);
    expect(readdirSync(ro)).toEqual([]);
  } finally {
    execFileSync("umount", ["-l", ro]);
  }
});

it("a folder made here now exists: what waited to go into it is rebound without its body written again", async () => {
  const j = await open();
  const big = "z".repeat(100_000);
  await j.put({ ...save("in.md", big), parentKey: "new-ck-dir" }, false);
  const before = statSync(logFile()).size;
  await j.rebind("new-ck-dir", "f_dir");
  expect(statSync(logFile()).size - before).toBeLessThan(200);
  expect(j.pending().map((e) => [e.name, e.folderId, e.parentKey, e.content === big])).toEqual([
    ["in.md", "f_dir", undefined, true],
  ]);
  j.close();
  const again = await open();
  expect(again.pending().map((e) => [e.name, e.folderId, e.parentKey, e.content === big])).toEqual([
    ["in.md", "f_dir", undefined, true],
  ]);
  again.close();
});
