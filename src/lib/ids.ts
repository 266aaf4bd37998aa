import { randomBytes } from "node:crypto";

// Crockford base32: ids sort by creation time (like ULIDs), which keeps keyset pagination stable.
const B32 = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
let lastMs = 0;
let lastRand = new Uint8Array(10);

/** `prefix_` + 26 chars: 48-bit ms timestamp + 80 random bits, monotonic within one process. */
export function newId(prefix: string): string {
  const now = Date.now();
  if (now === lastMs) {
    // Same millisecond: increment the random part so ids stay strictly increasing.
    for (let i = lastRand.length - 1; i >= 0; i--) {
      lastRand[i] = (lastRand[i]! + 1) & 0xff;
      if (lastRand[i] !== 0) break;
    }
  } else {
    lastMs = now;
    lastRand = new Uint8Array(randomBytes(10));
  }
  let out = "";
  let t = now;
  for (let i = 0; i < 10; i++) {
    out = B32[t % 32] + out;
    t = Math.floor(t / 32);
  }
  let bits = 0;
  let acc = 0;
  for (const byte of lastRand) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += B32[(acc >> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return `${prefix}_${out}`;
}

const B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Uniformly random base62 string (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248) out += B62[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export function toBase62(n: number, width: number): string {
  let out = "";
  let v = n;
  do {
    out = B62[v % 62] + out;
    v = Math.floor(v / 62);
  } while (v > 0);
  return out.padStart(width, "0");
}
