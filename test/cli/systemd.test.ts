// The system service: scripts/install-service installs a runnable txtfs and a hardened unit that
// systemd-analyze accepts. (No systemd runs here: the unit is checked, the installed program run.)
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.ts";

const root = mkdtempSync(join(tmpdir(), "txtfs-install-"));
const unitPath = join(root, "etc/systemd/system/txtfs.service");
let install: { status: number | null; stderr: string };

beforeAll(() => {
  const r = spawnSync(join(ROOT, "scripts/install-service"), ["--root", root], { encoding: "utf8" });
  install = { status: r.status, stderr: r.stderr };
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The unit as systemd would see it once installed, pointing into the test root. */
function unitInRoot(dir: string, text = readFileSync(unitPath, "utf8")): string {
  const file = join(dir, "txtfs.service");
  writeFileSync(file, text.replaceAll("/opt/txtfs/", `${root}/opt/txtfs/`));
  return file;
}

describe("scripts/install-service", () => {
  it("installs the program, the unit and its settings file, and verifies the unit", () => {
    expect(install.status, install.stderr).toBe(0);
    expect(install.stderr).toContain("systemd-analyze verify: ok");
    const unit = readFileSync(unitPath, "utf8");
    expect(unit).toMatch(
      /^ExecStart=\/opt\/txtfs\/\S*node \/opt\/txtfs\/bin\/txtfs serve --data \/var\/lib\/txtfs$/m,
    );
    for (const line of [
      "User=txtfs",
      "StateDirectory=txtfs",
      "ProtectSystem=strict",
      "NoNewPrivileges=yes",
      "ProtectHome=yes",
      "PrivateTmp=yes",
      "CapabilityBoundingSet=",
      "EnvironmentFile=-/etc/txtfs/txtfs.env",
    ])
      expect(unit).toContain(`\n${line}\n`);
    expect(readFileSync(join(root, "etc/txtfs/txtfs.env"), "utf8")).toContain("#TXTFS_DB=");
  });

  it("systemd-analyze verify passes the unit cleanly and rejects a broken one", () => {
    const dir = mkdtempSync(join(tmpdir(), "txtfs-unit-"));
    try {
      const ok = spawnSync("systemd-analyze", ["verify", unitInRoot(dir)], { encoding: "utf8" });
      expect(ok.status, ok.stderr).toBe(0);
      expect(ok.stderr.trim()).toBe("");
      const broken = readFileSync(unitPath, "utf8").replace(
        "ExecStart=/opt/txtfs/",
        "ExecStart=/opt/nowhere/",
      );
      const bad = spawnSync("systemd-analyze", ["verify", unitInRoot(dir, broken)], { encoding: "utf8" });
      expect(bad.status).not.toBe(0);
      expect(bad.stderr).toMatch(/not executable|No such file/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the hardening rates as low exposure in systemd-analyze security", () => {
    const dir = mkdtempSync(join(tmpdir(), "txtfs-unit-"));
    try {
      const out = execFileSync("systemd-analyze", ["security", "--offline=true", unitInRoot(dir)], {
        encoding: "utf8",
      });
      const level = Number(/Overall exposure level for txtfs\.service: ([\d.]+)/.exec(out)?.[1]);
      expect(level).toBeLessThanOrEqual(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the installed copy runs without the development dependencies: serve answers /readyz", async () => {
    const unit = readFileSync(unitPath, "utf8");
    const node = root + /^ExecStart=(\S+)/m.exec(unit)![1]!;
    const bin = join(root, "opt/txtfs/bin/txtfs");
    expect(execFileSync(node, [bin, "--version"], { encoding: "utf8" }).trim()).toMatch(/^\d+\.\d+\.\d+$/);
    expect(() =>
      execFileSync(node, ["-e", "require.resolve('vitest')"], {
        cwd: join(root, "opt/txtfs"),
        stdio: "pipe",
      }),
    ).toThrow();
    const data = mkdtempSync(join(tmpdir(), "txtfs-installed-"));
    const { spawn } = await import("node:child_process");
    const child = spawn(node, [bin, "serve", "--port", "0", "--data", data], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (d) => {
          out += d;
          const m = /^txtfs (http:\/\/\S+)/m.exec(out);
          if (m) resolve(m[1]!);
        });
        child.once("exit", (code) => reject(new Error(`serve exited ${code}`)));
      });
      const res = await fetch(`${url}/readyz`);
      expect(res.status).toBe(200);
    } finally {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
      rmSync(data, { recursive: true, force: true });
    }
  }, 30_000);
});
