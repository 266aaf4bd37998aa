import type { TxtFile } from "../lib/apiTypes.ts";

/** The version an edit is based on: If-Match on upload, and how to tell a real conflict. */
export type Base = { etag: string; hash: string } | null;

export function baseOf(meta: Pick<TxtFile, "etag" | "contentHash"> | null | undefined): Base {
  return meta ? { etag: meta.etag, hash: meta.contentHash } : null;
}
