// Random I/O on one file (an fsx-style exerciser, test/helpers/fsx.py, run in a child process):
// pread, pwrite, ftruncate, mmap reads and writes, close/reopen every few operations, every read and
// size compared with an in-memory copy. On a note with text data the note must end on the service
// byte for byte; with arbitrary bytes a .md or .bin file must stay exact, here and as an attachment
// on the service (issue 13: content that is not UTF-8 is never altered into text). A local
// directory is the control. TXTFS_FSX_OPS / TXTFS_FSX_SEEDS make longer runs.
import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PYTHON } from "../helpers/model/ops.ts";
import { attachmentAt, findByPath, type MountFixture, mountFixture, sh } from "../helpers/mount.ts";

const FSX = fileURLToPath(new URL("../helpers/fsx.py", import.meta.url));
const OPS = Number(process.env.TXTFS_FSX_OPS ?? 1000);
const SEEDS = (process.env.TXTFS_FSX_SEEDS ?? "1").split(",").map(Number);
// Time allowed per operation: more for a daemon slowed down on purpose (scripts/sanitize).
const MS_PER_OP = Number(process.env.TXTFS_FSX_MS_PER_OP ?? 60);
const scratch = mkdtempSync("/var/tmp/txtfs-fsx-");
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs fsx on `file` (cwd: `cwd`); the expected final bytes are left in a local file. */
async function fsx(cwd: string, file: string, seed: number, args: string) {
  const expectFile = join(scratch, `${file.replace(/\W/g, "_")}-${seed}.expected`);
  const r = await sh(
    `FSX_EXPECT='${expectFile}' ${PYTHON} ${FSX} '${file}' --seed ${seed} --ops ${OPS} ${args}`,
    {
      cwd,
      timeoutMs: 20_000 + OPS * MS_PER_OP,
    },
  );
  return { ...r, expected: () => readFileSync(expectFile) };
}

describe("fsx on a local directory (control)", () => {
  for (const data of ["text", "bytes"]) {
    it(`${data} data with mmap passes`, async () => {
      const r = await fsx(scratch, `local-${data}.md`, 1, `--data ${data}`);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
    }, 60_000);
  }

  it("a byte changed behind the copy's back is caught", async () => {
    const r = await fsx(scratch, "local-inject.md", 1, `--data text --inject ${OPS - 1}`);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/byte \d+ is .*expected|final read/);
  }, 60_000);
});

describe("fsx on the mount", () => {
  let m: MountFixture;
  beforeAll(async () => {
    m = mountFixture();
    await m.start();
  });
  afterAll(() => m?.close());

  /** sha256 of a file in the mount, read by a child process. */
  const sha = async (path: string) =>
    (await sh(`sha256sum '${path}'`, { cwd: m.dirs.mnt })).stdout.split(" ")[0];
  const shaOf = async (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
  const attachmentBytes = (name: string) => attachmentAt(m.current, name);

  for (const seed of SEEDS) {
    it(
      `seed ${seed}: an attachment (a file that is not a note), with mmap, ends on the service byte for byte, also after a remount`,
      async () => {
        const name = `att-${seed}.bin`;
        const r = await fsx(m.dirs.mnt, name, seed, "--data bytes");
        expect(r.stderr).toBe("");
        expect(r.code).toBe(0);
        await m.sync();
        const want = r.expected();
        expect((await attachmentBytes(name))?.equals(want)).toBe(true);
        expect(await sha(name)).toBe(await shaOf(want));
        await m.remount();
        expect(await sha(name)).toBe(await shaOf(want));
      },
      120_000 + OPS * MS_PER_OP,
    );

    it(
      `seed ${seed}: a note with text data, with mmap, ends on the service byte for byte`,
      async () => {
        const name = `text-${seed}.md`;
        const r = await fsx(m.dirs.mnt, name, seed, "--data text");
        expect(r.stderr).toBe("");
        expect(r.code).toBe(0);
        await m.sync();
        const rec = await findByPath(m.current.api, name);
        expect(rec?.id).toMatch(/^f_/);
        const body = await m.current.api.get(`/api/v1/files/${rec.id}`);
        expect(Buffer.from(body.body.content, "utf8").equals(r.expected())).toBe(true);
        expect(await sha(name)).toBe(await shaOf(r.expected()));
      },
      120_000 + OPS * MS_PER_OP,
    );

    it(
      `seed ${seed}: a note with text data, reads and writes only (fsx -R -W)`,
      async () => {
        const r = await fsx(m.dirs.mnt, `rw-${seed}.md`, seed, "--data text --no-mmap");
        expect(r.stderr).toBe("");
        expect(r.code).toBe(0);
      },
      120_000 + OPS * MS_PER_OP,
    );

    it(
      `seed ${seed}: a .md file with arbitrary bytes stays exact (never a note: an attachment), also after a remount`,
      async () => {
        const name = `bytes-${seed}.md`;
        const r = await fsx(m.dirs.mnt, name, seed, "--data bytes");
        expect(r.stderr).toBe("");
        expect(r.code).toBe(0);
        await m.sync();
        const want = await shaOf(r.expected());
        expect(await sha(name)).toBe(want);
        // Not valid UTF-8: never uploaded as (altered) text. A file that never was a note is an
        // attachment with exactly these bytes; one that was (text at an earlier close) stays that
        // note on the service, with its last text, and the bytes stay here.
        const rec = await findByPath(m.current.api, name);
        expect(isUtf8(r.expected())).toBe(false);
        if (rec) expect(await attachmentBytes(name)).toBeUndefined();
        else expect((await attachmentBytes(name))?.equals(r.expected())).toBe(true);
        await m.remount();
        expect(await sha(name)).toBe(want);
      },
      120_000 + OPS * MS_PER_OP,
    );
  }
});
