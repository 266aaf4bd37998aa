// A mount daemon's control socket, in its cache dir: `txtfs sync` asks the daemon to deliver every
// pending save and answers once it has (or found the service unreachable, after waiting for it as
// long as it was asked to); `txtfs status --json` asks for its live statistics. One line each way:
// `sync [WAIT_MS]` or `stats`, then the JSON answer.
import { rmSync } from "node:fs";
import { createConnection, createServer, type Server } from "node:net";
import { join } from "node:path";
import type { UnsentCopy } from "./refusedSaves.ts";

export interface SyncResult {
  /** Saves still journalled: 0 means everything written is on the service. */
  pending: number;
  /** Saves the service refused for good since the last sync: where they were and where their bytes are. */
  refused?: { path: string; reason: string; keptAs?: string; at: string }[];
  /** Every refused save whose bytes are still only in a local copy (those above included). */
  unsent?: UnsentCopy[];
  /** Since when the service cannot be reached (null while it answers): why saves wait, with `journal`. */
  unreachableSince?: string | null;
  /** Why the journal cannot be written on this machine (the cache dir's disk full, read-only). */
  journal?: { fault?: { code: string; message: string; path: string; since: string } };
}

export const controlSocketPath = (cacheDir: string) => join(cacheDir, "control.sock");

export async function serveControl(
  cacheDir: string,
  sync: (waitMs: number) => Promise<SyncResult>,
  stats: () => object = () => ({ error: "no statistics" }),
): Promise<Server> {
  const path = controlSocketPath(cacheDir);
  rmSync(path, { force: true }); // left by a daemon that was killed
  const server = createServer((socket) => {
    socket.setEncoding("utf8");
    let line = "";
    socket.on("data", (chunk) => {
      line += chunk;
      if (!line.includes("\n")) return;
      const request = line.trim();
      const wait = /^sync(?: (\d{1,10}))?$/.exec(request);
      const reply: Promise<object> = wait
        ? sync(Number(wait[1] ?? 0))
        : request === "stats"
          ? Promise.resolve().then(stats)
          : Promise.resolve({ error: `unknown request ${JSON.stringify(request)}` });
      void reply.then(
        (r) => socket.end(`${JSON.stringify(r)}\n`),
        (err: Error) => socket.end(`${JSON.stringify({ error: err.message })}\n`),
      );
    });
    socket.on("error", () => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
  server.unref();
  return server;
}

/** The daemon's live statistics (Vfs.metrics), or an error when it does not answer in time. */
export function requestStats(cacheDir: string, timeoutMs = 2000): Promise<Record<string, unknown>> {
  return ask(cacheDir, "stats\n", timeoutMs);
}

/**
 * Asks the daemon to deliver every save. `waitMs`: while the service is unreachable, keep trying
 * that long before answering (0: answer as soon as it is found unreachable).
 */
export function requestSync(cacheDir: string, timeoutMs = 60_000, waitMs = 0): Promise<SyncResult> {
  return ask(cacheDir, waitMs > 0 ? `sync ${Math.round(waitMs)}\n` : "sync\n", timeoutMs);
}

/** One request line, one JSON answer (an `error` in it rejects). */
function ask<T>(cacheDir: string, line: string, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(controlSocketPath(cacheDir));
    let answer = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer from the mount daemon within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    socket.setEncoding("utf8");
    socket.on("connect", () => socket.write(line));
    socket.on("data", (chunk) => {
      answer += chunk;
    });
    socket.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on("end", () => {
      clearTimeout(timer);
      try {
        const parsed = JSON.parse(answer) as T & { error?: string };
        if (parsed.error) reject(new Error(parsed.error));
        else resolve(parsed);
      } catch {
        reject(new Error("the mount daemon closed the control socket without an answer"));
      }
    });
  });
}
