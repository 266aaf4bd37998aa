import { createHash } from "node:crypto";
import type { Sql } from "../store.ts";
import type { Dialect } from "./search.ts";

/**
 * Bytes stored once per content, addressed by their SHA-256. Each `put` adds one reference and each
 * `release` drops one; the bytes go with the last reference. The rest of the service sees only this
 * interface, so an object store can take the bytes later without touching it.
 */
export interface BlobStore {
  /** Stores `bytes` (or finds them stored) and adds a reference. */
  put(bytes: Buffer): Promise<{ hash: string; size: number }>;
  get(hash: string): Promise<Buffer | undefined>;
  /** `length` bytes from `start` (0-based); fewer at the end. */
  range(hash: string, start: number, length: number): Promise<Buffer | undefined>;
  release(hash: string): Promise<void>;
}

export const sha256Hex = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

/** node:sqlite answers a BLOB as a Uint8Array, pg a bytea as a Buffer: both become a Buffer. */
const toBuffer = (value: unknown): Buffer =>
  Buffer.isBuffer(value)
    ? value
    : Buffer.from(
        (value as Uint8Array).buffer,
        (value as Uint8Array).byteOffset,
        (value as Uint8Array).byteLength,
      );

/** The blob table of the embedded store and of PostgreSQL (bytea), in the unit of work's transaction. */
export class SqlBlobStore implements BlobStore {
  private readonly sql: Sql;
  private readonly dialect: Dialect;

  constructor(sql: Sql, dialect: Dialect) {
    this.sql = sql;
    this.dialect = dialect;
  }

  async put(bytes: Buffer): Promise<{ hash: string; size: number }> {
    const hash = sha256Hex(bytes);
    // Known content only counts one more reference: its bytes are neither sent nor written again.
    const known = await this.sql.run("UPDATE blob_refs SET refs = refs + 1 WHERE hash = ?", [hash]);
    if (known.changes === 0) {
      await this.sql.run(
        "INSERT INTO blobs (hash, size, bytes) VALUES (?, ?, ?) ON CONFLICT (hash) DO NOTHING",
        [hash, bytes.length, bytes],
      );
      await this.sql.run(
        `INSERT INTO blob_refs (hash, refs) VALUES (?, 1)
         ON CONFLICT (hash) DO UPDATE SET refs = blob_refs.refs + 1`,
        [hash],
      );
    }
    return { hash, size: bytes.length };
  }

  async get(hash: string): Promise<Buffer | undefined> {
    const row = await this.sql.get<{ bytes: unknown }>("SELECT bytes FROM blobs WHERE hash = ?", [hash]);
    return row ? toBuffer(row.bytes) : undefined;
  }

  async range(hash: string, start: number, length: number): Promise<Buffer | undefined> {
    // Only the asked-for bytes leave the database (SQL positions count from 1).
    const part = this.dialect === "postgres" ? "substring(bytes FROM ? FOR ?)" : "substr(bytes, ?, ?)";
    const row = await this.sql.get<{ part: unknown }>(`SELECT ${part} AS part FROM blobs WHERE hash = ?`, [
      start + 1,
      length,
      hash,
    ]);
    return row ? toBuffer(row.part) : undefined;
  }

  async release(hash: string): Promise<void> {
    await this.sql.run("UPDATE blob_refs SET refs = refs - 1 WHERE hash = ?", [hash]);
    const last = await this.sql.run("DELETE FROM blob_refs WHERE hash = ? AND refs <= 0", [hash]);
    if (last.changes > 0) await this.sql.run("DELETE FROM blobs WHERE hash = ?", [hash]);
  }
}
