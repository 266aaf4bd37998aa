// Through an open descriptor: fstat answers from the open file itself, wherever its name went
// (moved or removed by another process), and a write C held that the vfs then refused is
// reported at fsync with the errno it was refused with.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MountFixture, mountFixture, noteAt, q, sh, updateNote } from "../helpers/mount.ts";

let m: MountFixture;

beforeAll(async () => {
  m = mountFixture();
  await m.start();
});
afterAll(async () => {
  await m?.close();
});

const api = () => m.current.api;
/** Waits for a condition another process makes true (no fixed sleeps: the machine is loaded). */
async function until(cond: () => boolean, ms = 30_000): Promise<void> {
  for (const end = Date.now() + ms; !cond(); await new Promise((r) => setTimeout(r, 20)))
    if (Date.now() > end) throw new Error("timed out waiting");
}
const py = (code: string) => sh(`python3 -c ${q(code)}`, { cwd: m.dirs.mnt, timeoutMs: 60_000 });

describe("an open descriptor's attributes", () => {
  it("fstat and lseek(SEEK_END) answer the open note's size after another process moved or removed it", async () => {
    expect(
      (await m.sh("mkdir fa && printf 'twelve bytes' > fa/moved.md && printf 'seven b' > fa/gone.md")).code,
    ).toBe(0);
    const r = await py(`import os, subprocess
out = []
for name, other in (("fa/moved.md", ["mv", "fa/moved.md", "fa/elsewhere.md"]), ("fa/gone.md", ["rm", "fa/gone.md"])):
    fd = os.open(name, os.O_RDONLY)
    subprocess.run(other, check=True)
    try:
        out.append(str(os.fstat(fd).st_size))
        out.append(str(os.lseek(fd, 0, os.SEEK_END)))
    except OSError as e:
        out.append(e.strerror)
    os.close(fd)
print(" ".join(out))`);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("12 12 7 7\n");
  });

  it("fstat on an open sidecar answers its size after another process removed its note", async () => {
    expect((await m.sh("mkdir -p fa && printf x > fa/side.md")).code).toBe(0);
    // The kernel keeps a sidecar's attributes 1 s: every fstat over 2.5 s reaches the daemon at least once.
    const r = await py(`import os, subprocess, time
fd = os.open("fa/side.md.meta.json", os.O_RDONLY)
size = len(os.read(fd, 1 << 20))
subprocess.run(["rm", "fa/side.md"], check=True)
seen = set()
end = time.monotonic() + 2.5
while time.monotonic() < end:
    try:
        seen.add(os.fstat(fd).st_size == size)
    except OSError as e:
        seen.add(e.strerror)
    time.sleep(0.02)
os.close(fd)
print(sorted(map(str, seen)))`);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("['True']\n");
  });

  it("fstat answers the open note's size after another client renamed and then deleted it on the service", async () => {
    expect((await m.sh("printf 'twelve bytes' > fa/svc.md")).code).toBe(0);
    const note = await noteAt(api(), "fa/svc.md");
    const signal = join(m.dirs.base, "fa-ready");
    const script = py(`import os, time
fd = os.open("fa/svc.md", os.O_RDWR)
open(${JSON.stringify(signal)}, "w").close()
out = []
for gone in ("fa/svc.md", "fa/svc2.md"):
    for _ in range(600):
        if not os.path.exists(gone): break
        time.sleep(0.05)
    else:
        out.append("still there: " + gone)
    try:
        out.append(str(os.fstat(fd).st_size))
    except OSError as e:
        out.append(e.strerror)
    if gone == "fa/svc.md":
        open(${JSON.stringify(signal)} + "2", "w").close()
os.close(fd)
print(" ".join(out))`);
    await until(() => existsSync(signal));
    await updateNote(api(), note.id, { name: "svc2.md" });
    await until(() => existsSync(`${signal}2`));
    expect((await api().delete(`/api/v1/files/${note.id}`)).status).toBeLessThan(300);
    const r = await script;
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("12 12\n");
  });
});

describe("a held write the vfs refuses", () => {
  it("is reported at fsync as EFBIG, the errno it was refused with, and nothing of it is kept", async () => {
    expect((await m.sh("printf 'old\\n' > held.md")).code).toBe(0);
    const before = await noteAt(api(), "held.md");
    // fd1's writes are held in C (O_TRUNC: nothing to load); fd2's write past the largest note
    // refuses the open note's save, and with it fd1's next write, which C already answered.
    const r = await py(`import os
fd1 = os.open("held.md", os.O_WRONLY | os.O_TRUNC)
os.write(fd1, b"a")
fd2 = os.open("held.md", os.O_RDWR)
out = []
for step in (lambda: os.pwrite(fd2, b"x", 5 * 1024 * 1024), lambda: os.write(fd1, b"b"), lambda: os.fsync(fd1), lambda: os.close(fd1), lambda: os.close(fd2)):
    try:
        step()
        out.append("ok")
    except OSError as e:
        out.append(e.strerror)
print(out)`);
    expect(r.stderr).toBe("");
    expect(r.stdout).not.toMatch(/Input\/output error/);
    const steps = JSON.parse(r.stdout.replaceAll("'", '"')) as string[];
    expect(steps[0]).toBe("File too large");
    // The held write was answered "ok" by C; the refusal shows at the fsync, as EFBIG.
    expect(steps.slice(1, 3)).toContain("File too large");
    await m.sync();
    expect((await noteAt(api(), "held.md")).etag).toBe(before.etag);
  });
});
