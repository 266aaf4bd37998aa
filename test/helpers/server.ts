// A real txtfs server on loopback over a throwaway store, plus a small fetch client. The store is
// SQLite, or a fresh PostgreSQL database when the test runs in the `postgres` vitest project.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "../../src/lib/logger.ts";
import { createKey, createUser } from "../../src/server/domain/accounts.ts";
import type { RateLimitConfig } from "../../src/server/http/rateLimit.ts";
import { type RunningServer, type ServeOptions, startServer } from "../../src/server/serve.ts";
import type { WebhookOptions } from "../../src/server/webhookWorker.ts";
import { ContractChecker } from "./contract.ts";
import { createDatabase, dropDatabase } from "./pgCluster.ts";
import { testPgUrl } from "./storeUnderTest.ts";

export interface TestUser {
  id: string;
  email: string;
  key: string;
  api: Api;
}

export interface TestServer {
  url: string;
  server: RunningServer;
  dataDir: string;
  /** The PostgreSQL database of this server (postgres project only). */
  db: string | undefined;
  /** Creates a user with a key (all scopes unless given). */
  user(email?: string, scopes?: string[]): Promise<TestUser>;
  /** Checks every response the test clients receive against the server's OpenAPI document. */
  contract: ContractChecker;
  /** A client with any bearer token (or none). */
  client(token?: string): Api;
  close(): Promise<void>;
}

let counter = 0;

export async function startTestServer(
  opts: {
    rateLimit?: Partial<RateLimitConfig>;
    webhooks?: Partial<WebhookOptions>;
    devIdp?: ServeOptions["devIdp"];
    identity?: ServeOptions["identity"];
    db?: string;
    brain?: ServeOptions["brain"];
    trustProxy?: ServeOptions["trustProxy"];
    metrics?: ServeOptions["metrics"];
    usageFlushMs?: number;
    attachments?: ServeOptions["attachments"];
  } = {},
): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "txtfs-test-"));
  const pgUrl = testPgUrl();
  // A database of our own is dropped at close; one passed in belongs to the caller.
  const ownDb = !opts.db && pgUrl ? await createDatabase(pgUrl) : undefined;
  const db = opts.db ?? ownDb;
  const server = await startServer({
    host: "127.0.0.1",
    port: 0,
    dataDir,
    db,
    rateLimit: opts.rateLimit ?? { limit: 1_000_000, anonymousLimit: 1_000_000 },
    retentionDays: 90,
    logger: createLogger("test", "warn"),
    webhooks: opts.webhooks,
    devIdp: opts.devIdp,
    identity: opts.identity,
    brain: opts.brain,
    trustProxy: opts.trustProxy,
    metrics: opts.metrics,
    usageFlushMs: opts.usageFlushMs,
    attachments: opts.attachments,
  });
  // In-process, so loading it costs no request (rate-limit tests count every one).
  const contract = new ContractChecker(server.openapi());
  return {
    url: server.url,
    server,
    dataDir,
    db,
    contract,
    async user(email = `user${++counter}@example.com`, scopes?: string[]) {
      const { user, secret } = await server.store.transaction(async (tx) => {
        const u = await createUser(tx, email, `User ${counter}`);
        const k = await createKey(tx, u.id, { label: "test", scopes });
        return { user: u, secret: k.secret };
      });
      return { id: user.id, email: user.email, key: secret, api: new Api(server.url, secret, contract) };
    },
    client: (token?: string) => new Api(server.url, token, contract),
    async close() {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
      if (ownDb) await dropDatabase(ownDb);
      contract.assertClean();
    },
  };
}

export interface Res<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export class Api {
  readonly base: string;
  readonly token: string | undefined;
  readonly contract: ContractChecker | undefined;

  constructor(base: string, token?: string, contract?: ContractChecker) {
    this.base = base;
    this.token = token;
    this.contract = contract;
  }

  async request<T = any>(
    method: string,
    path: string,
    opts: { json?: unknown; body?: string; headers?: Record<string, string> } = {},
  ): Promise<Res<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    if (this.token && !("authorization" in headers)) headers.authorization = `Bearer ${this.token}`;
    let body: string | undefined = opts.body;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers["content-type"] ??= "application/json";
    }
    const res = await fetch(this.base + path, { method, headers, body });
    const text = await res.text();
    this.contract?.check(method, path, res.status, res.headers, text);
    let parsed: any = text;
    if ((res.headers.get("content-type") ?? "").includes("json") && text) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }

  get<T = any>(path: string, headers?: Record<string, string>) {
    return this.request<T>("GET", path, { headers });
  }
  post<T = any>(path: string, json?: unknown, headers?: Record<string, string>) {
    return this.request<T>("POST", path, { json, headers });
  }
  put<T = any>(path: string, json?: unknown, headers?: Record<string, string>) {
    return this.request<T>("PUT", path, { json, headers });
  }
  delete<T = any>(path: string, headers?: Record<string, string>) {
    return this.request<T>("DELETE", path, { headers });
  }
}

/** Asserts the spec's error body and returns it. */
export function expectError(res: Res, status: number, code: string) {
  if (res.status !== status || res.body?.error?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${res.status} ${res.text}`);
  }
  const e = res.body.error;
  for (const field of ["code", "message", "resolution", "requestId"]) {
    if (typeof e[field] !== "string" || !e[field]) throw new Error(`error.${field} missing in ${res.text}`);
  }
  if (e.requestId !== res.headers.get("x-request-id"))
    throw new Error("error.requestId differs from X-Request-ID");
  return e as { code: string; message: string; resolution: string; requestId: string; details?: any };
}

/** Creates a file through the API (asserting 201) and returns its record. */
export async function mkfile(user: TestUser, body: Record<string, unknown>) {
  const res = await user.api.post("/api/v1/files", body);
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
  return res.body.file;
}

/** A note of `owner`'s, shared with `reader` as reader and `writer` as writer. */
export async function mkSharedFile(
  owner: TestUser,
  reader: TestUser,
  writer: TestUser,
  body: Record<string, unknown>,
) {
  const file = await mkfile(owner, body);
  for (const [user, role] of [
    [reader, "reader"],
    [writer, "writer"],
  ] as const) {
    const res = await owner.api.post("/api/v1/shares", { fileId: file.id, email: user.email, role });
    if (res.status !== 201) throw new Error(`share failed: ${res.status} ${res.text}`);
  }
  return file;
}

/** Creates a folder through the API (asserting 201) and returns its record. */
export async function mkdir(user: TestUser, body: Record<string, unknown>) {
  const res = await user.api.post("/api/v1/folders", body);
  if (res.status !== 201) throw new Error(`mkdir failed: ${res.status} ${res.text}`);
  return res.body.folder;
}
