// Attachments through the API as bytes (the Api helper speaks text), what an account's attachments
// hold (a fingerprint: records and bytes), and the blob table as the database has it.
import { createHash } from "node:crypto";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import pg from "pg";
import { expect } from "vitest";
import { accountFingerprint } from "./fingerprint.ts";
import type { TestServer, TestUser } from "./server.ts";

export interface BinRes {
  status: number;
  headers: Headers;
  bytes: Buffer;
  body: any;
  text: string;
}

/** One request with a raw body; the answer as bytes (and as JSON when it is JSON). */
export async function bin(
  t: TestServer,
  user: TestUser | undefined,
  method: string,
  path: string,
  body?: Buffer | string,
  headers: Record<string, string> = {},
): Promise<BinRes> {
  const h: Record<string, string> = { ...headers };
  if (user && !("authorization" in h)) h.authorization = `Bearer ${user.key}`;
  const res = await fetch(t.url + path, { method, headers: h, body });
  const bytes = Buffer.from(await res.arrayBuffer());
  // Bytes of a .json attachment are its content, not an answer to parse.
  const content = method === "GET" && /\/raw$/.test(path.split("?")[0]!) && res.status < 300;
  const json = !content && (res.headers.get("content-type") ?? "").includes("json") && bytes.length > 0;
  const text = json ? bytes.toString("utf8") : bytes.toString("latin1");
  t.contract.check(method, path, res.status, res.headers, text);
  return { status: res.status, headers: res.headers, bytes, body: json ? JSON.parse(text) : undefined, text };
}

/** Creates an attachment (asserting 201) and returns its record. */
export async function attach(
  t: TestServer,
  user: TestUser,
  name: string,
  bytes: Buffer,
  folderId?: string,
): Promise<any> {
  const q = `name=${encodeURIComponent(name)}${folderId ? `&folderId=${folderId}` : ""}`;
  const res = await bin(t, user, "POST", `/api/v1/attachments?${q}`, bytes, {
    "content-type": "application/octet-stream",
  });
  if (res.status !== 201) throw new Error(`attach failed: ${res.status} ${res.text}`);
  return res.body.attachment;
}

export const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/** Everything the account holds: notes (accountFingerprint, with the feed head) and attachments with their bytes. */
export async function fullFingerprint(t: TestServer, user: TestUser): Promise<string> {
  const parts: unknown[] = [await accountFingerprint(user.api)];
  const list = await bin(t, user, "GET", "/api/v1/attachments?limit=1000");
  expect(list.status).toBe(200);
  for (const a of list.body.attachments) {
    const raw = await bin(t, user, "GET", `/api/v1/attachments/${a.id}/raw`);
    const versions = await bin(t, user, "GET", `/api/v1/attachments/${a.id}/versions`);
    parts.push(a, sha(raw.bytes), versions.body);
  }
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex");
}

export interface BlobTable {
  rows: number;
  bytes: number;
  refs: number;
}

/** The blob table as stored (SQLite file or the PostgreSQL database of the test server). */
/** Every stored content has exactly one count, and every count its content. */
function check(table: BlobTable, counted: number): BlobTable {
  expect(counted, "blob_refs rows = blobs rows").toBe(table.rows);
  return table;
}

export async function blobTable(t: TestServer): Promise<BlobTable> {
  const sql =
    // Apart, so that bytes left without a reference (or a reference without bytes) show.
    "SELECT (SELECT COUNT(*) FROM blobs) AS rows, (SELECT COALESCE(SUM(length(bytes)), 0) FROM blobs) AS bytes, " +
    "(SELECT COALESCE(SUM(refs), 0) FROM blob_refs) AS refs, (SELECT COUNT(*) FROM blob_refs) AS counted";
  if (t.db) {
    const client = new pg.Client({ connectionString: t.db });
    await client.connect();
    try {
      const r = (await client.query(sql.replace("length(bytes)", "octet_length(bytes)"))).rows[0];
      return check({ rows: Number(r.rows), bytes: Number(r.bytes), refs: Number(r.refs) }, Number(r.counted));
    } finally {
      await client.end();
    }
  }
  const db = new DatabaseSync(join(t.dataDir, "txtfs.db"), { readOnly: true });
  try {
    const r = db.prepare(sql).get() as Record<string, number>;
    return check({ rows: Number(r.rows), bytes: Number(r.bytes), refs: Number(r.refs) }, Number(r.counted));
  } finally {
    db.close();
  }
}
