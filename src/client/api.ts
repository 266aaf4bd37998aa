// Typed client of the txtfs HTTP API over one keep-alive pool. Used by the mount and the CLI; it
// imports nothing from the server. Every call has a deadline, so a dead server is an error, never a hang.
import {
  type ChangeRecord,
  LISTING_LINES_HEADER,
  type TxtComment,
  type TxtFile,
  type TxtFileDetail,
  type TxtFolder,
  type TxtSuggestion,
  type TxtVersion,
} from "../lib/apiTypes.ts";
import type { Logger } from "../lib/logger.ts";
import { AttachmentCalls } from "./attachments.ts";
import { HttpPool, type HttpResponse } from "./http.ts";
import { ListingSplitter } from "./listingStream.ts";

export type { ChangeRecord, TxtFile, TxtFileDetail, TxtFolder };

/** A file detail without its body: the listing record. */
export function withoutContent(detail: TxtFile & { content?: string }): TxtFile {
  const { content: _content, ...meta } = detail;
  return meta as TxtFile;
}

/** The service answered with an error body. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;

  constructor(status: number, code: string, message: string, details?: unknown) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/**
 * What a create's Idempotency-Key made when it went before with other bytes (its answer lost, then
 * sent again changed): the service's 422 `idempotency_key_reused` names it (`details.original`, the
 * first answer's body: `{ file }`, `{ attachment }`).
 */
export function madeBefore<T extends { id: string }>(
  err: unknown,
  record: "file" | "attachment",
): T | undefined {
  if (!(err instanceof ApiError && err.status === 422 && err.code === "idempotency_key_reused"))
    return undefined;
  const original = (err.details as { original?: { status?: number; body?: Record<string, T> } } | undefined)
    ?.original;
  const made = original?.status === 201 ? original.body?.[record] : undefined;
  return made?.id ? made : undefined;
}

/** The service could not be reached in time (refused, reset, timed out). */
export class NetworkError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "NetworkError";
  }
}

export interface ClientOptions {
  url: string;
  key: string;
  /** Per-request deadline in ms (a program reading through the mount waits at most this per request). */
  timeoutMs?: number;
  /** Recorded as the `source` of versions this client writes. */
  source?: string;
  connections?: number;
  /**
   * Request tracing at debug level (`--trace`, TXTFS_LOG_LEVEL=debug): method, path without its
   * query, status, duration and sizes. Never bodies nor query strings: they hold note text and names.
   */
  logger?: Logger;
}

export interface Call {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  json?: unknown;
  /** A body of bytes sent exactly (an attachment's), as application/octet-stream. */
  raw?: Buffer;
  headers?: Record<string, string>;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** A change pushed with POST /api/v1/sync (a subset of the batch operations). */
export interface SyncPushItem {
  /** Unique in the request; a later item names the folder an earlier one creates as `{ ref: id }`. */
  id: string;
  op: "file.create" | "file.update" | "file.append" | "file.delete" | "folder.create" | "folder.delete";
  target?: string;
  /** The ETag the change is based on: never applied over a newer remote version. */
  baseEtag?: string;
  body?: {
    content?: string;
    name?: string;
    folderId?: FolderRef;
    parentFolderId?: FolderRef;
    context?: string;
    tags?: string[];
  };
}

/** A folder's id, null for the root, or the id of an earlier item of the same request creating it. */
export type FolderRef = string | null | { ref: string };

export interface SyncPushResult {
  id: string;
  status: number;
  body?: { file?: TxtFile; folder?: TxtFolder };
  error?: { code: string };
  conflict?: { reason: "changed_remotely" | "deleted_remotely" };
}

/** `GET /api/v1/files/f_01H...?x=1` -> `GET /api/v1/files/:id`: ids and queries left out. */
export function requestKind(method: string, path: string): string {
  const route = (path.split("?")[0] ?? "")
    .split("/")
    .map((part) => (/^[a-z]{1,3}_[0-9A-Za-z]{8,}$/.test(part) ? ":id" : part))
    .join("/");
  return `${method} ${route}`;
}

/**
 * How long a write waits for its answer unless told otherwise (bulk syncs too): the service may take
 * long on a large unit of work or a slow disk, and a write given up on may have been applied anyway
 * (sending it again only adds load). A folder made here went up alone and took 16.5 s to answer:
 * with the 10 s of reads, the `mv` waiting for it failed with EIO (test/mount/faults.test.ts).
 */
const WRITE_TIMEOUT_MS = 60_000;

export class TxtfsClient {
  private readonly pool: HttpPool;
  private key: string;
  private readonly timeoutMs: number;
  private readonly source: string;
  private readonly log: Logger | undefined;
  /** Requests sent, for status output and benchmarks. */
  requests = 0;
  /** Requests by kind, e.g. `GET /api/v1/files/:id` (`txtfs status --json`). */
  readonly requestsByKind: Record<string, number> = {};
  /** Bytes of the request bodies sent and of the answers read (`txtfs status --json`). */
  bytesSent = 0;
  bytesReceived = 0;
  /** The attachments' calls (an extension of the spec: every file that is not a note). */
  readonly attachments: AttachmentCalls;
  /**
   * When bytes of an answer last came from the service (performance.now(): monotonic ms, 0: never):
   * a wait measures the service's silence by it, not the time a slow answer takes, and no wall
   * clock set back or forward moves it (whileAnswering.ts).
   */
  answeredAt = 0;

  /** How long a read waits for its answer: how long the service may be silent before it counts as gone. */
  get readDeadlineMs(): number {
    return this.timeoutMs;
  }

  /**
   * Asks the service for any answer at once: its liveness probe (no account, not rate limited; a
   * service without one answers 404, an answer all the same). Never the feed: a page read here
   * would be one its follower did not ask for.
   */
  async probe(): Promise<void> {
    await this.call({ method: "GET", path: "/healthz" }).catch((err: unknown) => {
      if (!(err instanceof ApiError)) throw err;
    });
  }

  /** Swaps the credential (a refreshed OAuth access token) for the following requests. */
  setKey(key: string): void {
    this.key = key;
  }

  constructor(opts: ClientOptions) {
    this.pool = new HttpPool(opts.url, opts.connections ?? 8, () => {
      this.answeredAt = performance.now();
    });
    this.key = opts.key;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.source = opts.source ?? "api";
    this.log = opts.logger?.isLevelEnabled("debug") ? opts.logger : undefined;
    this.attachments = new AttachmentCalls({
      call: (c, consume) => this.call(c, consume),
      received: (bytes) => {
        this.bytesReceived += bytes;
      },
    });
  }

  private trace(c: Call, started: number, status: number | string, sent: number, received: number): void {
    this.bytesSent += sent;
    this.bytesReceived += received;
    this.log?.debug(
      { method: c.method, path: c.path.split("?")[0], status, ms: Date.now() - started, sent, received },
      "request",
    );
  }

  /**
   * `consume`: reads a successful answer's body instead of it being kept as text (`text` is then
   * what it returns).
   */
  private async call(
    c: Call,
    consume?: (body: AsyncIterable<Buffer>, headers: HttpResponse["headers"]) => Promise<string>,
  ): Promise<{ status: number; headers: Record<string, string>; text: string }> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.key}`,
      "x-txtfs-source": this.source,
      ...c.headers,
    };
    let body: string | Buffer | undefined;
    if (c.json !== undefined) {
      body = JSON.stringify(c.json);
      headers["content-type"] = "application/json";
    } else if (c.raw !== undefined) {
      body = c.raw;
      headers["content-type"] = "application/octet-stream";
    }
    this.requests++;
    const kind = requestKind(c.method, c.path);
    this.requestsByKind[kind] = (this.requestsByKind[kind] ?? 0) + 1;
    const started = Date.now();
    const deadline =
      c.timeoutMs ?? (c.method === "GET" ? this.timeoutMs : Math.max(this.timeoutMs, WRITE_TIMEOUT_MS));
    let res: HttpResponse;
    let text: string;
    try {
      res = await this.pool.request({
        method: c.method,
        path: c.path,
        headers,
        body,
        signal: c.signal
          ? AbortSignal.any([c.signal, AbortSignal.timeout(deadline)])
          : AbortSignal.timeout(deadline),
      });
      text = consume && res.statusCode < 400 ? await consume(res.body, res.headers) : await res.text();
    } catch (err) {
      const sent = body === undefined ? 0 : Buffer.byteLength(body);
      this.trace(c, started, (err as { code?: string }).code ?? "network_error", sent, 0);
      throw new NetworkError(`${c.method} ${c.path.split("?")[0]}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    this.trace(
      c,
      started,
      res.statusCode,
      body === undefined ? 0 : Buffer.byteLength(body),
      Buffer.byteLength(text),
    );
    const flat: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k] = String(v);
    if (res.statusCode >= 400) {
      let code = "http_error";
      let message = text;
      let details: unknown;
      try {
        const e = JSON.parse(text).error;
        code = e.code;
        message = e.message;
        details = e.details;
      } catch {}
      throw new ApiError(res.statusCode, code, message, details);
    }
    return { status: res.statusCode, headers: flat, text };
  }

  private async json<T>(c: Call): Promise<T> {
    return JSON.parse((await this.call(c)).text) as T;
  }

  /** Flat metadata index of everything visible, and the feed position it corresponds to. */
  flatIndex(): Promise<{
    files: TxtFile[];
    folders: TxtFolder[];
    cursor: number;
    owners?: { id: string; email: string; name: string }[];
    /** The key's scopes (absent from a service older than this field). */
    scopes?: string[];
  }> {
    return this.json({ method: "GET", path: "/api/me/files", timeoutMs: 60_000 });
  }

  /**
   * The same listing, its files handed to `onFiles` in batches as they arrive and left out of
   * the result: the listing of 100,000 notes is never held whole (see listingStream.ts).
   */
  async flatIndexInBatches(onFiles: (files: TxtFile[]) => void): Promise<{
    folders: TxtFolder[];
    cursor: number;
    owners?: { id: string; email: string; name: string }[];
    /** The key's scopes (absent from a service older than this field). */
    scopes?: string[];
  }> {
    let rest: unknown;
    let received = 0;
    await this.call({ method: "GET", path: "/api/me/files", timeoutMs: 60_000 }, async (body, headers) => {
      const splitter = new ListingSplitter(onFiles as (files: unknown[]) => void, {
        lines: headers[LISTING_LINES_HEADER] === "lines",
      });
      for await (const chunk of body) {
        received += chunk.length;
        splitter.push(chunk);
      }
      rest = splitter.end();
      this.bytesReceived += received; // (the few bytes of this placeholder are counted too)
      return `(${received} bytes read in batches)`;
    });
    return rest as {
      folders: TxtFolder[];
      cursor: number;
      owners?: { id: string; email: string; name: string }[];
    };
  }

  /** `include: "attachments"`: attachments' records too (kind `attachment`, docs/api.md). */
  changes(cursor: number, waitSeconds = 0, limit = 1000, signal?: AbortSignal, include?: "attachments") {
    const also = include ? `&include=${include}` : "";
    return this.json<{ changes: ChangeRecord[]; cursor: number; hasMore: boolean }>({
      method: "GET",
      path: `/api/v1/changes?cursor=${cursor}&limit=${limit}&wait=${waitSeconds}${also}`,
      timeoutMs: waitSeconds * 1000 + this.timeoutMs,
      signal,
    });
  }

  /** Conditional read: `null` when `etag` is still current (304, no body moved). */
  async readFile(id: string, etag?: string): Promise<TxtFileDetail | null> {
    const res = await this.call({
      method: "GET",
      path: `/api/v1/files/${id}`,
      headers: etag ? { "if-none-match": etag } : {},
    });
    return res.status === 304 ? null : (JSON.parse(res.text) as TxtFileDetail);
  }

  /** A folder with all its direct files, bodies included: one request instead of one per file. */
  readFolderWithBodies(id: string): Promise<TxtFolder & { files: (TxtFile & { content: string })[] }> {
    return this.json({ method: "GET", path: `/api/me/folders/${id}` });
  }

  async createFile(
    body: {
      name: string;
      content?: string;
      folderId?: string | null;
      fileType?: "txt" | "md";
      context?: string;
      tags?: string[];
    },
    idempotencyKey?: string,
  ): Promise<TxtFileDetail> {
    const headers: Record<string, string> = idempotencyKey ? { "idempotency-key": idempotencyKey } : {};
    return (
      await this.json<{ file: TxtFileDetail }>({ method: "POST", path: "/api/v1/files", json: body, headers })
    ).file;
  }

  async updateFile(
    id: string,
    patch: Record<string, unknown>,
    opts: { ifMatch?: string; idempotencyKey?: string } = {},
  ): Promise<TxtFileDetail> {
    const headers: Record<string, string> = {};
    if (opts.ifMatch) headers["if-match"] = opts.ifMatch;
    if (opts.idempotencyKey) headers["idempotency-key"] = opts.idempotencyKey;
    return (
      await this.json<{ file: TxtFileDetail }>({
        method: "PUT",
        path: `/api/v1/files/${id}`,
        json: patch,
        headers,
      })
    ).file;
  }

  async deleteFile(id: string, ifMatch?: string): Promise<void> {
    await this.call({
      method: "DELETE",
      path: `/api/v1/files/${id}`,
      headers: ifMatch ? { "if-match": ifMatch } : {},
    });
  }

  async createFolder(
    body: { name: string; parentFolderId: string | null },
    idempotencyKey?: string,
  ): Promise<TxtFolder> {
    const headers: Record<string, string> = idempotencyKey ? { "idempotency-key": idempotencyKey } : {};
    return (
      await this.json<{ folder: TxtFolder }>({ method: "POST", path: "/api/v1/folders", json: body, headers })
    ).folder;
  }

  async updateFolder(id: string, patch: Record<string, unknown>): Promise<TxtFolder> {
    return (
      await this.json<{ folder: TxtFolder }>({ method: "PUT", path: `/api/v1/folders/${id}`, json: patch })
    ).folder;
  }

  async deleteFolder(id: string): Promise<void> {
    await this.call({ method: "DELETE", path: `/api/v1/folders/${id}` });
  }

  connections(id: string) {
    return this.json<{
      connections: {
        file: TxtFile;
        score: number;
        reasons: ({ type: string; reason?: string } & Record<string, unknown>)[];
      }[];
    }>({
      method: "GET",
      path: `/api/v1/files/${id}/connections`,
    });
  }

  async connect(id: string, targetFileId: string, reason: string): Promise<void> {
    await this.call({
      method: "POST",
      path: `/api/v1/files/${id}/connections`,
      json: { targetFileId, reason },
    });
  }

  async disconnect(id: string, targetFileId: string): Promise<void> {
    await this.call({
      method: "DELETE",
      path: `/api/v1/files/${id}/connections?targetFileId=${encodeURIComponent(targetFileId)}`,
    });
  }

  /** The note's links and embeds in the order written, each with the note it names (null: none). */
  fileLinks(id: string) {
    return this.json<{
      fileId: string;
      links: { text: string; path: string; embed: boolean; resolved: boolean; targetFileId: string | null }[];
    }>({ method: "GET", path: `/api/me/files/${id}/links` });
  }

  /** The links naming the note (up to 1000; `hasMore` when there are more). */
  fileBacklinks(id: string) {
    return this.json<{
      fileId: string;
      backlinks: { fileId: string; text: string; path: string; embed: boolean }[];
      hasMore: boolean;
    }>({ method: "GET", path: `/api/me/files/${id}/backlinks` });
  }

  /** One page of the account's unresolved links, by note then position. */
  unresolvedLinks(cursor?: string) {
    const query = `limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    return this.json<{
      links: {
        fileId: string;
        name: string;
        folderId: string | null;
        text: string;
        path: string;
        embed: boolean;
      }[];
      nextCursor: string | null;
      hasMore: boolean;
    }>({ method: "GET", path: `/api/me/links/unresolved?${query}` });
  }

  // ---------------------------------------------------------------- history, search, comments (.txtfs/)

  /** A note's versions, newest first, without bodies (one page of up to 1000: every version kept). */
  versions(id: string) {
    return this.json<{ fileId: string; currentVersion: number; versions: TxtVersion[]; hasMore: boolean }>({
      method: "GET",
      path: `/api/v1/files/${id}/versions?limit=1000`,
    });
  }

  async version(id: string, n: number): Promise<TxtVersion & { content: string }> {
    return (
      await this.json<{ version: TxtVersion & { content: string } }>({
        method: "GET",
        path: `/api/v1/files/${id}/versions/${n}`,
      })
    ).version;
  }

  /** The service's restore: version `n`'s text becomes a new current version (If-Match guards the note). */
  async restoreVersion(id: string, n: number, ifMatch?: string): Promise<TxtFileDetail> {
    return (
      await this.json<{ file: TxtFileDetail }>({
        method: "POST",
        path: `/api/v1/files/${id}/versions/${n}/restore`,
        headers: ifMatch ? { "if-match": ifMatch } : {},
      })
    ).file;
  }

  /** Labels the current version. */
  async commitVersion(id: string, label: string): Promise<TxtVersion> {
    return (
      await this.json<{ version: TxtVersion }>({
        method: "POST",
        path: `/api/v1/files/${id}/versions`,
        json: { label },
      })
    ).version;
  }

  /** Ranked full-text search over every note the caller can read. */
  search(q: string, limit: number) {
    return this.json<{ results: { file: TxtFile; score: number }[] }>({
      method: "GET",
      path: `/api/v1/search?q=${encodeURIComponent(q)}&limit=${limit}`,
    });
  }

  async comments(id: string): Promise<TxtComment[]> {
    return (
      await this.json<{ comments: TxtComment[] }>({ method: "GET", path: `/api/v1/files/${id}/comments` })
    ).comments;
  }

  async suggestions(id: string, status: "pending"): Promise<TxtSuggestion[]> {
    return (
      await this.json<{ suggestions: TxtSuggestion[] }>({
        method: "GET",
        path: `/api/v1/files/${id}/suggestions?status=${status}`,
      })
    ).suggestions;
  }

  async comment(
    id: string,
    body: { body: string; selection_start: number; selection_end: number; selected_text: string },
  ): Promise<TxtComment> {
    return (
      await this.json<{ comment: TxtComment }>({
        method: "POST",
        path: `/api/v1/files/${id}/comments`,
        json: body,
      })
    ).comment;
  }

  /**
   * POST /api/v1/sync: push changes (edits with their base ETags; each applied on its own), pull
   * since `cursor`. With `idempotencyKey`, a retry after a lost answer replays it.
   */
  sync(
    body: { cursor: number | "latest"; deviceId?: string; push: SyncPushItem[] },
    idempotencyKey?: string,
  ) {
    return this.json<{
      pushResults: SyncPushResult[];
      cursor: number;
    }>({
      method: "POST",
      path: "/api/v1/sync",
      json: body,
      headers: idempotencyKey ? { "idempotency-key": idempotencyKey } : {},
      timeoutMs: 60_000,
    });
  }

  // ---------------------------------------------------------------- devices (sync clients)

  async registerDevice(body: {
    name: string;
    platform: string;
    clientName?: string;
    clientVersion?: string;
  }) {
    return (
      await this.json<{ device: { id: string; name: string } }>({
        method: "POST",
        path: "/api/v1/devices",
        json: body,
      })
    ).device;
  }

  /** The device, or null when it is gone (removed, or registered on another service). */
  async getDevice(id: string): Promise<{ id: string; name: string } | null> {
    try {
      return (
        await this.json<{ device: { id: string; name: string } }>({
          method: "GET",
          path: `/api/v1/devices/${id}`,
        })
      ).device;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return null;
      throw err;
    }
  }

  /** The states set explicitly for this device (folders and files). */
  async deviceStates(id: string): Promise<
    {
      fileId?: string;
      folderId?: string;
      attachmentId?: string;
      state: "online-only" | "available" | "pinned";
    }[]
  > {
    return (
      await this.json<{
        items: {
          fileId?: string;
          folderId?: string;
          attachmentId?: string;
          state: "online-only" | "available" | "pinned";
        }[];
      }>({
        method: "GET",
        path: `/api/v1/devices/${id}/state`,
        timeoutMs: 60_000,
      })
    ).items;
  }

  async setDeviceState(
    id: string,
    items: {
      fileId?: string;
      folderId?: string;
      attachmentId?: string;
      state: "online-only" | "available" | "pinned";
    }[],
  ): Promise<void> {
    await this.call({ method: "PUT", path: `/api/v1/devices/${id}/state`, json: { items } });
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  /** Ends every connection now, without waiting for requests in flight (a daemon exiting: nothing is). */
  async destroy(): Promise<void> {
    await this.pool.destroy();
  }
}
