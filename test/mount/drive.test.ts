// A drive behaves like a drive: symlinks, mode bits and folder times, through a real mount with
// real programs (ln, readlink, stat, chmod, touch, git, cp -a, tar, rsync), kept across a remount.
// Symlinks and modes are this device's (the service has neither): never uploaded, listed by status.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTxtfs } from "../helpers/cli.ts";
import { flatIndex, type MountFixture, mountFixture, noteAt, txtfsEnv } from "../helpers/mount.ts";

let m: MountFixture;

beforeAll(async () => {
  m = mountFixture();
  await m.start();
});
afterAll(() => m?.close());

const ok = async (script: string) => {
  const r = await m.sh(`set -e\n${script}`);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return r.stdout;
};

describe("symlinks", () => {
  it("ln -s makes a symlink: readlink, lstat (S_IFLNK, size = target length), the kernel follows it to a note", async () => {
    const out = await ok(
      [
        "mkdir -p sl && cd sl",
        "echo 'hello note' > a.md",
        "ln -s a.md link",
        "ln -s ../nowhere/x dangling.md",
        "readlink link dangling.md",
        "stat -c '%F %s %a' link dangling.md",
        "cat link",
        "test -L dangling.md && ! test -e dangling.md && echo dangling",
        "ls -l link | cut -c1",
      ].join("\n"),
    );
    expect(out.split("\n")).toEqual([
      "a.md",
      "../nowhere/x",
      "symbolic link 4 777",
      "symbolic link 12 777",
      "hello note",
      "dangling",
      "l",
      "",
    ]);
    // Never a note on the service (a symlink named like a note included); listed by status.
    const names = (await flatIndex(m.current.api)).files.map((f) => f.name);
    expect(names).toContain("a.md");
    expect(names).not.toContain("dangling.md");
    expect(names).not.toContain("link");
    // The mount's record (what status reads) is rewritten every 2 s.
    let status = "";
    for (let i = 0; i < 60 && !status.includes("sl/link"); i++) {
      await new Promise((r) => setTimeout(r, 250));
      status = (await runTxtfs(["status"], txtfsEnv(m.dirs))).stdout;
    }
    expect(status).toContain("local-only: /sl/link (a symbolic link: the service has none)");
  });

  it("rename and unlink of a symlink, a symlink renamed over a note and a note over a symlink", async () => {
    const out = await ok(
      [
        "mkdir -p sr && cd sr",
        "echo one > one.md && echo two > two.md",
        "ln -s one.md l1 && mv l1 l1.md && readlink l1.md",
        "ln -s one.md l2 && mv l2 two.md && readlink two.md && cat two.md",
        "ln -s one.md l3 && echo three > three.md && mv three.md l3 && cat l3 && test ! -L l3 && echo plain",
        "ln -s one.md gone && rm gone && ! test -L gone && echo removed",
        "ls",
      ].join("\n"),
    );
    expect(out.split("\n")).toEqual([
      "one.md",
      "one.md",
      "one",
      "three",
      "plain",
      "removed",
      "l1.md",
      "l3",
      "one.md",
      "two.md",
      "",
    ]);
    // two.md is a symlink now: the note of that name is gone from the service; one.md is intact
    // (three.md renamed to a name that is not a note's stays bound to it, as a backup would).
    const files = (await flatIndex(m.current.api)).files.map((f) => f.name);
    expect(files).not.toContain("two.md");
    expect((await noteAt(m.current.api, "sr/one.md")).content).toBe("one\n");
  });

  it("a hard link is refused with EPERM and nothing changes", async () => {
    const r = await m.sh("mkdir -p hl && echo x > hl/a.md && ln hl/a.md hl/b.md; echo $?; ls hl");
    expect(r.stdout).toBe("1\na.md\n");
    expect(r.stderr).toContain("Operation not permitted");
  });

  it("git checks out a repository with a symlink; cp -a, tar x and rsync -a copy symlinks", async () => {
    const src = `${m.dirs.base}/src`;
    const out = await ok(
      [
        `rm -rf ${src} && mkdir -p ${src}/repo && cd ${src}/repo`,
        "git init -q . && git config user.email t@t && git config user.name t",
        "echo readme > README.md && ln -s README.md LINK.md && mkdir d && ln -s ../README.md d/up",
        "git add -A && git commit -qm init",
        `cd ${m.dirs.mnt}`,
        `git clone -q ${src}/repo cloned`,
        "readlink cloned/LINK.md cloned/d/up && cat cloned/d/up",
        "git -C cloned status --porcelain",
        "cp -a cloned/d cpa && readlink cpa/up",
        `tar -C ${src}/repo -cf ${src}/t.tar LINK.md d && mkdir tx && tar -C tx -xf ${src}/t.tar && readlink tx/LINK.md tx/d/up`,
        `rsync -a ${src}/repo/d/ rs/ && readlink rs/up`,
        `rsync -a --dry-run -i ${src}/repo/d/ rs/`,
        "echo done",
      ].join("\n"),
    );
    expect(out).toBe(
      [
        "README.md",
        "../README.md",
        "readme",
        "../README.md",
        "README.md",
        "../README.md",
        "../README.md",
        "done",
        "",
      ].join("\n"),
    );
  });

  it("symlinks survive a remount", async () => {
    await ok("mkdir -p keep && ln -s ../sl/a.md keep/to-a && ln -s /etc/hostname keep/abs");
    await m.remount();
    const out = await ok("readlink keep/to-a keep/abs && cat keep/to-a && stat -c %s keep/to-a");
    expect(out).toBe("../sl/a.md\n/etc/hostname\nhello note\n10\n");
  });
});

describe("fifos, sockets, device nodes", () => {
  it("mkfifo makes a fifo the kernel pipes through; a socket binds; a device node is kept but not opened (nodev)", async () => {
    const out = await ok(
      [
        "mkdir -p sp && cd sp",
        "mkfifo pipe.md && stat -c '%F %a' pipe.md",
        "(echo through > pipe.md &) && cat pipe.md",
        `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.bind('sock')" && stat -c %F sock`,
        "mknod null c 1 3 && stat -c '%F %t %T' null",
        "! cat null 2>/dev/null && echo refused",
        "mv pipe.md p2 && stat -c %F p2",
      ].join("\n"),
    );
    expect(out).toBe("fifo 644\nthrough\nsocket\ncharacter special file 1 3\nrefused\nfifo\n");
    expect((await flatIndex(m.current.api)).files.map((f) => f.name)).not.toContain("pipe.md");
    await m.remount();
    expect(await ok("stat -c '%F %t %T' sp/p2 sp/null")).toBe("fifo 0 0\ncharacter special file 1 3\n");
  });
});

describe("owners", () => {
  it("chown keeps an owner per device (notes, folders, local files, links), across a remount", async () => {
    const out = await ok(
      [
        "mkdir -p ow/d && cd ow && echo x > n.md && echo l > l.sh && ln -s n.md ln",
        "chown 1234:5678 n.md d l.sh && chown -h 42:43 ln && chown :99 n.md",
        "stat -c '%u:%g' n.md d l.sh ln",
      ].join("\n"),
    );
    expect(out).toBe("1234:99\n1234:5678\n1234:5678\n42:43\n");
    await m.remount();
    expect(await ok("stat -c '%u:%g' ow/n.md ow/d ow/l.sh ow/ln")).toBe(out);
    expect((await noteAt(m.current.api, "ow/n.md")).content).toBe("x\n");
  });
});

describe("modes", () => {
  it("chmod +x keeps the bit on a note, a local file and a folder: ./script.sh runs; stat shows it", async () => {
    const out = await ok(
      [
        "mkdir -p md && cd md",
        "printf '#!/bin/sh\\necho ran\\n' > script.md",
        "printf '#!/bin/sh\\necho local\\n' > run.sh",
        "chmod +x script.md run.sh && ./script.md && ./run.sh",
        "chmod 600 script.md && stat -c %a script.md run.sh",
        "mkdir sub && chmod 700 sub && stat -c %a sub",
        "chmod 751 . && stat -c %a .",
      ].join("\n"),
    );
    expect(out).toBe("ran\nlocal\n600\n755\n700\n751\n");
    // The content is untouched on the service.
    expect((await noteAt(m.current.api, "md/script.md")).content).toBe("#!/bin/sh\necho ran\n");
  });

  it("a created note and folder keep the mode they were made with", async () => {
    const out = await ok(
      "mkdir -p mc && cd mc && (umask 077 && echo x > private.md && mkdir priv) && install -m 755 /dev/null tool.md && stat -c %a private.md priv tool.md",
    );
    expect(out).toBe("600\n700\n755\n");
  });

  it("modes survive a remount (kept per device in the cache dir)", async () => {
    await ok(
      "mkdir -p mr/f && echo x > mr/n.md && chmod 700 mr/n.md && chmod 750 mr/f && echo l > mr/l.sh && chmod 711 mr/l.sh",
    );
    await m.remount();
    expect(await ok("stat -c %a mr/n.md mr/f mr/l.sh")).toBe("700\n750\n711\n");
  });
});

describe("folder times", () => {
  it("touch -d sets a folder's time; it is kept across a remount", async () => {
    const out = await ok("mkdir -p ft/in && touch -d @1577836800 ft/in ft && stat -c %Y ft ft/in");
    expect(out).toBe("1577836800\n1577836800\n");
    await m.remount();
    expect(await ok("stat -c %Y ft ft/in")).toBe("1577836800\n1577836800\n");
    // A change inside moves it on, as on a disk.
    const moved = await ok("echo x > ft/in/new.md && stat -c %Y ft/in");
    expect(Number(moved.trim())).toBeGreaterThan(1577836800);
  });

  it("a second rsync -a of an unchanged tree sends nothing (folder times and note times kept)", async () => {
    const src = `${m.dirs.base}/rsrc`;
    await ok(
      `rm -rf ${src} && mkdir -p ${src}/a/b ${src}/c && echo 1 > ${src}/a/one.md && echo 2 > ${src}/a/b/two.md && echo 3 > ${src}/c/x.sh && chmod 755 ${src}/c/x.sh && touch -d @1600000000 ${src}/a/b ${src}/a ${src}/c ${src}`,
    );
    await ok(`rsync -a ${src}/ rsd/`);
    expect(await ok(`rsync -a --dry-run -i ${src}/ rsd/`)).toBe("");
    await m.remount();
    expect(await ok(`rsync -a --dry-run -i ${src}/ rsd/`)).toBe("");
  });
});

describe("renames", () => {
  it("a folder renamed over an empty folder keeps its inode number, as a file does", async () => {
    const out = await ok(
      "mkdir -p rn/x rn/y/b rn/y/c && stat -c %i rn/x rn/y/b > before && mv -T rn/x rn/y/b && stat -c %i rn/y/b && head -1 before && echo f > rn/f.md && echo g > rn/g.md && stat -c %i rn/f.md && mv rn/f.md rn/g.md && stat -c %i rn/g.md && rm before",
    );
    const [moved, was, file, over] = out.trim().split("\n");
    expect(moved).toBe(was);
    // (a rename over a note: the kernel's node is the renamed file's, the note keeps its identity)
    expect(over).toBe(file);
  });
});

describe("-o umask", () => {
  it("is applied on top of every mode shown (a link stays 0777); what is kept does not change", async () => {
    await ok("mkdir -p um && echo x > um/n.md && chmod 775 um/n.md && ln -sf n.md um/l");
    await m.remount({ args: ["-o", "umask=027"] });
    expect(await ok("stat -c '%a %n' um/n.md um/l um")).toBe("750 um/n.md\n777 um/l\n750 um\n");
    await m.remount();
    expect(await ok("stat -c '%a %n' um/n.md um/l um")).toBe("775 um/n.md\n777 um/l\n755 um\n");
  });
});
