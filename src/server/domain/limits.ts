import { NOTE_CONTENT_BYTES } from "../../lib/limits.ts";
import { invalid, tooLarge } from "./errors.ts";

// The spec's limits plus the ones it leaves 'not shown' (documented in docs/api.md).
export const LIMITS = {
  contextChars: 4000,
  tags: 16,
  tagChars: 64,
  reasonChars: 500,
  planSourceChars: 64,
  nameBytes: 255,
  contentBytes: NOTE_CONTENT_BYTES,
  pageDefault: 100,
  pageMax: 1000,
  importFiles: 1000,
  /** Operations per batch request, and its body (two full-size notes plus the envelope). */
  batchOps: 100,
  batchBytes: 11 * 1024 * 1024,
  /** Local changes per sync request. */
  syncPush: 500,
  syncBytes: 32 * 1024 * 1024,
  /** Items per device-state request. */
  deviceStateItems: 500,
  /** Unlabelled versions kept per file (labelled ones are never pruned). */
  versionsKept: 100,
  /** Arrays/objects nested inside each other in a JSON body (the deepest request needs about 8). */
  jsonDepth: 64,
} as const;

const charCount = (s: string) => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/** Names become path components in the mount, so they follow POSIX file-name rules. */
export function checkName(field: string, name: string): string {
  if (name.length === 0) throw invalid(field, "must not be empty");
  if (Buffer.byteLength(name, "utf8") > LIMITS.nameBytes)
    throw invalid(field, `must be at most ${LIMITS.nameBytes} bytes in UTF-8`);
  if (name.includes("/"))
    throw invalid(field, "must not contain '/'", `Use folders for paths; remove '/' from \`${field}\`.`);
  if (name.includes("\0")) throw invalid(field, "must not contain NUL characters");
  if (name === "." || name === "..") throw invalid(field, "must not be '.' or '..'");
  return name;
}

export function checkContext(field: string, context: string): string {
  if (charCount(context) > LIMITS.contextChars)
    throw invalid(field, `must be at most ${LIMITS.contextChars} characters`);
  return context;
}

/**
 * Tags are trimmed and de-duplicated (first spelling wins). A tag may not contain a comma or a
 * control character: the mount shows tags as one comma-separated extended attribute.
 */
export function checkTags(field: string, tags: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of tags) {
    const tag = raw.trim();
    if (!tag) throw invalid(field, "tags must not be empty");
    if (charCount(tag) > LIMITS.tagChars)
      throw invalid(field, `each tag must be at most ${LIMITS.tagChars} characters`);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we reject
    if (/[,\u0000-\u001f\u007f]/.test(tag))
      throw invalid(field, "tags must not contain commas or control characters");
    if (!out.includes(tag)) out.push(tag);
  }
  if (out.length > LIMITS.tags) throw invalid(field, `must have at most ${LIMITS.tags} items`);
  return out;
}

export function checkMaxChars(field: string, value: string, max: number): string {
  if (charCount(value) > max) throw invalid(field, `must be at most ${max} characters`);
  return value;
}

export function checkContent(content: string): string {
  if (Buffer.byteLength(content, "utf8") > LIMITS.contentBytes) throw tooLarge("content", "5 MiB");
  return content;
}

/** `.md` names are Markdown; everything else is plain text (the spec's default rule). */
export function typeFromName(name: string): "txt" | "md" {
  return /\.md$/i.test(name) ? "md" : "txt";
}
