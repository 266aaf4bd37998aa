// Where a mount keeps its journal, local-only files and caches, and which port `--serve` listens on.
// Both must outlive a restart: a journal in a cache dir the next start does not look in is a lost
// save (a mount keyed by a random `--serve` port found 0 of 100 notes after a kill -9), and the
// TXTFS_URL it printed must stay valid for the scripts that use it.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

/**
 * The cache dir of a mount: keyed by the service's identity — its data dir with `--serve` (never
 * its port), its URL otherwise — and the mountpoint (two mounts never share a journal).
 */
export function mountCacheDir(
  root: string,
  service: { serveData?: string; url: string },
  mountpoint: string,
): string {
  const identity = service.serveData
    ? `serve:${resolve(service.serveData)}`
    : service.url.replace(/\/+$/, "");
  return join(
    root,
    createHash("sha256")
      .update(`${identity}\n${resolve(mountpoint)}`)
      .digest("hex")
      .slice(0, 16),
  );
}

const portFile = (data: string) => join(data, "serve.port");

/** The port `--serve` listened on last time for this data dir (0: none yet, pick one). */
export function rememberedPort(data: string): number {
  try {
    const port = Number(readFileSync(portFile(data), "utf8").trim());
    return Number.isInteger(port) && port > 0 && port < 65536 ? port : 0;
  } catch {
    return 0;
  }
}

export function rememberPort(data: string, port: number): void {
  writeFileSync(portFile(data), `${port}\n`, { mode: 0o600 });
}
