// Temporary URLs (`temp-url`): an unguessable, expiring, read-only link to a file's raw text that
// works without credentials until it expires or is revoked. Only a hash of the token is stored,
// so a database leak does not leak working links, and a link can be revoked (unlike signed URLs).
import { createHash } from "node:crypto";
import { newId, randomBase62 } from "../../lib/ids.ts";
import { nowIso } from "../../lib/time.ts";
import type { FileRow, TempUrlRow } from "../../store/repos/rows.ts";
import type { Tx } from "../../store/store.ts";
import { fileRole, requireFile } from "./access.ts";
import type { Actor } from "./actor.ts";
import { invalid, ServiceError } from "./errors.ts";

export const TEMP_URL = {
  defaultSeconds: 3600,
  minSeconds: 60,
  maxSeconds: 7 * 24 * 3600,
  /** 43 base62 characters: 256 random bits. */
  tokenChars: 43,
};

const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");
export const tempPath = (token: string) => `/t/${token}`;

function status(row: TempUrlRow, now: string): "active" | "expired" | "revoked" {
  if (row.revoked_at) return "revoked";
  return row.expires_at <= now ? "expired" : "active";
}

export function toTempUrlRecord(row: TempUrlRow, now = nowIso()) {
  return {
    id: row.id,
    fileId: row.file_id,
    createdBy: row.created_by,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    status: status(row, now),
  };
}

export async function createTempUrl(tx: Tx, actor: Actor, fileId: string, input: { expiresIn?: number }) {
  const { file } = await requireFile(tx, actor, fileId, "writer");
  const seconds = input.expiresIn ?? TEMP_URL.defaultSeconds;
  if (!Number.isInteger(seconds) || seconds < TEMP_URL.minSeconds || seconds > TEMP_URL.maxSeconds) {
    throw invalid(
      "expiresIn",
      `must be a whole number of seconds from ${TEMP_URL.minSeconds} to ${TEMP_URL.maxSeconds} (7 days)`,
    );
  }
  const token = randomBase62(TEMP_URL.tokenChars);
  const now = new Date();
  const row: TempUrlRow = {
    id: newId("tu"),
    file_id: file.id,
    token_hash: hashToken(token),
    created_by: actor.userId,
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + seconds * 1000).toISOString(),
    revoked_at: null,
  };
  await tx.tempUrls.insert(row);
  return { ...toTempUrlRecord(row), path: tempPath(token), token };
}

export async function listTempUrls(tx: Tx, actor: Actor, fileId: string) {
  const { file } = await requireFile(tx, actor, fileId, "writer");
  const now = nowIso();
  return {
    fileId: file.id,
    tempUrls: (await tx.tempUrls.listForFile(file.id)).map((r) => toTempUrlRecord(r, now)),
  };
}

export async function revokeTempUrl(tx: Tx, actor: Actor, fileId: string, id: string) {
  const { file } = await requireFile(tx, actor, fileId, "writer");
  const row = await tx.tempUrls.byId(id);
  if (!row || row.file_id !== file.id) {
    throw new ServiceError(
      404,
      "not_found",
      `File ${fileId} has no temporary URL ${id}.`,
      "List them with GET /api/v1/files/:id/share.",
    );
  }
  await tx.tempUrls.revoke(row.id, nowIso());
  return { tempUrl: toTempUrlRecord((await tx.tempUrls.byId(row.id))!) };
}

/** Resolves a token to the file it opens; 404 unknown, 410 expired or revoked. */
export async function openTempUrl(tx: Tx, token: string): Promise<FileRow> {
  const unknown = new ServiceError(
    404,
    "not_found",
    "No such link.",
    "Check that the whole link was copied; ask the file's owner for a new one.",
  );
  if (!/^[0-9A-Za-z]{20,64}$/.test(token)) throw unknown;
  const row = await tx.tempUrls.byHash(hashToken(token));
  if (!row) throw unknown;
  const state = status(row, nowIso());
  const file = await tx.files.byId(row.file_id);
  // The link lives only while its creator can still read the file.
  const creatorRole = file ? await fileRole(tx, { userId: row.created_by } as Actor, file) : null;
  if (state === "revoked" || (file && !creatorRole)) {
    throw new ServiceError(
      410,
      "temp_url_revoked",
      "This link was revoked.",
      "Ask the file's owner for a new link.",
    );
  }
  if (state === "expired") {
    throw new ServiceError(
      410,
      "temp_url_expired",
      `This link expired at ${row.expires_at}.`,
      "Ask the file's owner for a new link.",
    );
  }
  if (!file) throw unknown;
  return file;
}
