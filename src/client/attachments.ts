// The attachments' calls (an extension of the spec, docs/api.md "Attachments"): any file that is
// not a note, bytes exact. Bodies go and come as bytes, never as text: an image or a file whose
// bytes are not UTF-8 must arrive as it was sent.
import type { TxtAttachment } from "../lib/apiTypes.ts";
import type { Call } from "./api.ts";
import type { HttpResponse } from "./http.ts";

/** What the calls need of the client: one request (errors thrown as ApiError/NetworkError), and a count of bytes read. */
export interface AttachmentTransport {
  call(
    c: Call,
    consume?: (body: AsyncIterable<Buffer>, headers: HttpResponse["headers"]) => Promise<string>,
  ): Promise<{ status: number; headers: Record<string, string>; text: string }>;
  received(bytes: number): void;
}

/** Bytes read of an attachment: all of them, or the part asked for (206). */
export interface AttachmentBytes {
  bytes: Buffer;
  etag: string;
  /** The whole attachment's size (from Content-Range on a part). */
  size: number;
}

const path = (id: string) => `/api/v1/attachments/${encodeURIComponent(id)}`;

/** A kept version of an attachment (`GET /api/v1/attachments/{id}/versions`). */
export interface AttachmentVersion {
  id: string;
  attachmentId: string;
  versionNumber: number;
  contentHash: string;
  byteSize: number;
  source: string;
  createdAt: string;
  current: boolean;
}

/** What one attachment and all of an account's may take (bytes), and what they take now. */
export interface AttachmentLimits {
  maxBytes: number;
  quotaBytes: number;
  usedBytes: number;
}

export class AttachmentCalls {
  private readonly transport: AttachmentTransport;

  constructor(transport: AttachmentTransport) {
    this.transport = transport;
  }

  private async json<T>(c: Call): Promise<T> {
    return JSON.parse((await this.transport.call(c)).text) as T;
  }

  /** One page of the attachments visible (yours and those in folders shared with you). */
  list(opts: { cursor?: string; limit?: number; folderId?: string | "root" } = {}): Promise<{
    attachments: TxtAttachment[];
    nextCursor: string | null;
    hasMore: boolean;
  }> {
    const q = new URLSearchParams();
    if (opts.cursor) q.set("cursor", opts.cursor);
    if (opts.limit) q.set("limit", String(opts.limit));
    if (opts.folderId) q.set("folderId", opts.folderId);
    const query = q.size ? `?${q}` : "";
    return this.json({ method: "GET", path: `/api/v1/attachments${query}` });
  }

  /** Its kept versions, newest first. */
  async versions(id: string): Promise<AttachmentVersion[]> {
    return (
      await this.json<{ versions: AttachmentVersion[] }>({ method: "GET", path: `${path(id)}/versions` })
    ).versions;
  }

  /** The bytes of its version `n`. */
  async versionBytes(id: string, n: number): Promise<Buffer> {
    return (await this.raw(`${path(id)}/versions/${n}/raw`, {})).bytes;
  }

  /** A GET of bytes, read whole (and counted). */
  private async raw(at: string, headers: Record<string, string>) {
    const chunks: Buffer[] = [];
    const res = await this.transport.call(
      { method: "GET", path: at, headers, timeoutMs: 60_000 },
      async (body) => {
        for await (const chunk of body) chunks.push(chunk);
        return "";
      },
    );
    const bytes = Buffer.concat(chunks);
    this.transport.received(bytes.length);
    return { res, bytes };
  }

  /** The service's limits on attachments (`GET /api/me`'s additive field; undefined from an older service). */
  async limits(): Promise<AttachmentLimits | undefined> {
    return (await this.json<{ attachmentLimits?: AttachmentLimits }>({ method: "GET", path: "/api/me" }))
      .attachmentLimits;
  }

  /** Every attachment visible, page by page. */
  async all(): Promise<TxtAttachment[]> {
    const all: TxtAttachment[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await this.list({ cursor, limit: 1000 });
      all.push(...page.attachments);
      if (!page.hasMore || !page.nextCursor) return all;
      cursor = page.nextCursor;
    }
  }

  /** Makes an attachment `name` in `folderId` (null: the top level) holding exactly `bytes`. */
  async create(
    name: string,
    folderId: string | null,
    bytes: Buffer,
    opts: { idempotencyKey?: string; replace?: boolean } = {},
  ): Promise<TxtAttachment> {
    const q = new URLSearchParams({ name });
    if (folderId) q.set("folderId", folderId);
    if (opts.replace) q.set("onExisting", "replace");
    const headers: Record<string, string> = opts.idempotencyKey
      ? { "idempotency-key": opts.idempotencyKey }
      : {};
    return (
      await this.json<{ attachment: TxtAttachment }>({
        method: "POST",
        path: `/api/v1/attachments?${q}`,
        raw: bytes,
        headers,
      })
    ).attachment;
  }

  /** Its record; null when `etag` is still its version (304). */
  async get(id: string, etag?: string): Promise<TxtAttachment | null> {
    const res = await this.transport.call({
      method: "GET",
      path: path(id),
      headers: etag ? { "if-none-match": etag } : {},
    });
    return res.status === 304 ? null : (JSON.parse(res.text) as TxtAttachment);
  }

  /**
   * Its bytes, or the part `range` (`end` inclusive, as HTTP's Range); null when `etag` is still
   * its version (304).
   */
  async read(
    id: string,
    opts: { etag?: string; range?: { start: number; end: number } } = {},
  ): Promise<AttachmentBytes | null> {
    const headers: Record<string, string> = {};
    if (opts.etag) headers["if-none-match"] = opts.etag;
    if (opts.range) headers.range = `bytes=${opts.range.start}-${opts.range.end}`;
    const { res, bytes } = await this.raw(`${path(id)}/raw`, headers);
    if (res.status === 304) return null;
    const whole = /\/(\d+)$/.exec(res.headers["content-range"] ?? "");
    return { bytes, etag: res.headers.etag ?? "", size: whole ? Number(whole[1]) : bytes.length };
  }

  /** Its bytes replaced by exactly `bytes`; `ifMatch`: only if it is still that version (else 412). */
  async replace(
    id: string,
    bytes: Buffer,
    opts: { ifMatch?: string; idempotencyKey?: string } = {},
  ): Promise<TxtAttachment> {
    const headers: Record<string, string> = {};
    if (opts.ifMatch) headers["if-match"] = opts.ifMatch;
    if (opts.idempotencyKey) headers["idempotency-key"] = opts.idempotencyKey;
    return (
      await this.json<{ attachment: TxtAttachment }>({
        method: "PUT",
        path: `${path(id)}/raw`,
        raw: bytes,
        headers,
      })
    ).attachment;
  }

  /** Renamed and/or moved (no bytes are copied). */
  async update(
    id: string,
    patch: { name?: string; folderId?: string | null },
    opts: { ifMatch?: string } = {},
  ): Promise<TxtAttachment> {
    const headers: Record<string, string> = opts.ifMatch ? { "if-match": opts.ifMatch } : {};
    return (
      await this.json<{ attachment: TxtAttachment }>({ method: "PUT", path: path(id), json: patch, headers })
    ).attachment;
  }

  async delete(id: string, ifMatch?: string): Promise<void> {
    await this.transport.call({
      method: "DELETE",
      path: path(id),
      headers: ifMatch ? { "if-match": ifMatch } : {},
    });
  }
}
