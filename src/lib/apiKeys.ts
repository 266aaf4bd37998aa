import { createHash } from "node:crypto";
import { crc32 } from "node:zlib";
import { randomBase62, toBase62 } from "./ids.ts";

// API key format (GitHub-style): `txt_` + 30 random base62 chars + 6 base62 chars of CRC32 over
// everything before it. The checksum lets secret scanners (and us, before any database lookup)
// recognise a real key offline: KEY_PATTERN + checksumOk is the published recogniser.
export const KEY_PREFIX = "txt_";
export const KEY_PATTERN = /^txt_[0-9A-Za-z]{36}$/;
const SECRET_LENGTH = 30;
const PREFIX_SHOWN = 12; // `token_prefix`: enough to tell keys apart, far too little to guess one

export function mintApiKey(): { key: string; hash: string; prefix: string } {
  const body = KEY_PREFIX + randomBase62(SECRET_LENGTH);
  const key = body + toBase62(crc32(body), 6);
  return { key, hash: hashApiKey(key), prefix: key.slice(0, PREFIX_SHOWN) };
}

export function looksLikeApiKey(token: string): boolean {
  if (!KEY_PATTERN.test(token)) return false;
  const body = token.slice(0, KEY_PREFIX.length + SECRET_LENGTH);
  return toBase62(crc32(body), 6) === token.slice(body.length);
}

/** Keys are 178-bit random secrets, so a plain SHA-256 is safe and allows an indexed lookup. */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}
