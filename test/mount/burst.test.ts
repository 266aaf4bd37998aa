// A burst of parallel reads while changes made elsewhere arrive: several child shells run ls -lR,
// cat and grep -r over the mount at once while the test edits, creates and deletes notes through
// the API — the kernel's caches are invalidated from C (notifyInode/notifyEntry) while its requests
// are in flight. Every reader must only ever see whole notes (no error but a name deleted under
// it), and once the edits stop the mount must show exactly the service's notes.
// scripts/sanitize runs it under the ASan/UBSan binding. TXTFS_BURST_ROUNDS makes it longer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createFolder,
  createNote,
  flatIndex,
  type MountFixture,
  mountFixture,
  sh,
  updateNote,
  waitFor,
} from "../helpers/mount.ts";

const ROUNDS = Number(process.env.TXTFS_BURST_ROUNDS ?? 40);
const READERS = 4;
const NOTES = 12;

let m: MountFixture;
beforeAll(async () => {
  m = mountFixture();
  await m.start();
}, 60_000);
afterAll(() => m?.close());

/** A note's text: one line naming its round, so a reader can tell a torn note from a whole one. */
const body = (name: string, round: number) => `${name} round ${round}\n${"x".repeat(200 + round)}\n`;

describe("a burst of ls/cat/grep with remote changes arriving", () => {
  it("readers see only whole notes, and the mount ends equal to the service", async () => {
    const api = m.current.api;
    const folder = await createFolder(api, "burst");
    const ids = new Map<string, string>();
    for (let i = 0; i < NOTES; i++) {
      const name = `n${i}.md`;
      ids.set(name, (await createNote(api, { name, folderId: folder.id, content: body(name, 0) })).id);
    }
    const arrived = await sh(waitFor(`[ "$(ls burst 2>/dev/null | wc -l)" -ge ${NOTES} ]`, 20), {
      cwd: m.dirs.mnt,
      timeoutMs: 30_000,
    });
    expect(arrived.code, "the notes made through the API never showed in the mount").toBe(0);
    // Readers stop when the file `stop` appears (outside the mount), not after a fixed time.
    const stop = `${m.dirs.base}/stop-readers`;
    const reader = (k: number) =>
      sh(
        `n=0; while [ ! -e '${stop}' ]; do
           ls -lR burst >/dev/null 2>>'${m.dirs.base}/ls-errors-${k}' || true
           for f in burst/*.md; do
             c=$(cat "$f" 2>/dev/null) || continue   # deleted between the glob and the read
             case "$c" in "$(basename "$f") round "*) ;; *) echo "torn $f: \${c:0:40}"; exit 1;; esac
           done
           grep -rlq ' round ' burst || { echo "grep found no note"; exit 1; }
           n=$((n+1))
         done; echo "passes $n"`,
        { cwd: m.dirs.mnt, timeoutMs: 300_000 },
      );
    const readers = Array.from({ length: READERS }, (_, k) => reader(k));
    let changes = 0;
    try {
      for (let round = 1; round <= ROUNDS; round++) {
        for (const [name, id] of ids) {
          if ((round + name.length) % 3 === 0) continue;
          await updateNote(api, id, { content: body(name, round) });
          changes++;
        }
        const extra = `e${round}.md`;
        const made = await createNote(api, { name: extra, folderId: folder.id, content: body(extra, round) });
        changes++;
        if (round % 2 === 0) {
          expect((await api.delete(`/api/v1/files/${made.id}`)).status).toBe(200);
          changes++;
        } else ids.set(extra, made.id);
      }
    } finally {
      await sh(`touch '${stop}'`, { cwd: "/" });
    }
    const results = await Promise.all(readers);
    for (const r of results) {
      expect(r.stdout, r.stderr).toMatch(/^passes \d+/m);
      expect(r.code).toBe(0);
    }
    const passes = results.map((r) => Number(/passes (\d+)/.exec(r.stdout)?.[1] ?? 0));
    // Once the edits stop, the mount converges on the service: same names, same bytes.
    const index = await flatIndex(api);
    const want = index.files
      .filter((f: any) => f.folderId === folder.id)
      .map((f: any) => f.name)
      .sort();
    const expected = new Map<string, string>();
    for (const name of want) {
      const res = await api.get(`/api/v1/files/${ids.get(name)}`);
      expected.set(name, res.body.content);
    }
    const listing = async () =>
      (
        await sh(`for f in $(LC_ALL=C ls burst); do printf '%s %s\\n' "$f" "$(wc -c < "burst/$f")"; done`, {
          cwd: m.dirs.mnt,
        })
      ).stdout;
    const manifest = [...expected].map(([n, c]) => `${n} ${Buffer.byteLength(c)}\n`).join("");
    const deadline = Date.now() + 30_000;
    let seen = await listing();
    while (seen !== manifest && Date.now() < deadline) seen = await listing();
    expect(seen).toBe(manifest);
    for (const [name, content] of expected) {
      const r = await sh(`cat burst/${name}`, { cwd: m.dirs.mnt });
      expect(r.stdout, name).toBe(content);
    }
    process.stderr.write(
      `[burst] ${changes} remote changes, ${READERS} readers, ${passes.join("+")} passes of ls -lR/cat/grep -r\n`,
    );
  }, 300_000);
});
