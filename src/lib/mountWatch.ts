// Notices when a mount ends without us: `umount DIR` (without the umount helper), `fusermount -u`,
// the kernel. Reads /proc/self/mountinfo, never the mount itself (the daemon must not access its own
// mount: a FUSE deadlock).
import { readFileSync } from "node:fs";

const unescapeMountinfo = (s: string) =>
  s.replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));

/** Whether `dir` is a mountpoint in this process's mount namespace. */
export function isMountpoint(dir: string): boolean {
  try {
    return readFileSync("/proc/self/mountinfo", "utf8")
      .split("\n")
      .some((line) => unescapeMountinfo(line.split(" ")[4] ?? "") === dir);
  } catch {
    return true; // cannot tell: assume it is still there
  }
}

/** Calls `gone()` once `dir` stops being a mountpoint; returns a stop function. */
export function watchMountpoint(dir: string, gone: () => void, everyMs = 1000): () => void {
  const timer = setInterval(() => {
    if (isMountpoint(dir)) return;
    clearInterval(timer);
    gone();
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
