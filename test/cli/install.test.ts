// The package as a user installs it, from a fresh clone (git clone of this repository): npm pack
// builds the JavaScript, `npm install` of the tarball builds the FUSE binding, the installed txtfs
// runs with the system's old Node first on PATH, and scripts/install / --uninstall put in place and
// take away the command, its man page, completions and mount(8) helpers. The clone's downloads
// (node_modules, Node 24 in .tools) are this checkout's, linked: scripts/setup would fetch the same.
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.ts";
import { lacking } from "../helpers/kernel.ts";
import { isMounted, lazyUnmount, q, sh } from "../helpers/mount.ts";

const base = mkdtempSync("/var/tmp/txtfs-install-");
const clone = join(base, "clone");
// A user's shell: the system's Node (older than 22.13 on this machine) first on PATH.
const SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
const NETWORK_ENV = [
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "npm_config_cafile",
  "https_proxy",
  "HTTPS_PROXY",
  "http_proxy",
  "HTTP_PROXY",
  "no_proxy",
  "NO_PROXY",
];
const userEnv = (extra: NodeJS.ProcessEnv = {}) => ({
  PATH: SYSTEM_PATH,
  HOME: base,
  // npm's cache of this machine (the packages come from the registry through it).
  npm_config_cache: process.env.npm_config_cache ?? join(homedir(), ".npm"),
  // How this machine reaches the registry (its certificates, its proxy), as a user's shell has it.
  ...Object.fromEntries(NETWORK_ENV.flatMap((k) => (process.env[k] ? [[k, process.env[k]]] : []))),
  TXTFS_CONFIG: join(base, "config"),
  TXTFS_CACHE: join(base, "cache"),
  TXTFS_DATA: join(base, "data"),
  ...extra,
});
const run = (cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) =>
  spawnSync(cmd, args, { cwd: opts.cwd, env: opts.env ?? userEnv(), encoding: "utf8", timeout: 400_000 });

let tarball = "";
let nodePath = "";

beforeAll(() => {
  execFileSync("git", ["clone", "--quiet", ROOT, clone]);
  for (const d of ["node_modules", ".tools"])
    if (existsSync(join(ROOT, d))) symlinkSync(join(ROOT, d), join(clone, d));
  // scripts/setup in the clone (quiet when nothing is missing): builds its own binding, prints PATH.
  const setup = run(join(clone, "scripts", "setup"), ["--print-path"]);
  expect(setup.status, setup.stderr).toBe(0);
  nodePath = setup.stdout.trim().split("\n").pop()!;
  const pack = run("npm", ["pack", "--silent", "--pack-destination", base], {
    cwd: clone,
    env: { ...userEnv(), PATH: nodePath },
  });
  expect(pack.status, pack.stderr).toBe(0);
  tarball = join(base, pack.stdout.trim().split("\n").pop()!);
}, 600_000);

afterAll(() => rmSync(base, { recursive: true, force: true }), 300_000);

describe.skipIf(process.platform !== "linux")("the installed package", { timeout: 600_000 }, () => {
  it("holds JavaScript and the binding's sources, no TypeScript", () => {
    const list = run("tar", ["-tzf", tarball]).stdout.split("\n");
    expect(list).toContain("package/dist/cli/main.js");
    expect(list).toContain("package/dist/cli/main.js.map");
    expect(list).toContain("package/dist/server/pages/playgroundInit.js");
    expect(list).toContain("package/native/fuse3/binding.gyp");
    expect(list.filter((f) => f.endsWith(".ts") && !f.startsWith("package/clients/"))).toEqual([]);
  });

  it("npm install --prefix DIR of the tarball: DIR/node_modules/.bin/txtfs runs, built binding included", () => {
    const dir = join(base, "local");
    const inst = run(
      "npm",
      ["install", "--prefix", dir, "--prefer-offline", "--no-audit", "--no-fund", tarball],
      {
        env: { ...userEnv(), PATH: `${nodePath}` },
      },
    );
    expect(inst.status, inst.stderr).toBe(0);
    const pkg = join(dir, "node_modules", "txtfs");
    expect(existsSync(join(pkg, "native", "fuse3", "build", "Release", "txtfs_fuse3.node"))).toBe(true);
    // The system's Node 20 first on PATH: the launcher runs on the Node the package was installed with.
    const help = run(join(dir, "node_modules", ".bin", "txtfs"), ["--help"]);
    expect(help.stderr).toBe("");
    expect(help.stdout).toMatch(/^Usage: txtfs \[options\] \[command\]/);
    expect(help.status).toBe(0);
  });

  it("without libfuse3's headers the install stops with one clear message", () => {
    // pkg-config that knows no fuse3: as on a machine without libfuse3-dev.
    const fake = join(base, "nofuse");
    execFileSync("mkdir", ["-p", fake]);
    execFileSync("bash", [
      "-c",
      `printf '#!/bin/sh\\ncase "$1" in --version) echo 1;; *) exit 1;; esac\\n' > ${q(join(fake, "pkg-config"))} && chmod +x ${q(join(fake, "pkg-config"))}`,
    ]);
    const inst = run(
      "npm",
      [
        "install",
        "--prefix",
        join(base, "nofuse-prefix"),
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        tarball,
      ],
      {
        env: { ...userEnv(), PATH: `${fake}:${nodePath}` },
      },
    );
    expect(inst.status).not.toBe(0);
    expect(inst.stderr).toContain(
      "txtfs: cannot build the FUSE binding (native/fuse3), which txtfs mount needs: libfuse3's headers are missing.",
    );
    expect(inst.stderr).toContain("apt-get install libfuse3-dev fuse3");
  });

  let daemon: ChildProcess | undefined;
  afterAll(async () => {
    if (daemon && daemon.exitCode === null) {
      daemon.kill("SIGTERM");
      await new Promise((r) => daemon!.once("exit", r));
    }
    const mnt = join(base, "mnt");
    if (isMounted(mnt)) await lazyUnmount(mnt);
  }, 60_000);

  it("scripts/install --prefix puts txtfs, man page, completions, mount helpers in place, the installed txtfs mounts; --uninstall takes them away", async () => {
    const prefix = join(base, "prefix");
    const inst = run(join(clone, "scripts", "install"), ["--prefix", prefix, "--from", tarball]);
    expect(inst.status, inst.stderr).toBe(0);
    expect(inst.stderr).not.toMatch(/\n\s+at |npm (ERR|error)/);
    expect(inst.stderr).toMatch(
      /\[install\] installed 0\.1\.0 as .*\/prefix\/bin\/txtfs; uninstall: scripts\/install --uninstall --prefix /,
    );
    const txtfs = join(prefix, "bin", "txtfs");
    expect(run(txtfs, ["--version"]).stdout).toBe("0.1.0\n");
    expect(readFileSync(join(prefix, "share", "man", "man1", "txtfs.1"), "utf8")).toMatch(/^\.TH TXTFS 1/);
    expect(readFileSync(join(prefix, "share", "bash-completion", "completions", "txtfs"), "utf8")).toMatch(
      /complete -F/,
    );
    expect(existsSync(join(prefix, "share", "zsh", "site-functions", "_txtfs"))).toBe(true);
    expect(existsSync(join(prefix, "share", "fish", "vendor_completions.d", "txtfs.fish"))).toBe(true);
    const helper = readFileSync(join(prefix, "sbin", "mount.fuse.txtfs"), "utf8");
    expect(helper).toContain(`exec "${txtfs}" mount-helper "$@"`);
    // man finds the page under the prefix.
    const man = run("man", ["-M", join(prefix, "share", "man"), "-P", "cat", "txtfs"]);
    if (man.error === undefined && man.status === 0) expect(man.stdout).toMatch(/txtfs/);

    // The installed txtfs mounts, saves and unmounts, with the system's old Node first on PATH.
    if (!lacking("fuse")) {
      const mnt = join(base, "mnt");
      execFileSync("mkdir", ["-p", mnt]);
      daemon = spawn(txtfs, ["mount", mnt, "--serve"], { env: userEnv(), stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      daemon.stdout!.on("data", (b) => {
        out += b;
      });
      daemon.stderr!.on("data", (b) => {
        out += b;
      });
      for (const deadline = Date.now() + 60_000; !/^mounted /m.test(out) && Date.now() < deadline; )
        await new Promise((r) => setTimeout(r, 50));
      expect(out).toMatch(/^mounted /m);
      const w = await sh(`echo installed > ${q(join(mnt, "i.md"))} && cat ${q(join(mnt, "i.md"))}`);
      expect(w.stdout).toBe("installed\n");
      const synced = run(txtfs, ["sync"]);
      expect(synced.stdout).toBe(`${mnt}: every save is on the service\n`);
      const un = run(txtfs, ["unmount", mnt]);
      expect(un.status, un.stderr).toBe(0);
      expect(isMounted(mnt)).toBe(false);
    }

    const rm = run(join(clone, "scripts", "install"), ["--uninstall", "--prefix", prefix]);
    expect(rm.status, rm.stderr).toBe(0);
    expect(existsSync(txtfs)).toBe(false);
    expect(existsSync(join(prefix, "lib", "node_modules", "txtfs"))).toBe(false);
    expect(existsSync(join(prefix, "share", "man", "man1", "txtfs.1"))).toBe(false);
    expect(existsSync(join(prefix, "sbin", "mount.fuse.txtfs"))).toBe(false);
    const left = (d: string): string[] =>
      readdirSync(d, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? left(join(d, e.name)) : [join(d, e.name)],
      );
    expect(left(prefix)).toEqual([]);
  });
});
