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
  private queued: Promise<void> | undefined;

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

  /**
   * Writes the manifest atomically. Calls coalesce: while one write waits its turn, further calls
   * share it (editors save local files many times a second); it reads the state when it runs.
   */
  save(entries: () => ManifestEntry[]): Promise<void> {
    if (this.queued) return this.queued;
    const run = this.saving.then(async () => {
      this.queued = undefined;
      const tmp = `${this.manifest}.tmp`;
      await writeFile(tmp, JSON.stringify(entries()));
      await rename(tmp, this.manifest);
    });
    this.queued = run;
    this.saving = run.catch(() => {});
    return run;
  }

  async removeBlob(blob: string): Promise<void> {
    await rm(blob, { force: true });
  }
}
