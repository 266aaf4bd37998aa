// Remote changes reach a real mount (change feed -> tree -> kernel caches) within 2 seconds, and a
// write racing a remote change keeps both versions.
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createFolder,
  createNote,
  findByPath,
  flatIndex,
  type MountFixture,
  mountFixture,
  noteAt,
  q,
  updateNote,
  waitFor,
} from "../helpers/mount.ts";

let m: MountFixture;

beforeAll(async () => {
  m = mountFixture();
  await m.start();
  expect((await m.sh("mkdir fresh other conf")).code).toBe(0);
});
afterAll(() => m?.close());

const api = () => m.current.api;

/** Waits (at most 2 s, polling from a child process) until the bash test holds. */
async function eventually(test: string, what: string): Promise<void> {
  const started = Date.now();
  const r = await m.sh(waitFor(test, 2), 10_000);
  const state = await m.sh("ls -R fresh other 2>&1 | head -40");
  expect(r.code, `${what} not seen after ${Date.now() - started} ms; mount shows:\n${state.stdout}`).toBe(0);
}

describe("freshness", () => {
  it("a note created, updated, renamed, moved and deleted through the API shows in the mount within 2 s", async () => {
    const fresh = await findByPath(api(), "fresh");
    const other = await findByPath(api(), "other");
    const note = await createNote(api(), { name: "remote.md", content: "v1\n", folderId: fresh.id });
    await eventually(`[ "$(cat fresh/remote.md 2>/dev/null)" = v1 ]`, "create");

    await updateNote(api(), note.id, { content: "version two\n" });
    await eventually(`[ "$(cat fresh/remote.md)" = "version two" ]`, "update");
    expect((await m.sh("stat -c %s fresh/remote.md")).stdout).toBe("12\n");

    await updateNote(api(), note.id, { name: "renamed.md" });
    await eventually("[ -e fresh/renamed.md ] && [ ! -e fresh/remote.md ]", "rename");
    expect((await m.sh("ls fresh")).stdout).toBe("renamed.md\n");

    await updateNote(api(), note.id, { folderId: other.id });
    await eventually("[ -e other/renamed.md ] && [ ! -e fresh/renamed.md ]", "move");
    expect((await m.sh("cat other/renamed.md")).stdout).toBe("version two\n");

    expect((await api().delete(`/api/v1/files/${note.id}`)).status).toBe(200);
    await eventually("[ ! -e other/renamed.md ]", "delete");
    expect((await m.sh("ls other")).stdout).toBe("");
  });

  it("folders created, renamed and deleted through the API show in the mount within 2 s", async () => {
    const folder = await createFolder(api(), "remote-dir");
    await eventually("[ -d remote-dir ]", "folder create");
    await createNote(api(), { name: "inside.md", content: "in\n", folderId: folder.id });
    await eventually(`[ "$(cat remote-dir/inside.md 2>/dev/null)" = in ]`, "note in new folder");
    expect((await api().put(`/api/v1/folders/${folder.id}`, { name: "remote-dir2" })).status).toBe(200);
    await eventually(
      "[ -d remote-dir2 ] && [ ! -e remote-dir ] && [ -e remote-dir2/inside.md ]",
      "folder rename",
    );
    const del = await api().delete(`/api/v1/folders/${folder.id}`);
    expect(del.status).toBe(200);
    // the service moves what was inside up one level
    await eventually("[ ! -e remote-dir2 ] && [ -e inside.md ]", "folder delete");
  });

  it("tags and context changed through the API show in getfattr within 2 s", async () => {
    expect((await m.sh("echo m > fresh/meta.md")).code).toBe(0);
    const note = await noteAt(api(), "fresh/meta.md");
    await updateNote(api(), note.id, { tags: ["remote", "tag"], context: "set remotely" });
    await eventually(
      `[ "$(getfattr --only-values -n user.txtfs.tags fresh/meta.md)" = remote,tag ] && [ "$(getfattr --only-values -n user.txtfs.context fresh/meta.md)" = "set remotely" ]`,
      "metadata change",
    );
  });

  it("attributes kept past the kernel's 1 s cache still follow remote and local changes", async () => {
    expect((await m.sh("printf 12345 > fresh/attrs.md")).code).toBe(0);
    const note = await noteAt(api(), "fresh/attrs.md");
    // Stat, wait out the kernel's attribute timeout, stat again: now the answer comes from the
    // daemon's native cache rather than from JavaScript.
    const before = await m.sh("stat -c '%s %Y' fresh/attrs.md; sleep 1.2; stat -c '%s %Y' fresh/attrs.md");
    const [first, second] = before.stdout.trim().split("\n");
    expect(second).toBe(first);
    expect(first!.split(" ")[0]).toBe("5");

    // A remote change of metadata only moves ctime (mtime follows the content); a content change
    // moves the size.
    const ctime = (await m.sh("stat -c %Z fresh/attrs.md")).stdout.trim();
    await new Promise((r) => setTimeout(r, 1100)); // updatedAt has 1 s resolution in `stat -c %Z`
    await updateNote(api(), note.id, { tags: ["moved"] });
    await eventually(`[ "$(stat -c %Z fresh/attrs.md)" != ${ctime} ]`, "remote ctime");
    expect((await m.sh("stat -c %Y fresh/attrs.md")).stdout.trim()).toBe(first!.split(" ")[1]);
    await updateNote(api(), note.id, { content: "1234567890" });
    await eventually(`[ "$(stat -c %s fresh/attrs.md)" = 10 ]`, "remote size");

    // Local changes are seen at once, also from another process, also for local-only files.
    const local = await m.sh(
      "stat -c %s fresh/attrs.md >/dev/null; sleep 1.1; printf abc >> fresh/attrs.md; stat -c %s fresh/attrs.md; " +
        "printf xy > fresh/plain.bin; stat -c %s fresh/plain.bin; sleep 1.1; printf z >> fresh/plain.bin; stat -c %s fresh/plain.bin; " +
        "mv fresh/attrs.md fresh/attrs2.md; stat -c %s fresh/attrs.md 2>&1 | grep -c 'No such'; stat -c %s fresh/attrs2.md",
    );
    expect(local.stdout).toBe("13\n2\n3\n1\n13\n");

    // A name looked up while missing (an answer the daemon also keeps) appears once created:
    // from another process at once, from another client within 2 s.
    const made = await m.sh(
      "for i in 1 2; do [ -e fresh/neg.md ] || echo missing; sleep 1.1; done; echo here > fresh/neg.md && cat fresh/neg.md",
    );
    expect(made.stdout).toBe("missing\nmissing\nhere\n");
    expect(
      (
        await m.sh(
          "[ -e fresh/neg-remote.md ] || echo missing; sleep 1.1; [ -e fresh/neg-remote.md ] || echo missing",
        )
      ).stdout,
    ).toBe("missing\nmissing\n");
    const fresh = await findByPath(api(), "fresh");
    await createNote(api(), { name: "neg-remote.md", content: "remote\n", folderId: fresh.id });
    await eventually(
      `[ "$(cat fresh/neg-remote.md 2>/dev/null)" = remote ]`,
      "a note created after a failed lookup",
    );
  });

  it("directory listings kept by the daemon follow local and remote changes", async () => {
    // Each `ls` after the first is answered from the daemon's native listing cache until anything changes.
    const local = await m.sh(
      "mkdir lst && echo a > lst/a.md && ls lst && ls lst && echo b > lst/b.md && ls lst && rm lst/a.md && ls lst && " +
        "mv lst/b.md lst/c.md && ls lst && printf x > lst/tmp.bin && ls lst",
    );
    expect(local.stdout).toBe("a.md\na.md\na.md\nb.md\nb.md\nc.md\nc.md\ntmp.bin\n");
    const lst = await findByPath(api(), "lst");
    const made = await createNote(api(), { name: "remote.md", content: "r\n", folderId: lst.id });
    await eventually(
      `[ "$(ls lst | tr '\n' ' ')" = "c.md remote.md tmp.bin " ]`,
      "remote create in a listed folder",
    );
    expect((await api().put(`/api/v1/files/${made.id}`, { name: "renamed.md" })).status).toBe(200);
    await eventually(`[ "$(ls lst | tr '\n' ' ')" = "c.md renamed.md tmp.bin " ]`, "remote rename");
    expect((await api().delete(`/api/v1/files/${made.id}`)).status).toBe(200);
    await eventually(`[ "$(ls lst | tr '\n' ' ')" = "c.md tmp.bin " ]`, "remote delete");
  });

  it("cached content is revalidated after an API update (same size, new bytes)", async () => {
    expect(
      (await m.sh("printf AAAA > fresh/cached.md && cat fresh/cached.md && cat fresh/cached.md")).stdout,
    ).toBe("AAAAAAAA");
    const note = await noteAt(api(), "fresh/cached.md");
    await updateNote(api(), note.id, { content: "BBBB" });
    await eventually(`[ "$(cat fresh/cached.md)" = BBBB ]`, "revalidated content");
    // and an open-read-close after that keeps returning the new body
    expect(
      (await m.sh("head -c 4 fresh/cached.md; dd if=fresh/cached.md bs=1 skip=2 status=none")).stdout,
    ).toBe("BBBBBB");
    await updateNote(api(), note.id, { content: "CCCCCC" });
    await eventually(`[ "$(cat fresh/cached.md)" = CCCCCC ]`, "revalidated longer content");
  });
});

/** Runs python with a file open for writing until we say so; resolves once it has written. */
async function holdOpen(mode: string, path: string, data: string) {
  const script = [
    "import sys",
    `f = open(${JSON.stringify(path)}, ${JSON.stringify(mode)})`,
    `f.write(${JSON.stringify(data)})`,
    "f.flush()", // write(2) now: the data is in the mount's buffer, the file stays open
    "print('ready', flush=True)",
    "sys.stdin.readline()",
    "f.close()",
    "print('closed', flush=True)",
  ].join("\n");
  const child = spawn("bash", ["-c", `exec python3 -c ${q(script)}`], {
    cwd: m.dirs.mnt,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  child.stderr.on("data", (d) => {
    err += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`python did not get ready: ${err}`)), 10_000);
    child.stdout.on("data", () => {
      if (out.includes("ready")) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => reject(new Error(`python exited ${code}: ${err}`)));
  });
  return {
    async close() {
      child.stdin.end("\n");
      const code = await exited;
      return { code, out, err };
    },
  };
}

describe("conflicts", () => {
  it("a write that closes after a remote change keeps both: remote in the note, ours in a conflict copy", async () => {
    expect((await m.sh("echo base > conf/c.md")).code).toBe(0);
    const note = await noteAt(api(), "conf/c.md");
    const writer = await holdOpen("w", "conf/c.md", "ours\n");
    let closed: { code: number | null; err: string } | undefined;
    try {
      await updateNote(api(), note.id, { content: "theirs\n" });
    } finally {
      closed = await writer.close();
    }
    await m.sync();
    expect(closed.err).toBe("");
    expect(closed.code).toBe(0);

    const remote = (await api().get(`/api/v1/files/${note.id}`)).body;
    expect(remote.content).toBe("theirs\n");
    const index = await flatIndex(api());
    const copies = index.files.filter(
      (f) => f.folderId === note.folderId && /^c\.conflict-.+\.md$/.test(f.name),
    );
    expect(copies.map((c) => c.name)).toHaveLength(1);
    const copy = (await api().get(`/api/v1/files/${copies[0].id}`)).body;
    expect(copy.content).toBe("ours\n");

    // the mount shows both, with the remote version under the note's name
    const r = await m.sh(`ls conf | grep '^c\\.'; cat conf/c.md; cat ${q(`conf/${copies[0].name}`)}`);
    expect(r.stdout).toBe(`${copies[0].name}\nc.md\ntheirs\nours\n`);
  });

  it("an append racing a remote change lands after it, as O_APPEND writes land at the end of the file as it is: both kept, no conflict copy", async () => {
    // (Until 2026-11-27 a note whose body was cached got a conflict copy here, one not read since
    // the mount this; now `>>` does the same whatever the mount has cached.)
    expect((await m.sh("echo base > conf/a.md && cat conf/a.md >/dev/null")).code).toBe(0);
    const note = await noteAt(api(), "conf/a.md");
    const writer = await holdOpen("a", "conf/a.md", "ours\n");
    try {
      await updateNote(api(), note.id, { content: "theirs\n" });
    } finally {
      const closed = await writer.close();
      expect(closed.code).toBe(0);
    }
    await m.sync();
    expect((await api().get(`/api/v1/files/${note.id}`)).body.content).toBe("theirs\nours\n");
    const index = await flatIndex(api());
    const copies = index.files.filter((f) => f.folderId === note.folderId && /^a\.conflict-/.test(f.name));
    expect(copies).toHaveLength(0);
    expect((await m.sh("cat conf/a.md")).stdout).toBe("theirs\nours\n");
  });

  it("a note deleted remotely while open for writing is saved again with our content", async () => {
    expect((await m.sh("echo base > conf/gone.md")).code).toBe(0);
    const note = await noteAt(api(), "conf/gone.md");
    const writer = await holdOpen("w", "conf/gone.md", "ours survives\n");
    try {
      expect((await api().delete(`/api/v1/files/${note.id}`)).status).toBe(200);
    } finally {
      const closed = await writer.close();
      expect(closed.err).toBe("");
      expect(closed.code).toBe(0);
    }
    await m.sync();
    const again = await noteAt(api(), "conf/gone.md");
    expect(again.id).not.toBe(note.id);
    expect(again.content).toBe("ours survives\n");
    expect((await m.sh("cat conf/gone.md")).stdout).toBe("ours survives\n");
  });
});
