// A note's times on disk (src/vfs/meta/noteTimes.ts): a snapshot and a log of changes. Whatever was
// flushed comes back after a restart, a save writes only what changed, and a log torn by a crash
// loses nothing that was whole.
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NoteTimes } from "../../../src/vfs/meta/noteTimes.ts";

let dir: string;
const errors: unknown[] = [];
const open = () => {
  const t = new NoteTimes(dir, (err) => errors.push(err));
  t.load();
  return t;
};
const time = (n: number) => ({ hash: `h${n}`, mtimeMs: 1_700_000_000_000 + n, atimeMs: n });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "txtfs-times-"));
  errors.length = 0;
});
afterEach(() => {
  expect(errors).toEqual([]);
  rmSync(dir, { recursive: true, force: true });
});

describe("note times", () => {
  it("come back after a restart: sets, overwrites and deletes, in order", () => {
    const a = open();
    a.set("f_1", time(1));
    a.set("f_2", time(2));
    a.flush();
    a.set("f_1", time(11));
    a.delete("f_2");
    a.set("f_3", time(3));
    a.flush();
    const b = open();
    expect(b.get("f_1", "h11")).toEqual(time(11));
    expect(b.get("f_1", "h1")).toBeUndefined(); // another content: the service's time
    expect(b.get("f_2", "h2")).toBeUndefined();
    expect(b.get("f_3", "h3")).toEqual(time(3));
  });

  it("a save appends only the notes that changed; nothing changed writes nothing", () => {
    const a = open();
    for (let i = 0; i < 1000; i++) a.set(`f_${i}`, time(i));
    a.flush();
    const log = join(dir, "times.log");
    const after1000 = statSync(log).size;
    a.set("f_5", time(5005));
    a.flush();
    const grew = statSync(log).size - after1000;
    expect(grew).toBeGreaterThan(0);
    expect(grew).toBeLessThan(after1000 / 100); // one line, not the thousand notes again
    const before = readFileSync(log, "utf8");
    a.flush();
    expect(readFileSync(log, "utf8")).toBe(before);
    expect(open().get("f_5", "h5005")).toEqual(time(5005));
  });

  it("the log is folded into the snapshot at load once longer than it", () => {
    const a = open();
    for (let round = 0; round < 3; round++) {
      a.set("f_1", time(round));
      a.flush();
    }
    expect(readFileSync(join(dir, "times.log"), "utf8").split("\n").length).toBe(4);
    const b = open();
    expect(readFileSync(join(dir, "times.log"), "utf8")).toBe("");
    expect(JSON.parse(readFileSync(join(dir, "times.json"), "utf8"))).toEqual({ f_1: time(2) });
    expect(b.get("f_1", "h2")).toEqual(time(2));
    expect(open().get("f_1", "h2")).toEqual(time(2));
  });

  it("a running daemon folds a long log into the snapshot", () => {
    const a = open();
    a.set("f_1", time(1));
    for (let i = 0; i < 10_001; i++) {
      a.set("f_2", time(i));
      a.flush();
    }
    const lines = readFileSync(join(dir, "times.log"), "utf8").split("\n").length - 1;
    expect(lines).toBeLessThan(10_000);
    const b = open();
    expect(b.get("f_1", "h1")).toEqual(time(1));
    expect(b.get("f_2", "h10000")).toEqual(time(10_000));
  });

  it("a last line torn by a crash is dropped, and what is appended after it is whole", () => {
    const a = open();
    a.set("f_1", time(1));
    a.flush();
    appendFileSync(join(dir, "times.log"), '["f_2",{"hash":"h2","mt'); // the crash
    const b = open();
    expect(b.get("f_1", "h1")).toEqual(time(1));
    expect(b.get("f_2", "h2")).toBeUndefined();
    b.set("f_3", time(3));
    b.flush();
    const c = open();
    expect(c.get("f_1", "h1")).toEqual(time(1));
    expect(c.get("f_3", "h3")).toEqual(time(3));
  });

  it("a cache without times starts empty and writes nothing until a note gets some", () => {
    const a = open();
    a.flush();
    expect(existsSync(join(dir, "times.log"))).toBe(false);
    expect(a.get("f_1", "h1")).toBeUndefined();
  });
});
