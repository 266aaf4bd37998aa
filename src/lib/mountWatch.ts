// What is mounted at a directory, from /proc/self/mountinfo: never by touching the directory (the
// daemon must not access its own mount: a FUSE deadlock; an automount point would be triggered).
import { readFileSync } from "node:fs";

const unescapeMountinfo = (s: string) =>
  s.replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));

export interface MountAt {
  fstype: string;
  source: string;
  /** The st_dev of the mount as the kernel reports it, "MAJOR:MINOR" (a FUSE mount's minor is its connection). */
  device: string;
}

export const isFuseType = (fstype: string) => fstype === "fuse" || fstype.startsWith("fuse.");

/** The mounts stacked on `dir` in this mount namespace, lowest first (null: cannot tell). */
export function mountsAt(dir: string): MountAt[] | null {
  let text: string;
  try {
    text = readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return null;
  }
  const out: MountAt[] = [];
  for (const line of text.split("\n")) {
    const fields = line.split(" ");
    const dash = fields.indexOf("-");
    if (dash < 0 || unescapeMountinfo(fields[4] ?? "") !== dir) continue;
    out.push({
      fstype: fields[dash + 1] ?? "",
      source: unescapeMountinfo(fields[dash + 2] ?? ""),
      device: fields[2] ?? "",
    });
  }
  return out;
}

/**
 * An automount point (`x-systemd.automount` in fstab): systemd's autofs mount waits on `dir`, and
 * the first access to it starts the mount — this one, so any look at it would wait for itself.
 */
export const isAutomountPoint = (dir: string) => (mountsAt(dir) ?? []).some((m) => m.fstype === "autofs");

/** Calls `gone()` once no FUSE mount is left on `dir`; returns a stop function. */
export function watchMountpoint(dir: string, gone: () => void, everyMs = 1000): () => void {
  const timer = setInterval(() => {
    const mounts = mountsAt(dir);
    if (!mounts || mounts.some((m) => isFuseType(m.fstype))) return;
    clearInterval(timer);
    gone();
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
