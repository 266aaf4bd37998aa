// A note named by its path in a mount (`~/txtfs/ideas/a.md`, or `a.md` typed inside the mount)
// is the same note as its account path (`ideas/a.md`): commands that name notes take both.
import { relative, resolve } from "node:path";
import { listMounts, type MountRecord } from "../lib/mountRegistry.ts";

export interface InMount {
  mount: MountRecord;
  /** The path inside the mount: the note's account path ("" for the mount's root). */
  inner: string;
}

/** The txtfs mount of this user holding `path` (resolved against the working directory), if any. */
export function mountHolding(path: string, mounts: MountRecord[] = listMounts()): InMount | undefined {
  const abs = resolve(path);
  // The innermost mount when one is mounted inside another's directory.
  const mount = mounts
    .filter((m) => abs === m.mountpoint || abs.startsWith(`${m.mountpoint}/`))
    .sort((a, b) => b.mountpoint.length - a.mountpoint.length)[0];
  return mount ? { mount, inner: relative(mount.mountpoint, abs) } : undefined;
}
