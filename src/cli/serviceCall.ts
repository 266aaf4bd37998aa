// The service a command talks to (--url/--key, TXTFS_URL/TXTFS_API_KEY, ~/.config/txtfs/config.json,
// or the signed-in identity) and one JSON call to it: progress on stderr while it works, and one
// clear line (status, code, message, resolution) when it fails.
import { readCliConfig } from "./credentials.ts";

export interface Service {
  url: string;
  key: string;
}

export class BrainCliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BrainCliError";
  }
}

export async function service(opts: { url?: string; key?: string }): Promise<Service> {
  // The config file, checked (a malformed one is an error naming it, not silently skipped).
  const saved = await readCliConfig();
  let url = opts.url ?? process.env.TXTFS_URL ?? saved.url;
  let key = opts.key ?? process.env.TXTFS_API_KEY ?? saved.key;
  if (!key) {
    // Loaded when a command runs: `txtfs --help` must not load the client (see main.ts).
    const { currentSignIn } = await import("../client/signIn.ts");
    const signedIn = await currentSignIn().catch(() => null);
    if (signedIn && (!url || url.replace(/\/$/, "") === signedIn.url)) {
      url = signedIn.url;
      key = signedIn.accessToken;
    }
  }
  if (!url || !key) {
    throw new BrainCliError(
      "no service: pass --url and --key (or TXTFS_URL/TXTFS_API_KEY), or sign in with txtfs login",
    );
  }
  return { url: url.replace(/\/$/, ""), key };
}

/** Shows that a model is working (elapsed seconds on a terminal, one line otherwise). */
function progress(what: string): () => void {
  const started = Date.now();
  if (!process.stderr.isTTY) {
    process.stderr.write(`${what}…\n`);
    return () => {};
  }
  const tick = () => process.stderr.write(`\r${what}… ${Math.round((Date.now() - started) / 1000)} s`);
  tick();
  const timer = setInterval(tick, 1000);
  return () => {
    clearInterval(timer);
    process.stderr.write("\r\x1b[K");
  };
}

export async function call<T>(
  svc: Service,
  method: string,
  path: string,
  body?: { json?: unknown; raw?: Buffer; type?: string },
  what?: string,
): Promise<T> {
  const done = what ? progress(what) : () => {};
  try {
    const headers: Record<string, string> = { authorization: `Bearer ${svc.key}`, "x-txtfs-source": "cli" };
    let payload: string | Uint8Array | undefined;
    if (body?.json !== undefined) {
      headers["content-type"] = "application/json";
      payload = JSON.stringify(body.json);
    } else if (body?.raw) {
      headers["content-type"] = body.type ?? "application/octet-stream";
      payload = new Uint8Array(body.raw);
    }
    let res: Response;
    try {
      res = await fetch(svc.url + path, {
        method,
        headers,
        body: payload,
        signal: AbortSignal.timeout(300_000),
      });
    } catch (err) {
      throw new BrainCliError(`cannot reach ${svc.url}: ${(err as Error).message}`);
    }
    const text = await res.text();
    const parsed = text ? JSON.parse(text) : null;
    if (!res.ok) {
      const e = parsed?.error ?? {};
      const retry = res.headers.get("retry-after");
      throw new BrainCliError(
        `${res.status} ${e.code ?? "error"}: ${e.message ?? text}${retry ? ` (retry after ${retry} s)` : ""}${e.resolution ? `\n${e.resolution}` : ""}`,
      );
    }
    return parsed as T;
  } finally {
    done();
  }
}
