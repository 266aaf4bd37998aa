// What ties a file that is not a note to its attachment on the service (docs/api.md,
// "Attachments"). The file itself is a local node: its bytes live in a blob in the cache dir and
// every POSIX operation on it is the local file's; the binding says which attachment it is and
// which version the bytes here build on, so its saves go up through the journal
// (attachmentSaves.ts) and the service's changes come down (attachmentPlaces.ts).
import type { Role, TxtAttachment } from "../../lib/apiTypes.ts";

export interface AttachmentBinding {
  /** Its id on the service; null until its create is answered. */
  id: string | null;
  /** The Idempotency-Key of its create: a create sent again never makes two. */
  createKey: string;
  /** The version the bytes here build on (If-Match of the next save); null: never on the service. */
  etag: string | null;
  /** That version's content hash (SHA-256, hex): a save of the same bytes sends nothing. */
  hash: string | null;
  /** That version's revision: a feed record older than it is never applied. */
  revision: number;
  /** That version's size, as the service counts it against the quota (absent: bound before sizes were kept). */
  size?: number;
  /** The service's role on it: a reader's attachment never changes here. */
  role?: Role;
  /** The bytes are on the service only: read into the blob at the first open (attachmentBytes.ts). */
  remoteOnly?: true;
}

/** The binding of an attachment as the service has it, its bytes not read yet. */
export function remoteBinding(record: TxtAttachment): AttachmentBinding {
  return {
    id: record.id,
    createKey: "",
    etag: record.etag,
    hash: record.contentHash,
    revision: record.revision,
    size: record.size,
    role: record.role,
    remoteOnly: true,
  };
}

/** The binding now at `record`, a version of ours (its bytes are what the blob holds). */
export function boundTo(binding: AttachmentBinding, record: TxtAttachment): void {
  binding.id = record.id;
  binding.etag = record.etag;
  binding.hash = record.contentHash;
  binding.revision = record.revision;
  binding.size = record.size;
  binding.role = record.role;
}
