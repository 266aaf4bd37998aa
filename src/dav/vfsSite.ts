// The site `txtfs dav` serves: the vfs, with locks and dead properties kept in its cache dir.
import { join } from "node:path";
import type { Vfs } from "../vfs/vfs.ts";
import { DeadProps } from "./deadProps.ts";
import { FileLockKeeper } from "./locks.ts";
import type { KeptSite } from "./request.ts";
import { VfsBackend } from "./vfsBackend.ts";

export function vfsSite(vfs: Vfs, cacheDir: string): KeptSite {
  return {
    backend: new VfsBackend(vfs),
    locks: new FileLockKeeper(join(cacheDir, "dav", "locks.json")),
    props: new DeadProps(join(cacheDir, "dav", "properties.json")),
  };
}
