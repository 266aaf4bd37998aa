// What this machine's kernel and sandbox offer, probed once per test file. Machines of one kind
// differ in kernel build (autofs built in on one, absent on the next), so a test that needs such a
// feature asks here first and is skipped with the reason printed, never failed. The README's test
// section lists every test that can skip and why.

import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";

/** Filesystem types the kernel knows now (`/proc/filesystems`), loading a module first when one exists. */
function kernelKnows(fs: string, modules: string[] = [fs]): boolean {
  const known = () =>
    readFileSync("/proc/filesystems", "utf8")
      .split("\n")
      .some((line) => line.split("\t")[1] === fs);
  if (known()) return true;
  for (const m of modules) spawnSync("modprobe", ["-q", m], { stdio: "ignore" });
  return known();
}

function runs(cmd: string, args: string[]): boolean {
  return spawnSync(cmd, args, { stdio: "ignore", timeout: 10_000 }).status === 0;
}

const probes = {
  fuse: () =>
    existsSync("/dev/fuse") && kernelKnows("fuse")
      ? null
      : "no FUSE here (/dev/fuse or fuse in /proc/filesystems)",
  autofs: () =>
    kernelKnows("autofs", ["autofs4", "autofs"])
      ? null
      : `this kernel (${kernelRelease()}) has no autofs (not in /proc/filesystems, no module)`,
  mountNamespace: () =>
    runs("unshare", ["-m", "true"]) ? null : "unshare -m fails here (no CAP_SYS_ADMIN for a mount namespace)",
  overlay: () =>
    kernelKnows("overlay")
      ? null
      : `this kernel (${kernelRelease()}) has no overlayfs (not in /proc/filesystems)`,
  ptrace: () =>
    runs("strace", ["-f", "-o", "/dev/null", "true"]) ? null : "strace cannot trace here (ptrace refused)",
  tmpfs: () =>
    process.getuid?.() === 0 && kernelKnows("tmpfs")
      ? null
      : "mounting a tmpfs needs root and tmpfs in /proc/filesystems",
  ext4Loop: () =>
    process.getuid?.() === 0 &&
    kernelKnows("ext4") &&
    existsSync("/dev/loop-control") &&
    runs("mkfs.ext4", ["-V"]) &&
    runs("e2fsck", ["-V"])
      ? null
      : "an ext4 image on a loop device needs root, ext4, /dev/loop-control, mkfs.ext4 and e2fsck",
} satisfies Record<string, () => string | null>;

export type KernelFeature = keyof typeof probes;

const answers = new Map<KernelFeature, string | null>();

function kernelRelease(): string {
  try {
    return readFileSync("/proc/sys/kernel/osrelease", "utf8").trim();
  } catch {
    return "unknown kernel";
  }
}

/**
 * Why a test needing `features` cannot run here, or undefined when it can. The reason is printed
 * once per file, so a CI log says what was skipped and why; pass it to `it.skipIf` / `describe.skipIf`.
 */
export function lacking(...features: KernelFeature[]): string | undefined {
  for (const f of features) {
    if (!answers.has(f)) {
      // TXTFS_TEST_WITHOUT=autofs,ptrace: act as a machine without them (to see the skips work).
      const pretend = (process.env.TXTFS_TEST_WITHOUT ?? "").split(",").includes(f);
      const why = pretend ? "TXTFS_TEST_WITHOUT says so" : probes[f]();
      answers.set(f, why);
      if (why) process.stderr.write(`[skip] tests needing ${f} are skipped: ${why}\n`);
    }
    const why = answers.get(f);
    if (why) return why;
  }
  return undefined;
}
