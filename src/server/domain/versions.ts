// Version history: every content change records a version (files.ts); here they are listed, read,
// labelled (`commit`) and restored (a restore is a new version with the old text).
import { newId } from "../../lib/ids.ts";
import type { VersionRow } from "../../store/repos/rows.ts";
import type { Tx } from "../../store/store.ts";
import { requireFile } from "./access.ts";
import type { Actor } from "./actor.ts";
import { invalid, ServiceError } from "./errors.ts";
import { publishOnFile } from "./events.ts";
import { type IfMatch, updateFile } from "./files.ts";
import { LIMITS } from "./limits.ts";

export const LABEL_MAX_CHARS = 100;

type VersionMeta = Omit<VersionRow, "content"> & {
  author_name?: string | null;
  author_email?: string | null;
};

export function toTxtVersion(row: VersionMeta & { content?: string }, currentNumber: number) {
  return {
    id: row.id,
    file_id: row.file_id,
    ...(row.content !== undefined ? { content: row.content } : {}),
    version_number: Number(row.version_number),
    content_hash: row.content_hash,
    byte_size: Number(row.byte_size),
    author_user_id: row.author_user_id,
    author_name: row.author_name || null,
    author_email: row.author_email ?? null,
    source: row.source,
    label: row.label,
    commit_id: row.commit_id,
    created_at: row.created_at,
    current: Number(row.version_number) === currentNumber,
    endpoint: `/api/v1/files/${row.file_id}/versions/${row.version_number}`,
  };
}

async function withAuthor(tx: Tx, row: VersionRow) {
  const user = row.author_user_id ? await tx.users.byId(row.author_user_id) : undefined;
  return { ...row, author_name: user?.name ?? null, author_email: user?.email ?? null };
}

export function parseVersionNumber(raw: string): number {
  if (!/^[1-9]\d{0,9}$/.test(raw)) throw invalid("version", "must be a version number (1, 2, ...)");
  return Number(raw);
}

/** Versions newest first, without bodies (listings never carry bodies); `before` pages down. */
export async function listVersions(
  tx: Tx,
  actor: Actor,
  fileId: string,
  opts: { limit?: number; before?: number },
) {
  const { file } = await requireFile(tx, actor, fileId, "reader");
  const limit = opts.limit ?? LIMITS.pageDefault;
  const rows = await tx.versions.page(file.id, opts.before, limit + 1);
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  return {
    fileId: file.id,
    currentVersion: file.version_number,
    versions: page.map((r) => toTxtVersion(r, file.version_number)),
    nextBefore: hasMore ? Number(page.at(-1)!.version_number) : null,
    hasMore,
  };
}

async function loadVersion(tx: Tx, fileId: string, n: number) {
  const row = await tx.versions.byNumber(fileId, n);
  if (!row) {
    throw new ServiceError(
      404,
      "version_not_found",
      `File ${fileId} has no version ${n}.`,
      "List the versions (GET /api/v1/files/:id/versions); unlabelled versions beyond the newest 100 are pruned.",
    );
  }
  return row;
}

export async function getVersion(tx: Tx, actor: Actor, fileId: string, n: number) {
  const { file } = await requireFile(tx, actor, fileId, "reader");
  return toTxtVersion(await withAuthor(tx, await loadVersion(tx, file.id, n)), file.version_number);
}

/** `commit`: labels a version (the current one unless `versionNumber` says otherwise); kept for good. */
export async function commitVersion(
  tx: Tx,
  actor: Actor,
  fileId: string,
  input: { label: string; versionNumber?: number },
) {
  const { file } = await requireFile(tx, actor, fileId, "writer");
  const label = input.label.trim();
  if (!label) throw invalid("label", "must not be empty");
  if ([...label].length > LABEL_MAX_CHARS)
    throw invalid("label", `must be at most ${LABEL_MAX_CHARS} characters`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it rejects
  if (/[\0-\x1f\x7f]/.test(label)) throw invalid("label", "must not contain control characters");
  const row = await loadVersion(tx, file.id, input.versionNumber ?? file.version_number);
  const commitId = newId("c");
  await tx.versions.setLabel(row.id, label, commitId);
  const version = toTxtVersion(
    await withAuthor(tx, { ...row, label, commit_id: commitId }),
    file.version_number,
  );
  const { content: _body, ...meta } = version;
  const seqs = await publishOnFile(tx, "version", row.id, file, meta);
  return { version: meta, seq: seqs.get(actor.userId) };
}

/** Restores an old version's text as a new version (source `restore`); `If-Match` guards the file. */
export async function restoreVersion(tx: Tx, actor: Actor, fileId: string, n: number, ifMatch?: IfMatch) {
  const { file } = await requireFile(tx, actor, fileId, "writer");
  const old = await loadVersion(tx, file.id, n);
  const result = await updateFile(
    tx,
    { ...actor, source: "restore" },
    file.id,
    { content: old.content },
    ifMatch,
  );
  const restored = result.file.version_number !== file.version_number;
  if (restored) {
    const row = await tx.versions.byNumber(file.id, result.file.version_number);
    if (row) {
      const { content: _body, ...meta } = toTxtVersion(await withAuthor(tx, row), result.file.version_number);
      await publishOnFile(tx, "version", row.id, result.file, { ...meta, restoredFrom: n });
    }
  }
  return { ...result, restored, restoredFrom: n };
}
