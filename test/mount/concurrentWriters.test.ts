// Several programs writing one note at the same moment, with no pauses between them, each through
// its own descriptor: as on a local disk, every writer's bytes must be there once they all closed,
// on the mount and, once delivered, on the service. (The narrower windows in which a save marked
// another descriptor's write as saved are pinned down in test/vfs/open/saves.test.ts, "another handle".)
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contentAt, type MountFixture, mountFixture } from "../helpers/mount.ts";

let m: MountFixture;

beforeAll(async () => {
  m = mountFixture();
  await m.start();
  expect((await m.sh("mkdir c")).code).toBe(0);
});
afterAll(() => m?.close());

const api = () => m.current.api;
const WRITERS = 4;
const ROUNDS = 25;

describe("programs writing one note at once", () => {
  it("writers at their own offsets (dd conv=notrunc, a byte at a time): every byte is kept", async () => {
    const width = 12;
    const base = `${".".repeat(WRITERS * width)}\n`;
    const expected = (round: number) => {
      let line = base;
      for (let i = 0; i < WRITERS; i++) {
        const text = `w${i}-r${round}`;
        line = line.slice(0, i * width) + text + line.slice(i * width + text.length);
      }
      return line;
    };
    // Each round rewrites the note, then starts every writer at once and waits for all of them.
    const r = await m.sh(
      `for r in $(seq ${ROUNDS}); do
         printf '%s\\n' '${".".repeat(WRITERS * width)}' > c/offsets.md || exit 1
         for i in $(seq 0 ${WRITERS - 1}); do
           printf "w$i-r$r" | dd of=c/offsets.md bs=1 seek=$((i * ${width})) conv=notrunc status=none &
         done
         wait
         cat c/offsets.md
       done`,
      120_000,
    );
    expect(r.code).toBe(0);
    const seen = r.stdout.split("\n").filter(Boolean);
    expect(seen).toEqual(Array.from({ length: ROUNDS }, (_, k) => expected(k + 1).trimEnd()));
    await m.sync();
    expect(await contentAt(api(), "c/offsets.md")).toBe(expected(ROUNDS));
  });

  it("appenders (>>) at once: every line is kept, each writer's in its order", async () => {
    const lines = 20;
    const r = await m.sh(
      `: > c/log.md
       for i in $(seq 0 ${WRITERS - 1}); do
         ( for k in $(seq ${lines}); do echo "w$i line $k" >> c/log.md; done ) &
       done
       wait
       cat c/log.md`,
      120_000,
    );
    expect(r.code).toBe(0);
    const check = (text: string) => {
      const got = text.split("\n").filter(Boolean);
      expect(got).toHaveLength(WRITERS * lines);
      for (let i = 0; i < WRITERS; i++)
        expect(got.filter((l) => l.startsWith(`w${i} `))).toEqual(
          Array.from({ length: lines }, (_, k) => `w${i} line ${k + 1}`),
        );
    };
    check(r.stdout);
    await m.sync();
    check((await contentAt(api(), "c/log.md")) ?? "");
  });
});
