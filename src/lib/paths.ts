import { homedir } from "node:os";
import { join } from "node:path";

// XDG base directories, each overridable by its TXTFS_* variable.
const home = homedir();

export function dataDir(): string {
  return process.env.TXTFS_DATA ?? join(process.env.XDG_DATA_HOME || join(home, ".local", "share"), "txtfs");
}

export function configDir(): string {
  return process.env.TXTFS_CONFIG ?? join(process.env.XDG_CONFIG_HOME || join(home, ".config"), "txtfs");
}

export function cacheDir(): string {
  return process.env.TXTFS_CACHE ?? join(process.env.XDG_CACHE_HOME || join(home, ".cache"), "txtfs");
}
