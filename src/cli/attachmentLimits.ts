// The attachments' limits a service started from the command line keeps: its flags, else
// TXTFS_ATTACHMENT_MAX_BYTES / TXTFS_ATTACHMENT_QUOTA_BYTES, else the defaults (rules.ts).
// `txtfs serve` and the in-process service of `mount --serve` and `dav --serve` read the same.
import type { AttachmentLimits } from "../server/domain/attachments/rules.ts";
import { parseByteSize } from "./byteSize.ts";
import { fromEnv } from "./options.ts";

/** Only what was set: the defaults apply to the rest. */
export function attachmentLimits(
  flags: { maxBytes?: number; quotaBytes?: number } = {},
): Partial<AttachmentLimits> {
  const maxBytes = flags.maxBytes ?? fromEnv("TXTFS_ATTACHMENT_MAX_BYTES", parseByteSize);
  const quotaBytes = flags.quotaBytes ?? fromEnv("TXTFS_ATTACHMENT_QUOTA_BYTES", parseByteSize);
  return {
    ...(maxBytes === undefined ? {} : { maxBytes }),
    ...(quotaBytes === undefined ? {} : { quotaBytes }),
  };
}
