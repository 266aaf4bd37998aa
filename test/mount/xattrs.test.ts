// Note and folder metadata as extended attributes through a real mount (getfattr/setfattr),
// checked through the API; bad values fail with the errno a tool expects and change nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTxtfs } from "../helpers/cli.ts";
import { lacking } from "../helpers/kernel.ts";
import { findByPath, type MountFixture, mountFixture, noteAt, q, txtfsEnv } from "../helpers/mount.ts";

let m: MountFixture;
let note: any;
let folder: any;

beforeAll(async () => {
  m = mountFixture();
  await m.start();
  const r = await m.sh("mkdir x && echo meta > x/meta.md && echo other > x/other.md");
  expect(r.code).toBe(0);
  note = await noteAt(m.current.api, "x/meta.md");
  folder = await findByPath(m.current.api, "x");
});
afterAll(() => m?.close());

const api = () => m.current.api;
const fileNow = async () => (await api().get(`/api/v1/files/${note.id}`)).body;
const folderNow = async () => (await findByPath(api(), "x"))!;

/** `getfattr -d` output as a map: name -> value (quotes removed). */
function parseDump(out: string): Record<string, string> {
  const map: Record<string, string> = {};
  for (const line of out.split("\n")) {
    const mm = /^([\w.]+)(?:="(.*)")?$/.exec(line);
    if (mm) map[mm[1]!] = mm[2] ?? "";
  }
  return map;
}

describe("xattrs on notes", () => {
  it("getfattr -d lists the metadata attributes with the API's values", async () => {
    const r = await m.sh("getfattr -d x/meta.md");
    expect(r.code).toBe(0);
    const attrs = parseDump(r.stdout);
    const now = await fileNow();
    expect(attrs).toMatchObject({
      "user.txtfs.id": note.id,
      "user.txtfs.etag": now.etag.replace(/"/g, '\\"'),
      "user.txtfs.access": "owner",
      "user.txtfs.role": "owner",
      "user.txtfs.availability": "cloud+local",
    });
    const one = await m.sh("getfattr --only-values -n user.txtfs.etag x/meta.md");
    expect(one.stdout).toBe(now.etag);
  });

  it("setfattr user.txtfs.tags with a comma list and with a JSON array", async () => {
    let r = await m.sh(
      "setfattr -n user.txtfs.tags -v a,b x/meta.md && getfattr --only-values -n user.txtfs.tags x/meta.md",
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("a,b");
    expect((await fileNow()).tags).toEqual(["a", "b"]);

    r = await m.sh(
      `setfattr -n user.txtfs.tags -v '["two words","z"]' x/meta.md && getfattr --only-values -n user.txtfs.tags x/meta.md`,
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("two words,z");
    const now = await fileNow();
    expect(now.tags).toEqual(["two words", "z"]);
    expect(now.content).toBe("meta\n");
    expect(now.id).toBe(note.id);
  });

  it("setfattr user.txtfs.context", async () => {
    const r = await m.sh(
      "setfattr -n user.txtfs.context -v 'Research notes on caches' x/meta.md && getfattr --only-values -n user.txtfs.context x/meta.md",
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("Research notes on caches");
    expect((await fileNow()).context).toBe("Research notes on caches");
  });

  it("a context of 4001 characters fails with 'Invalid argument' and changes nothing", async () => {
    const before = await fileNow();
    const r = await m.sh(
      `setfattr -n user.txtfs.context -v "$(head -c 4001 /dev/zero | tr '\\0' c)" x/meta.md`,
    );
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/Invalid argument/);
    const after = await fileNow();
    expect([after.context, after.etag]).toEqual([before.context, before.etag]);
    // 4000 is the limit, and allowed
    const ok = await m.sh(
      `setfattr -n user.txtfs.context -v "$(head -c 4000 /dev/zero | tr '\\0' c)" x/meta.md`,
    );
    expect(ok.stderr).toBe("");
    expect((await fileNow()).context).toBe("c".repeat(4000));
  });

  it("17 tags fail with 'Invalid argument' and change nothing", async () => {
    const before = await fileNow();
    const tags = Array.from({ length: 17 }, (_, i) => `t${i}`).join(",");
    let r = await m.sh(`setfattr -n user.txtfs.tags -v ${tags} x/meta.md`);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/Invalid argument/);
    const json = JSON.stringify(Array.from({ length: 17 }, (_, i) => `j${i}`));
    r = await m.sh(`setfattr -n user.txtfs.tags -v '${json}' x/meta.md`);
    expect(r.stderr).toMatch(/Invalid argument/);
    r = await m.sh(`setfattr -n user.txtfs.tags -v '["not closed' x/meta.md`);
    expect(r.stderr).toMatch(/Invalid argument/);
    const after = await fileNow();
    expect([after.tags, after.etag]).toEqual([before.tags, before.etag]);
    expect((await m.sh("getfattr --only-values -n user.txtfs.tags x/meta.md")).stdout).toBe(
      before.tags.join(","),
    );
  });

  it("a refused xattr or sidecar write is logged with its reason and listed by `txtfs status`, newest per path", async () => {
    const before = await fileNow();
    expect((await m.sh("setfattr -n user.txtfs.tags -v '[\"open' x/meta.md")).code).not.toBe(0);
    // (Python reports the refusal at close; a shell's `>` ignores an error of close.)
    const r = await m.sh(
      `python3 -c ${q('f = open("x/meta.md.meta.json", "w"); f.write(\'{"tags":5}\'); f.close()')}`,
    );
    expect(r.stderr).toMatch(/Invalid argument/);
    const status = await runTxtfs(["status"], txtfsEnv(m.dirs));
    // The record is rewritten every 2 s.
    let out = status.stdout;
    for (let i = 0; i < 20 && !/meta\.md\.meta\.json/.test(out); i++) {
      await new Promise((r) => setTimeout(r, 250));
      out = (await runTxtfs(["status"], txtfsEnv(m.dirs))).stdout;
    }
    expect(out).toMatch(/metadata refused: \/x\/meta\.md \(user\.txtfs\.tags\) \(tags: not a JSON array\)/);
    expect(out).toMatch(/metadata refused: \/x\/meta\.md\.meta\.json \(tags\)/);
    expect(m.current.stderr()).toMatch(
      /"path":"\/x\/meta\.md\.meta\.json","reason":"tags","errno":"EINVAL","msg":"metadata write refused/,
    );
    const after = await fileNow();
    expect([after.tags, after.etag]).toEqual([before.tags, before.etag]);
  });

  it("read-only attributes are left as they are when set (copies with attributes print no error) and change nothing", async () => {
    const before = await fileNow();
    for (const name of ["id", "etag", "access", "role", "availability", "connections"]) {
      const r = await m.sh(`setfattr -n user.txtfs.${name} -v forged x/meta.md`);
      expect(r.code, name).toBe(0);
      expect((await m.sh(`getfattr --only-values -n user.txtfs.${name} x/meta.md`)).stdout, name).not.toBe(
        "forged",
      );
    }
    const after = await fileNow();
    expect([after.id, after.etag]).toEqual([before.id, before.etag]);
    expect((await m.sh("getfattr --only-values -n user.txtfs.id x/meta.md")).stdout).toBe(note.id);
  });

  it.skipIf(lacking("ptrace"))(
    "other user.* names are absent, other namespaces unsupported, so ls -l probes a label once per mount",
    async () => {
      let r = await m.sh("getfattr -n user.other x/meta.md");
      expect(r.stderr).toMatch(/No such attribute/);
      for (const name of ["security.selinux", "system.posix_acl_access", "trusted.x"]) {
        r = await m.sh(`getfattr -n ${name} x/meta.md`);
        expect(r.stderr, name).toMatch(/Operation not supported/);
      }
      // `ls -l` remembers an unsupported label/ACL per device: two probes for the whole listing,
      // not two per file (each would be a FUSE round trip).
      r = await m.sh(
        "strace -f -e trace=lgetxattr,getxattr ls -lR . 2>&1 >/dev/null | grep -c 'xattr(' || true",
      );
      expect(Number(r.stdout.trim())).toBe(2);
    },
  );
  it("user.txtfs.connections lists a connected note", async () => {
    const other = await noteAt(api(), "x/other.md");
    const res = await api().post(`/api/v1/files/${note.id}/connections`, {
      targetFileId: other.id,
      reason: "related",
    });
    expect([200, 201]).toContain(res.status);
    const r = await m.sh("getfattr --only-values -n user.txtfs.connections x/meta.md");
    expect(r.code).toBe(0);
    const list = JSON.parse(r.stdout);
    expect(list.map((c: any) => c.id)).toContain(other.id);
  });
});

describe("xattrs on folders", () => {
  it("tags and context on a folder are read and written through the API", async () => {
    let r = await m.sh("getfattr --only-values -n user.txtfs.id x");
    expect(r.stdout).toBe(folder.id);
    r = await m.sh(
      "setfattr -n user.txtfs.tags -v proj,docs x && setfattr -n user.txtfs.context -v 'Folder context' x && getfattr -d x",
    );
    expect(r.stderr).toBe("");
    const attrs = parseDump(r.stdout);
    expect(attrs).toMatchObject({
      "user.txtfs.tags": "proj,docs",
      "user.txtfs.context": "Folder context",
      "user.txtfs.id": folder.id,
    });
    const now = await folderNow();
    expect([now.tags, now.context]).toEqual([["proj", "docs"], "Folder context"]);
  });

  it("bad folder metadata fails with 'Invalid argument'; read-only fields are left as they are", async () => {
    const before = await folderNow();
    const tags = Array.from({ length: 17 }, (_, i) => `t${i}`).join(",");
    let r = await m.sh(`setfattr -n user.txtfs.tags -v ${tags} x`);
    expect(r.stderr).toMatch(/Invalid argument/);
    r = await m.sh(`setfattr -n user.txtfs.context -v "$(head -c 4001 /dev/zero | tr '\\0' c)" x`);
    expect(r.stderr).toMatch(/Invalid argument/);
    r = await m.sh("setfattr -n user.txtfs.id -v d_forged x && getfattr --only-values -n user.txtfs.id x");
    expect(r.stdout).toBe(before.id);
    const after = await folderNow();
    expect([after.tags, after.context, after.updatedAt]).toEqual([
      before.tags,
      before.context,
      before.updatedAt,
    ]);
  });
});

describe("sidecars", () => {
  let side: any;

  beforeAll(async () => {
    expect((await m.sh("echo side > x/side.md")).code).toBe(0);
    side = await noteAt(api(), "x/side.md");
  });

  const sideNow = async () => (await api().get(`/api/v1/files/${side.id}`)).body;

  /** Writes a file with python so that an error at close (where sidecars are applied) is reported. */
  const pyWrite = (path: string, text: string) =>
    m.sh(
      `python3 -c ${q(`f = open(${JSON.stringify(path)}, "w"); f.write(${JSON.stringify(text)}); f.close()`)}`,
    );

  it("NAME.meta.json is readable by name, not listed, and holds the note's metadata", async () => {
    const r = await m.sh("cat x/side.md.meta.json");
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ id: side.id, name: "side.md", tags: [], context: "" });
    const ls = await m.sh("ls -A x; find x -name '*.json'");
    expect(ls.stdout).not.toContain("meta.json");
  });

  it("writing NAME.meta.json applies context and tags", async () => {
    const r = await pyWrite(
      "x/side.md.meta.json",
      JSON.stringify({ context: "from sidecar", tags: ["s1", "s2"] }),
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const now = await sideNow();
    expect([now.context, now.tags, now.content]).toEqual(["from sidecar", ["s1", "s2"], "side\n"]);
    const back = JSON.parse((await m.sh("cat x/side.md.meta.json")).stdout);
    expect([back.context, back.tags]).toEqual(["from sidecar", ["s1", "s2"]]);
  });

  it("sed -i on a sidecar applies the edit", async () => {
    const r = await m.sh("sed -i 's/from sidecar/edited by sed/' x/side.md.meta.json");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect((await sideNow()).context).toBe("edited by sed");
    expect((await m.sh("ls -A x")).stdout).not.toMatch(/sed|meta\.json/);
  });

  it("attribute calls on a sidecar (touch, getfattr) succeed like on any file", async () => {
    const r = await m.sh(
      "touch x/side.md.meta.json && getfattr -d x/side.md.meta.json && stat -c %s x/side.md.meta.json",
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(Number(r.stdout.trim())).toBe(Buffer.byteLength((await m.sh("cat x/side.md.meta.json")).stdout));
  });

  it("an invalid sidecar fails with 'Invalid argument' and changes nothing", async () => {
    const before = await sideNow();
    for (const text of [
      "{not json",
      JSON.stringify({ tags: Array.from({ length: 17 }, (_, i) => `t${i}`) }),
      JSON.stringify({ context: "c".repeat(4001) }),
      JSON.stringify(["an", "array"]),
    ]) {
      const r = await pyWrite("x/side.md.meta.json", text);
      expect(r.code, text.slice(0, 40)).not.toBe(0);
      expect(r.stderr, text.slice(0, 40)).toMatch(/Invalid argument/);
    }
    const after = await sideNow();
    expect([after.context, after.tags, after.etag]).toEqual([before.context, before.tags, before.etag]);
  });

  it("an invalid sidecar written from a shell fails at the write, so the shell sees it (it ignores the close)", async () => {
    const before = await sideNow();
    for (const text of [
      "not json", // refused at its first byte
      '{"tags": 5}', // a whole object with a bad value
      '{"tags": ["a"]} trailing', // more after the object
      "[1, 2]",
    ]) {
      const r = await m.sh(`echo ${q(text)} > x/side.md.meta.json`);
      expect(r.code, text).not.toBe(0);
      expect(r.stderr, text).toMatch(/write error: Invalid argument/);
      const piped = await m.sh(`echo ${q(text)} | cat > x/side.md.meta.json`);
      expect(piped.code, text).not.toBe(0);
      expect(piped.stderr, text).toMatch(/Invalid argument/);
    }
    const after = await sideNow();
    expect([after.context, after.tags, after.etag]).toEqual([before.context, before.tags, before.etag]);
    const shown = JSON.parse((await m.sh("cat x/side.md.meta.json")).stdout);
    expect([shown.context, shown.tags]).toEqual([before.context, before.tags]);
    // A valid one written the same way applies.
    const ok = await m.sh(`echo ${q('{"tags": ["from-bash"]}')} > x/side.md.meta.json`);
    expect([ok.code, ok.stderr]).toEqual([0, ""]);
    expect((await sideNow()).tags).toEqual(["from-bash"]);
    // ... and leaves no refusal behind (bash flushes the emptied sidecar before echo writes).
    const clean = await m.sh(`echo c > x/clean.md && echo ${q('{"tags": ["t"]}')} > x/clean.md.meta.json`);
    expect([clean.code, clean.stderr]).toEqual([0, ""]);
    expect((await noteAt(api(), "x/clean.md")).tags).toEqual(["t"]);
    expect(m.current.stderr()).not.toContain("/x/clean.md.meta.json");
  });

  it("a folder's .meta.json reads and writes the folder's metadata", async () => {
    const r = await pyWrite("x/.meta.json", JSON.stringify({ context: "folder via sidecar", tags: ["fs"] }));
    expect(r.stderr).toBe("");
    const now = await folderNow();
    expect([now.context, now.tags]).toEqual(["folder via sidecar", ["fs"]]);
    const doc = JSON.parse((await m.sh("cat x/.meta.json")).stdout);
    expect(doc).toMatchObject({ id: folder.id, context: "folder via sidecar", tags: ["fs"] });
  });
});
