// `>>` to a note sends only the appended bytes (`file.append`, an extension of the spec:
// docs/api.md): its body is never fetched for them. Everything else done with such a note (a read,
// a rename, an edit) sends the appends first, then goes on as usual; when they went onto the
// version cached here, the one they made is cached (no download). Checked with real shells, the
// service's own request log and the API.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  contentAt,
  findByPath,
  flatIndex,
  type MountFixture,
  mountFixture,
  noteAt,
  sh,
  updateNote,
  waitFor,
} from "../helpers/mount.ts";

let m: MountFixture;
beforeAll(async () => {
  process.env.TXTFS_LOG_REQUESTS = "1"; // the in-process service logs every request it serves
  m = mountFixture();
  try {
    await m.start();
  } finally {
    delete process.env.TXTFS_LOG_REQUESTS;
  }
});
afterAll(async () => {
  await m?.close();
});

const api = () => m.current.api;
const run = (script: string) => sh(script, { cwd: m.dirs.mnt });

/** Requests the service served since `mark` (from the daemon's stderr): "METHOD /path" each. */
function requestsSince(mark: number): string[] {
  return m.current
    .stderr()
    .slice(mark)
    .split("\n")
    .filter((l) => l.includes('"incoming request"'))
    .map((l) => {
      const req = JSON.parse(l).req as { method: string; url: string };
      return `${req.method} ${req.url.split("?")[0]}`;
    });
}

let n = 0;
/** A new folder of `count` notes (`first line I`) made through the mount, then `after` (bash). */
async function notes(count: number, after = "true"): Promise<string> {
  const d = `n${++n}`;
  const made = await m.sh(
    `mkdir ${d} && for i in $(seq 1 ${count}); do printf 'first line %s\\n' $i > ${d}/n$i.md; done && ${after.replaceAll("DIR", d)}`,
  );
  expect(made.code).toBe(0);
  return d;
}

/** A folder of notes made on the service, then a fresh mount: none of their bodies is here. */
async function notesNotReadSinceMount(count: number): Promise<string> {
  const d = await notes(count);
  process.env.TXTFS_LOG_REQUESTS = "1";
  try {
    await m.remount();
  } finally {
    delete process.env.TXTFS_LOG_REQUESTS;
  }
  return d;
}

describe("appends to notes not read since the mount", () => {
  it("send only the appended bytes: no body is fetched, stat shows the size at once, the service gets exactly them", async () => {
    const d = await notesNotReadSinceMount(5);
    const mark = m.current.stderr().length;
    const r = await run(
      `cd ${d} && for i in 1 2 3 4 5; do echo "appended $i" >> n$i.md; done && echo again >> n1.md && stat -c %s n1.md n2.md`,
    );
    expect(r.stderr).toBe("");
    const first = "first line 1\n";
    expect(r.stdout).toBe(`${first.length + "appended 1\nagain\n".length}\n${first.length + 11}\n`);
    await m.sync();
    const reqs = requestsSince(mark);
    expect(
      reqs.filter((x) => x.startsWith("GET /api/me/folders") || x.startsWith("GET /api/v1/files/")),
    ).toEqual([]);
    expect(reqs.filter((x) => x === "POST /api/v1/sync").length).toBeGreaterThanOrEqual(1);
    expect(await contentAt(api(), `${d}/n1.md`)).toBe("first line 1\nappended 1\nagain\n");
    for (const i of [2, 3, 4, 5])
      expect(await contentAt(api(), `${d}/n${i}.md`)).toBe(`first line ${i}\nappended ${i}\n`);
    // Read back through the mount: the whole note.
    expect((await run(`cat ${d}/n1.md`)).stdout).toBe("first line 1\nappended 1\nagain\n");
  });

  it("a read, an edit or a rename right after them sees them, and each byte lands once", async () => {
    const d = await notesNotReadSinceMount(3);
    const r = await run(
      `cd ${d} && echo a1 >> n1.md && cat n1.md && ` +
        `echo a2 >> n2.md && sed -i 's/first/FIRST/' n2.md && cat n2.md && ` +
        "echo a3 >> n3.md && mv n3.md moved.md && echo a4 >> moved.md && cat moved.md",
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("first line 1\na1\n" + "FIRST line 2\na2\n" + "first line 3\na3\na4\n");
    await m.sync();
    expect(await contentAt(api(), `${d}/n1.md`)).toBe("first line 1\na1\n");
    expect(await contentAt(api(), `${d}/n2.md`)).toBe("FIRST line 2\na2\n");
    expect(await contentAt(api(), `${d}/moved.md`)).toBe("first line 3\na3\na4\n");
  });

  it("to a note deleted remotely before they were delivered: the appended text becomes the note again", async () => {
    const d = await notesNotReadSinceMount(1);
    const note = await noteAt(api(), `${d}/n1.md`);
    // Offline-like timing: the delete reaches the service while the append waits in the journal.
    expect((await api().delete(`/api/v1/files/${note.id}`)).status).toBe(200);
    const r = await run(`echo kept >> ${d}/n1.md`);
    // The feed may have shown the delete first (then `>>` made a new note), or not: either way
    // the appended bytes are on the service under that name.
    expect(r.code).toBe(0);
    await m.sync();
    expect(await contentAt(api(), `${d}/n1.md`)).toMatch(/kept\n$/);
  });

  it("many appends to one note from concurrent shells: every line lands exactly once", async () => {
    const d = await notesNotReadSinceMount(1);
    const r = await run(
      `cd ${d} && for w in 1 2 3 4; do (for i in $(seq 1 25); do echo "w$w line $i" >> n1.md; done) & done; wait`,
    );
    expect(r.code).toBe(0);
    await m.sync();
    const lines = ((await contentAt(api(), `${d}/n1.md`)) ?? "").split("\n").filter(Boolean);
    expect(lines[0]).toBe("first line 1");
    const rest = lines.slice(1).sort();
    const want = [1, 2, 3, 4]
      .flatMap((w) => Array.from({ length: 25 }, (_, i) => `w${w} line ${i + 1}`))
      .sort();
    expect(rest).toEqual(want);
    expect((await run(`wc -l < ${d}/n1.md`)).stdout.trim()).toBe("101");
  });
});

/** A folder of notes made here and read back: their bodies are cached. */
const notesRead = (count: number) => notes(count, "cat DIR/* > /dev/null");

describe("appends to notes read since the mount", () => {
  it("send only the appended bytes and leave the version they make cached: no body goes either way", async () => {
    const d = await notesRead(5);
    const mark = m.current.stderr().length;
    const r = await run(
      `cd ${d} && for i in 1 2 3 4 5; do echo "appended $i" >> n$i.md; done && echo again >> n1.md && cat n1.md n2.md`,
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("first line 1\nappended 1\nagain\nfirst line 2\nappended 2\n");
    await m.sync();
    // Read again once delivered: from the cache (the version the appends made), no download.
    expect((await run(`cat ${d}/n1.md ${d}/n5.md`)).stdout).toBe(
      "first line 1\nappended 1\nagain\nfirst line 5\nappended 5\n",
    );
    const reqs = requestsSince(mark);
    expect(
      reqs.filter((x) => x.startsWith("GET /api/me/folders") || x.startsWith("GET /api/v1/files/")),
    ).toEqual([]);
    expect(reqs.filter((x) => x.startsWith("PUT "))).toEqual([]); // no whole body went up
    expect(reqs.filter((x) => x === "POST /api/v1/sync").length).toBeGreaterThanOrEqual(1);
    expect(await contentAt(api(), `${d}/n1.md`)).toBe("first line 1\nappended 1\nagain\n");
    for (const i of [2, 3, 4, 5])
      expect(await contentAt(api(), `${d}/n${i}.md`)).toBe(`first line ${i}\nappended ${i}\n`);
  });

  it("a read right after them shows the whole note when a remote edit came between, never cut at the size the kernel held", async () => {
    const d = await notesRead(1);
    const note = await noteAt(api(), `${d}/n1.md`);
    const theirs = "a longer rewrite, made elsewhere a moment ago\n";
    await updateNote(api(), note.id, { content: theirs });
    // Whether or not the mount has heard of it yet: the appends land after it, and a read says so.
    const r = await run(`echo mine >> ${d}/n1.md && cat ${d}/n1.md`);
    expect(r.stdout).toBe(`${theirs}mine\n`);
    // stat, as for any remote edit, within the kernel's attribute timeout (staleWindow.ts).
    const size = await run(waitFor(`[ "$(stat -c %s ${d}/n1.md)" = ${theirs.length + 5} ]`, 3));
    expect(size.code).toBe(0);
  });

  it("an edit, a rename or a truncate right after them keeps every byte, once", async () => {
    const d = await notesRead(4);
    const r = await run(
      `cd ${d} && echo a1 >> n1.md && sed -i 's/first/FIRST/' n1.md && cat n1.md && ` +
        "echo a2 >> n2.md && mv n2.md moved.md && echo a3 >> moved.md && cat moved.md && " +
        "echo a4 >> n3.md && echo replaced > n3.md && cat n3.md && " +
        "echo a5 >> n4.md && vim -N -es -u NONE -i NONE -c '%s/line/LINE/' -c wq n4.md && cat n4.md",
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(
      "FIRST line 1\na1\n" + "first line 2\na2\na3\n" + "replaced\n" + "first LINE 4\na5\n",
    );
    await m.sync();
    expect(await contentAt(api(), `${d}/n1.md`)).toBe("FIRST line 1\na1\n");
    expect(await contentAt(api(), `${d}/moved.md`)).toBe("first line 2\na2\na3\n");
    expect(await contentAt(api(), `${d}/n3.md`)).toBe("replaced\n");
    expect(await contentAt(api(), `${d}/n4.md`)).toBe("first LINE 4\na5\n");
    const dir = await findByPath(api(), d);
    expect(
      (await flatIndex(api())).files
        .filter((f) => f.folderId === dir.id)
        .map((f) => f.name)
        .sort(),
    ).toEqual(["moved.md", "n1.md", "n3.md", "n4.md"]);
  });
});

describe("appends racing a remote edit", () => {
  it.each([
    ["not read since the mount", () => notesNotReadSinceMount(1)],
    ["read since the mount", () => notesRead(1)],
  ])(
    "to a note %s land after a remote edit made before they were delivered: no conflict copy, and the mount shows both",
    async (_, made) => {
      const d = await made();
      const note = await noteAt(api(), `${d}/n1.md`);
      await updateNote(api(), note.id, { content: "remote rewrite\n" });
      expect((await run(`echo mine >> ${d}/n1.md`)).code).toBe(0);
      await m.sync();
      expect(await contentAt(api(), `${d}/n1.md`)).toBe("remote rewrite\nmine\n");
      const dir = await findByPath(api(), d);
      expect((await flatIndex(api())).files.filter((f) => f.folderId === dir.id).map((f) => f.name)).toEqual([
        "n1.md",
      ]);
      // (A cached version was not the one they went onto: the note is fetched, never shown wrong.)
      const shown = await run(
        `for i in $(seq 1 100); do [ "$(cat ${d}/n1.md)" = "$(printf 'remote rewrite\nmine')" ] && exit 0; sleep 0.05; done; cat ${d}/n1.md; exit 1`,
      );
      expect(shown.code, shown.stdout).toBe(0);
    },
  );
});
