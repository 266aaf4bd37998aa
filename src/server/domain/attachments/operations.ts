// Attachments in batch and sync (`attachment.create|update|delete`): bytes travel in JSON as
// base64 (`contentBase64`), and each operation runs the same function as its endpoint.
import type { Tx } from "../../../store/store.ts";
import type { Actor } from "../actor.ts";
import { ServiceError } from "../errors.ts";
import type { IfMatch } from "../files.ts";
import { toTxtAttachment } from "./records.ts";
import type { AttachmentLimits } from "./rules.ts";
import { createAttachment, deleteAttachment, replaceAttachment, updateAttachment } from "./writes.ts";

export type AttachmentOpName = "attachment.create" | "attachment.update" | "attachment.delete";

/** Standard base64 with padding, no line breaks: the schema's pattern and the check below. */
export const BASE64_PATTERN = "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$";
const BASE64 = new RegExp(BASE64_PATTERN);

/** Strict base64 (RFC 4648 §4, padded): anything else is a 400, never bytes guessed at. */
export function decodeBase64(field: string, text: string): Buffer {
  if (!BASE64.test(text)) {
    throw new ServiceError(
      400,
      "validation_failed",
      `${field}: not base64 (RFC 4648, with padding, no line breaks).`,
      "Encode the bytes with standard base64 (Buffer.from(bytes).toString('base64')).",
      [{ field, code: "invalid_base64", message: "not base64" }],
    );
  }
  return Buffer.from(text, "base64");
}

export async function applyAttachmentOperation(
  tx: Tx,
  actor: Actor,
  limits: AttachmentLimits,
  op: AttachmentOpName,
  target: () => string,
  body: Record<string, unknown>,
  ifMatch: IfMatch | undefined,
) {
  const result = (status: number, r: Awaited<ReturnType<typeof updateAttachment>>) => ({
    status,
    itemId: r.row.id,
    etag: r.row.etag,
    seq: r.seq,
    body: { attachment: toTxtAttachment(r.row, r.role) },
  });
  switch (op) {
    case "attachment.create": {
      if (ifMatch !== undefined)
        throw new ServiceError(
          400,
          "validation_failed",
          "ifMatch: a create has nothing to match.",
          "Drop ifMatch from attachment.create.",
          [{ field: "ifMatch", code: "invalid", message: "not allowed on create" }],
        );
      const r = await createAttachment(tx, actor, limits, {
        name: body.name as string,
        folderId: body.folderId as string | null | undefined,
        bytes: decodeBase64("body.contentBase64", body.contentBase64 as string),
        onExisting: body.onExisting as "fail" | "replace" | undefined,
      });
      return result(r.status, r);
    }
    case "attachment.update": {
      const id = target();
      let r = undefined as Awaited<ReturnType<typeof updateAttachment>> | undefined;
      // New bytes first (checked against ifMatch), then the name and place (the new ETag is ours).
      if (body.contentBase64 !== undefined) {
        const bytes = decodeBase64("body.contentBase64", body.contentBase64 as string);
        r = await replaceAttachment(tx, actor, limits, id, bytes, ifMatch);
      }
      if (body.name !== undefined || body.folderId !== undefined) {
        const patch = {
          name: body.name as string | undefined,
          folderId: body.folderId as string | null | undefined,
        };
        r = await updateAttachment(tx, actor, id, patch, r ? undefined : ifMatch);
      }
      r ??= await updateAttachment(tx, actor, id, {}, ifMatch);
      return result(200, r);
    }
    case "attachment.delete": {
      const r = await deleteAttachment(tx, actor, target(), ifMatch);
      return { status: 200, itemId: r.id, seq: r.seq, body: r };
    }
  }
}
