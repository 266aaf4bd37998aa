// Local-only files (editor swap and temp files, backups, anything not .md/.txt): kept in the cache
// dir, never uploaded, listed in a manifest so they survive a restart of the daemon.
import { randomUUID } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { LocalNode } from "./tree.ts";

export interface ManifestEntry {
  path: string;
  blob: string;
  mode: number;
  mtimeMs: number;
  ghostOf?: LocalNode["ghostOf"];
}

export class LocalFiles {
  readonly dir: string;
  private readonly manifest: string;
  private saving: Promise<void> = Promise.resolve();

  constructor(cacheDir: string) {
    this.dir = join(cacheDir, "local");
    this.manifest = join(cacheDir, "local.json");
  }

  async init(): Promise<ManifestEntry[]> {
    await mkdir(this.dir, { recursive: true });
    try {
      return JSON.parse(await readFile(this.manifest, "utf8")) as ManifestEntry[];
    } catch {
      return [];
    }
  }

  newBlob(): string {
    return join(this.dir, randomUUID());
  }

  /** Writes the manifest atomically; calls are serialised so the last state always wins. */
  save(entries: () => ManifestEntry[]): Promise<void> {
    this.saving = this.saving.then(async () => {
      const tmp = `${this.manifest}.tmp`;
      await writeFile(tmp, JSON.stringify(entries()));
      await rename(tmp, this.manifest);
    });
    return this.saving;
  }

  async removeBlob(blob: string): Promise<void> {
    await rm(blob, { force: true });
  }
}
