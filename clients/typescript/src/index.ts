// txtfs client: zero dependencies (global fetch only), for Node >= 20, Deno, Bun and browsers.
// Types come from the server's OpenAPI document (./openapi.ts, generated); this file is the small
// hand-written core that does what clients get wrong: bearer auth, ETag caching with
// If-None-Match, If-Match on writes, Idempotency-Key on every mutation with retries on 429/503
// honouring Retry-After, cursor paging and the change feed as async iterators, typed errors.
// Erasable TypeScript only: the server serves it as JavaScript with the types stripped.
import type { components, operations } from "./openapi.ts";

type Schemas = components["schemas"];
export type TxtFile = Schemas["TxtFile"];
export type TxtFileDetail = Schemas["TxtFileDetail"];
export type TxtFolder = Schemas["TxtFolder"];
export type ChangeRecord = Schemas["ChangeRecord"];
export type TxtComment = Schemas["TxtComment"];
export type TxtSuggestion = Schemas["TxtSuggestion"];
export type TxtVersion = Schemas["TxtVersion"];
export type TxtShare = Schemas["TxtShare"];
export type ErrorBody = Schemas["Error"];

type Op = keyof operations;
type JsonOf<R> = R extends { content: { "application/json": infer B } } ? B : never;
/** The JSON body of an operation's response with this status. */
export type ResponseOf<O extends Op, S extends number> = S extends keyof operations[O]["responses"]
  ? JsonOf<operations[O]["responses"][S]>
  : never;
/** The JSON request body of an operation. */
export type RequestOf<O extends Op> = operations[O] extends {
  requestBody: { content: { "application/json": infer B } };
}
  ? B
  : never;

export interface ClientOptions {
  /** The service, e.g. http://127.0.0.1:8080 (no trailing slash needed). */
  baseUrl: string;
  /** An API key (txt_...) or an OAuth access token. */
  token?: string;
  /** Retries of 429/503/network failures for retry-safe requests (default 3). */
  retries?: number;
  /** Longest wait between retries, in ms (default 30 s). */
  maxRetryDelayMs?: number;
  /** Defaults to globalThis.fetch. */
  fetch?: typeof fetch;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  json?: unknown;
  /** A text body (upload); sent with `contentType`. */
  text?: string;
  contentType?: string;
  headers?: Record<string, string>;
  /** Idempotency-Key for a mutation; one is generated when omitted (pass `false` for none). */
  idempotencyKey?: string | false;
  signal?: AbortSignal;
}

export interface Response<T> {
  status: number;
  headers: Headers;
  body: T;
}

/** An error answer of the API: the spec's error body, plus the status and Retry-After. */
export class TxtfsError extends Error {
  readonly status: number;
  readonly code: string;
  readonly resolution: string;
  readonly requestId: string;
  readonly details: unknown;
  /** Seconds, when the server sent Retry-After. */
  readonly retryAfter: number | undefined;

  constructor(
    status: number,
    body: Partial<ErrorBody["error"]> & { details?: unknown },
    retryAfter?: number,
  ) {
    super(body.message ?? `HTTP ${status}`);
    this.name = "TxtfsError";
    this.status = status;
    this.code = body.code ?? "http_error";
    this.resolution = body.resolution ?? "";
    this.requestId = body.requestId ?? "";
    this.details = body.details;
    this.retryAfter = retryAfter;
  }
}

const MUTATIONS = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

function randomKey(): string {
  const c = globalThis.crypto;
  if (typeof c?.randomUUID === "function") return c.randomUUID();
  const bytes = c.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export class Txtfs {
  readonly baseUrl: string;
  private readonly token: string | undefined;
  private readonly retries: number;
  private readonly maxRetryDelayMs: number;
  private readonly fetchImpl: typeof fetch;
  /** Last seen ETag and body per file id: reads revalidate with If-None-Match. */
  private readonly cache = new Map<string, { etag: string; file: TxtFileDetail }>();

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.token = options.token;
    this.retries = options.retries ?? 3;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** Any request. Throws TxtfsError for an error answer; 304 is returned, not thrown. */
  async request<T = unknown>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<Response<T>> {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(options.query ?? {})) {
      if (v !== undefined) url.searchParams.set(k, String(v));
    }
    const headers: Record<string, string> = { ...options.headers };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    let body: string | undefined;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers["content-type"] = "application/json";
    } else if (options.text !== undefined) {
      body = options.text;
      headers["content-type"] = options.contentType ?? "text/plain; charset=utf-8";
    }
    // The same key on every attempt: a retried mutation is applied once (the server replays).
    const mutation = MUTATIONS.has(method);
    if (mutation && options.idempotencyKey !== false) {
      headers["idempotency-key"] = options.idempotencyKey ?? randomKey();
    }
    const retrySafe = !mutation || headers["idempotency-key"] !== undefined;
    for (let attempt = 0; ; attempt++) {
      let res: globalThis.Response;
      try {
        res = await this.fetchImpl(url, { method, headers, body, signal: options.signal });
      } catch (err) {
        if (options.signal?.aborted || !retrySafe || attempt >= this.retries) throw err;
        await sleep(this.backoff(attempt), options.signal);
        continue;
      }
      const retryAfter = res.headers.has("retry-after") ? Number(res.headers.get("retry-after")) : undefined;
      if ((res.status === 429 || res.status === 503) && retrySafe && attempt < this.retries) {
        await res.body?.cancel();
        const wait =
          retryAfter !== undefined && Number.isFinite(retryAfter) ? retryAfter * 1000 : this.backoff(attempt);
        await sleep(Math.min(wait, this.maxRetryDelayMs), options.signal);
        continue;
      }
      const type = res.headers.get("content-type") ?? "";
      const text = res.status === 304 ? "" : await res.text();
      const parsed = type.includes("json") && text ? JSON.parse(text) : text;
      if (res.status >= 400) {
        throw new TxtfsError(res.status, (parsed as { error?: ErrorBody["error"] })?.error ?? {}, retryAfter);
      }
      return { status: res.status, headers: res.headers, body: parsed as T };
    }
  }

  private backoff(attempt: number): number {
    return Math.min(250 * 2 ** attempt * (1 + Math.random()), this.maxRetryDelayMs);
  }

  // --- Files ---

  /** One page of files (metadata only). */
  async list(query: { limit?: number; cursor?: string; folderId?: string } = {}) {
    return (await this.request<ResponseOf<"list", 200>>("GET", "/api/v1/files", { query })).body;
  }

  /** Every file, page by page (`for await (const f of client.files())`). */
  async *files(query: { limit?: number; folderId?: string } = {}): AsyncGenerator<TxtFile> {
    let cursor: string | undefined;
    do {
      const page = await this.list({ ...query, cursor });
      yield* page.files;
      cursor = page.hasMore && page.nextCursor ? page.nextCursor : undefined;
    } while (cursor);
  }

  /** One file with its content; revalidated with If-None-Match when read before (304 -> cached). */
  async read(id: string): Promise<TxtFileDetail> {
    const cached = this.cache.get(id);
    const res = await this.request<TxtFileDetail>("GET", `/api/v1/files/${encodeURIComponent(id)}`, {
      headers: cached ? { "if-none-match": cached.etag } : {},
    });
    if (res.status === 304 && cached) return cached.file;
    this.remember(res.body, res.headers.get("etag"));
    return res.body;
  }

  /** The file's text. */
  async raw(id: string): Promise<string> {
    return (await this.request<string>("GET", `/api/v1/files/${encodeURIComponent(id)}/raw`)).body;
  }

  async create(input: RequestOf<"create">, options: Pick<RequestOptions, "idempotencyKey"> = {}) {
    const res = await this.request<ResponseOf<"create", 201>>("POST", "/api/v1/files", {
      ...options,
      json: input,
    });
    this.remember(res.body.file, res.headers.get("etag"));
    return res.body.file;
  }

  /** Create a file from text (`name` decides txt or md). */
  async upload(name: string, text: string, options: { folderId?: string; contentType?: string } = {}) {
    const res = await this.request<ResponseOf<"upload", 201>>("POST", "/api/v1/files/upload", {
      query: { name, folderId: options.folderId },
      text,
      contentType: options.contentType ?? (name.endsWith(".md") ? "text/markdown" : "text/plain"),
    });
    return res.body.file;
  }

  /**
   * Update content or metadata. `ifMatch`: an ETag, or `true` for the one this client last saw
   * (412 TxtfsError if the file changed since: re-read, merge, retry).
   */
  async write(id: string, patch: RequestOf<"write">, options: { ifMatch?: string | true } = {}) {
    const etag = options.ifMatch === true ? this.cache.get(id)?.etag : options.ifMatch;
    if (options.ifMatch === true && !etag) throw new Error(`no ETag known for ${id}: read it first`);
    const res = await this.request<ResponseOf<"write", 200>>(
      "PUT",
      `/api/v1/files/${encodeURIComponent(id)}`,
      {
        json: patch,
        headers: etag ? { "if-match": etag } : {},
      },
    );
    this.remember(res.body.file, res.headers.get("etag"));
    return res.body.file;
  }

  /** Read, change and write back with If-Match, retrying when someone else saved in between. */
  async update(id: string, change: (file: TxtFileDetail) => RequestOf<"write">, attempts = 3) {
    for (let i = 1; ; i++) {
      const file = await this.read(id);
      try {
        return await this.write(id, change(file), { ifMatch: file.etag });
      } catch (err) {
        if (!(err instanceof TxtfsError && err.status === 412) || i >= attempts) throw err;
        this.cache.delete(id);
      }
    }
  }

  async unlink(id: string, options: { ifMatch?: string } = {}) {
    const res = await this.request<ResponseOf<"unlink", 200>>(
      "DELETE",
      `/api/v1/files/${encodeURIComponent(id)}`,
      {
        headers: options.ifMatch ? { "if-match": options.ifMatch } : {},
      },
    );
    this.cache.delete(id);
    return res.body;
  }

  // --- Folders, connections, collaboration ---

  async readdir(id = "root") {
    return (
      await this.request<ResponseOf<"readdir", 200>>("GET", `/api/v1/folders/${encodeURIComponent(id)}`)
    ).body;
  }

  async mkdir(input: RequestOf<"mkdir">) {
    return (await this.request<ResponseOf<"mkdir", 201>>("POST", "/api/v1/folders", { json: input })).body
      .folder;
  }

  async connect(id: string, targetFileId: string, reason?: string) {
    const path = `/api/v1/files/${encodeURIComponent(id)}/connections`;
    return (await this.request<ResponseOf<"connect", 200>>("POST", path, { json: { targetFileId, reason } }))
      .body;
  }

  async related(id: string) {
    const path = `/api/v1/files/${encodeURIComponent(id)}/connections`;
    return (await this.request<ResponseOf<"connections", 200>>("GET", path)).body.connections;
  }

  async comment(id: string, input: RequestOf<"comment">) {
    const path = `/api/v1/files/${encodeURIComponent(id)}/comments`;
    return (await this.request<ResponseOf<"comment", 201>>("POST", path, { json: input })).body.comment;
  }

  async suggest(id: string, input: RequestOf<"suggest">) {
    const path = `/api/v1/files/${encodeURIComponent(id)}/suggestions`;
    return (await this.request<ResponseOf<"suggest", 201>>("POST", path, { json: input })).body.suggestion;
  }

  async share(input: RequestOf<"share">) {
    return (await this.request<ResponseOf<"share", 201>>("POST", "/api/v1/shares", { json: input })).body
      .share;
  }

  // --- The change feed ---

  /** One page of changes after `cursor` (0 = everything); `wait` long-polls up to that many seconds. */
  async changes(
    query: { cursor?: number | string; limit?: number; wait?: number } = {},
    signal?: AbortSignal,
  ) {
    return (await this.request<ResponseOf<"changes", 200>>("GET", "/api/v1/changes", { query, signal })).body;
  }

  /**
   * Follows the feed: yields every change from `cursor` on, long-polling when caught up, until
   * `signal` aborts. Keep `client.cursor` to resume later.
   */
  async *follow(
    options: { cursor?: number; wait?: number; signal?: AbortSignal } = {},
  ): AsyncGenerator<ChangeRecord> {
    let cursor = options.cursor ?? 0;
    const wait = options.wait ?? 30;
    while (!options.signal?.aborted) {
      let page: Awaited<ReturnType<Txtfs["changes"]>>;
      try {
        page = await this.changes({ cursor, wait }, options.signal);
      } catch (err) {
        if (options.signal?.aborted) return;
        throw err;
      }
      for (const change of page.changes) {
        cursor = change.seq;
        yield change;
      }
      cursor = page.cursor;
      this.cursor = cursor;
    }
  }

  /** The feed position `follow` reached. */
  cursor = 0;

  private remember(file: TxtFileDetail, etag: string | null) {
    if (etag ?? file.etag) this.cache.set(file.id, { etag: etag ?? file.etag, file });
  }
}

export default Txtfs;
