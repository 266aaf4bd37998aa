// Runs the real `txtfs` binary as a child process.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const ROOT = join(import.meta.dirname, "..", "..");
export const BIN = join(ROOT, "bin", "txtfs");

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runTxtfs(args: string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, ...env }, timeout: 30_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
  /** Stops the child (SIGTERM, then SIGKILL after a grace period) if it still runs. */
  stop(): Promise<number | null>;
}

/** Starts `txtfs serve` and resolves once it prints its URL. */
const TEST_VAULT_KEY = Buffer.alloc(32, 7).toString("base64");

export function spawnServe(args: string[]): Promise<ServeProcess> {
  // Without --data, a throwaway data dir (a PostgreSQL-backed server still keeps its vault key
  // there), never the developer's own.
  const data = args.includes("--data") ? undefined : mkdtempSync(join(tmpdir(), "txtfs-serve-"));
  // Servers sharing a PostgreSQL database share one vault key, as a deployment must.
  const shared = args.some((a) => a.startsWith("postgres")) ? { TXTFS_VAULT_KEY: TEST_VAULT_KEY } : {};
  const child = spawn(process.execPath, [BIN, "serve", "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...(data ? { TXTFS_DATA: data } : {}), ...shared },
  });
  let out = "";
  let err = "";
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      if (data) rmSync(data, { recursive: true, force: true });
      resolve(code);
    }),
  );
  child.stdout!.on("data", (d) => {
    out += d;
  });
  child.stderr!.on("data", (d) => {
    err += d;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}\n${err}`)), 20_000);
    const onData = () => {
      const m = /^txtfs (http:\/\/\S+)/m.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off("data", onData);
      resolve({
        child,
        url: m[1]!,
        stdout: () => out,
        stderr: () => err,
        exited,
        async stop() {
          if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
          child.kill("SIGTERM");
          const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
          const code = await exited;
          clearTimeout(killer);
          return code;
        },
      });
    };
    child.stdout!.on("data", onData);
    void exited.then((code) => reject(new Error(`serve exited with ${code}:\n${out}\n${err}`)));
  });
}

/** `txtfs serve` on DATA (and PORT), with the key it printed for its first user (none on a restart). */
export async function spawnServeWithKey(data: string, port = "0"): Promise<ServeProcess & { key: string }> {
  const s = await spawnServe(["--data", data, "--port", port]);
  await new Promise((r) => setTimeout(r, 200)); // the first-key lines follow the URL line
  const key = /TXTFS_API_KEY=(txt_\w+)/.exec(s.stdout())?.[1] ?? "";
  return Object.assign(s, { key });
}

export interface LoginProcess {
  child: ChildProcess;
  /** The authorization URL the CLI printed. */
  authUrl: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Starts `txtfs login --no-browser` and resolves with the sign-in URL it prints. */
export function spawnLogin(args: string[], env: NodeJS.ProcessEnv): Promise<LoginProcess> {
  const child = spawn(process.execPath, [BIN, "login", "--no-browser", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let out = "";
  let err = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  child.stdout!.on("data", (d) => {
    out += d;
  });
  child.stderr!.on("data", (d) => {
    err += d;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`login printed no URL:\n${out}\n${err}`));
    }, 20_000);
    const onData = () => {
      const m = /^(http:\/\/\S+\/auth\?\S+)$/m.exec(err);
      if (!m) return;
      clearTimeout(timer);
      resolve({ child, authUrl: m[1]!, stdout: () => out, stderr: () => err, exited });
    };
    child.stderr!.on("data", onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`login exited with ${code}:\n${out}\n${err}`));
    });
  });
}
