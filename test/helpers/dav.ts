// A real `txtfs dav` in a child process (over `--serve`, or over a service at --url), and a small
// WebDAV client over fetch for the tests: the test process only speaks HTTP to it.
import { type ChildProcess, spawn } from "node:child_process";
import { BIN, ROOT } from "./cli.ts";
import { type MountDirs, txtfsEnv } from "./mount.ts";
import { Api } from "./server.ts";

export interface RunningDav {
  /** Where WebDAV is served, ending in "/". */
  url: string;
  /** The API key clients send (Basic password or bearer). */
  key: string;
  /** The service's URL and an API client on it with the same key. */
  serviceUrl: string;
  api: Api;
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
  /** SIGTERM, wait for the exit (SIGKILL after a grace period). */
  stop(): Promise<number | null>;
  /** SIGKILL and wait: nothing is flushed. */
  kill(): Promise<void>;
  /** A request to the WebDAV server with the key as the Basic password. */
  dav(method: string, path: string, opts?: DavRequestOptions): Promise<DavResponse>;
}

export interface DavRequestOptions {
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send no credential at all. */
  anonymous?: boolean;
}

export interface DavResponse {
  status: number;
  headers: Headers;
  text: string;
}

export function basicAuth(key: string, user = "me"): string {
  return `Basic ${Buffer.from(`${user}:${key}`).toString("base64")}`;
}

export async function davRequest(
  base: string,
  key: string,
  method: string,
  path: string,
  opts: DavRequestOptions = {},
): Promise<DavResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (!opts.anonymous && !("authorization" in headers)) headers.authorization = basicAuth(key);
  const res = await fetch(new URL(path.replace(/^\//, ""), base), { method, headers, body: opts.body });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/**
 * Starts `txtfs dav` (by default `--serve --data dirs.data`) on 127.0.0.1, port 0 unless `--addr`
 * is given, and resolves once it prints where it serves.
 */
export function startDav(
  dirs: MountDirs,
  opts: { args?: string[]; service?: { url: string; key: string } } = {},
): Promise<RunningDav> {
  const args = [
    BIN,
    "dav",
    ...(opts.service ? ["--url", opts.service.url] : ["--serve", "--data", dirs.data]),
    "--cache-dir",
    dirs.cache,
    "--poll-wait",
    "1",
    ...(opts.args?.includes("--addr") ? [] : ["--addr", "127.0.0.1:0"]),
    ...(opts.args ?? []),
  ];
  const env = { ...txtfsEnv(dirs), ...(opts.service ? { TXTFS_API_KEY: opts.service.key } : {}) };
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d) => {
    out += d;
  });
  child.stderr!.on("data", (d) => {
    err += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(killer);
    }
    return child.exitCode;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`txtfs dav did not start:\n${out}\n${err}`));
    }, 30_000);
    const onData = () => {
      const m = /^txtfs dav (\S+)/m.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off("data", onData);
      const serviceUrl = opts.service?.url ?? /^export TXTFS_URL=(\S+)/m.exec(out)![1]!;
      const key = opts.service?.key ?? /^export TXTFS_API_KEY=(\S+)/m.exec(out)![1]!;
      const url = m[1]!;
      resolve({
        url,
        key,
        serviceUrl,
        api: new Api(serviceUrl, key),
        child,
        stdout: () => out,
        stderr: () => err,
        exited,
        stop,
        async kill() {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
          await exited;
        },
        dav: (method, path, o) => davRequest(url, key, method, path, o),
      });
    };
    child.stdout!.on("data", onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`txtfs dav exited with ${code} before serving:\n${out}\n${err}`));
    });
  });
}

/** Polls `check` until it returns a value other than undefined (or the time is up: throws). */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  what: string,
  seconds = 20,
): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface LitmusScore {
  suites: Record<string, { run: number; passed: number }>;
  failures: string[];
  warnings: string[];
  output: string;
}

/** Runs litmus (every suite, -k) against `url` with the key as the password, and reads its summaries. */
export function runLitmus(url: string, key: string, cwd: string): Promise<LitmusScore> {
  return new Promise((resolve) => {
    const child = spawn("litmus", ["-k", url, "litmus", key], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout!.on("data", (d) => {
      output += d;
    });
    child.stderr!.on("data", (d) => {
      output += d;
    });
    child.once("exit", () => {
      const suites: LitmusScore["suites"] = {};
      for (const m of output.matchAll(/summary for `(\w+)': of (\d+) tests run: (\d+) passed/g))
        suites[m[1]!] = { run: Number(m[2]), passed: Number(m[3]) };
      resolve({
        suites,
        failures: [...output.matchAll(/^.*\bFAIL\b.*$/gm)].map((m) => m[0]),
        warnings: [...output.matchAll(/^.*WARNING.*$/gm)].map((m) => m[0]),
        output,
      });
    });
  });
}
