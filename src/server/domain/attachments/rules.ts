// What an attachment may be: its name (the notes' rules, and a .md/.txt name only for bytes that are
// not UTF-8 text — those are notes), its size (per file) and its owner's quota (all its attachments).
import { ServiceError } from "../errors.ts";
import { checkName } from "../limits.ts";

export interface AttachmentLimits {
  /** Bytes of one attachment (413 beyond). */
  maxBytes: number;
  /** Bytes of current attachment content one account may own (507 beyond). */
  quotaBytes: number;
}

export const DEFAULT_ATTACHMENT_LIMITS: AttachmentLimits = {
  maxBytes: 100 * 1024 * 1024,
  quotaBytes: 10 * 1024 * 1024 * 1024,
};

const fatalUtf8 = new TextDecoder("utf-8", { fatal: true });

export function isUtf8Text(bytes: Buffer): boolean {
  try {
    fatalUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

const NOTE_NAME = /\.(md|txt)$/i;

/**
 * An attachment's name: 1-255 bytes, no `/`, no NUL, not `.`/`..`; a `.md`/`.txt` name only when
 * its bytes are not UTF-8 (a text file is a note, stored through the files endpoints). The bytes
 * are asked for only for such a name.
 */
export async function checkAttachmentName(
  field: string,
  name: string,
  bytes: () => Buffer | Promise<Buffer>,
): Promise<string> {
  checkName(field, name);
  if (NOTE_NAME.test(name) && isUtf8Text(await bytes())) {
    throw new ServiceError(
      400,
      "validation_failed",
      `${field}: ${JSON.stringify(name)} is a note's name and its bytes are UTF-8 text: it is a note, not an attachment.`,
      "Store it as a note (POST /api/v1/files or /api/v1/files/upload); only a .md/.txt file whose bytes are not UTF-8 is an attachment.",
      [{ field, code: "note_name", message: "a .md/.txt name with UTF-8 bytes is a note" }],
    );
  }
  return name;
}

const size = (n: number) =>
  n >= 1024 * 1024 ? `${Math.round((n / 1024 / 1024) * 100) / 100} MiB (${n} bytes)` : `${n} bytes`;

export function checkAttachmentSize(limits: AttachmentLimits, size: number): void {
  if (size > limits.maxBytes) throw attachmentTooLarge(limits);
}

export const attachmentTooLarge = (limits: AttachmentLimits) =>
  new ServiceError(
    413,
    "payload_too_large",
    `The attachment exceeds the limit of ${size(limits.maxBytes)} per file.`,
    "Keep each attachment under the limit, or ask the operator to raise it (txtfs serve --attachment-max-bytes).",
    { limitBytes: limits.maxBytes },
  );

/** 507: the owner's attachments would take more than its quota. */
export function checkQuota(limits: AttachmentLimits, usedBytes: number, addedBytes: number): void {
  if (addedBytes <= 0 || usedBytes + addedBytes <= limits.quotaBytes) return;
  throw new ServiceError(
    507,
    "insufficient_storage",
    `This would take the account's attachments to ${usedBytes + addedBytes} bytes, over its quota of ${size(limits.quotaBytes)}.`,
    "Delete attachments you no longer need, or ask the operator to raise the quota (txtfs serve --attachment-quota-bytes).",
    { quotaBytes: limits.quotaBytes, usedBytes },
  );
}
