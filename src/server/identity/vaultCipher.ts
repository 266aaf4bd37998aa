// Encryption at rest for vaulted credentials and the identity tokens the server holds: AES-256-GCM
// with a 32-byte key from TXTFS_VAULT_KEY (base64; what several servers sharing one database use) or
// from DATA/vault.key (created once, mode 0600). A stolen database alone reveals no secret.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface VaultCipher {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

const VERSION = "v1";

export function createVaultCipher(key: Buffer): VaultCipher {
  if (key.length !== 32) throw new Error("the vault key must be 32 bytes");
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return [
        VERSION,
        iv.toString("base64url"),
        cipher.getAuthTag().toString("base64url"),
        ct.toString("base64url"),
      ].join(".");
    },
    open(sealed) {
      const [version, iv, tag, ct] = sealed.split(".");
      if (version !== VERSION || !iv || !tag || ct === undefined) throw new Error("not a sealed vault value");
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString(
        "utf8",
      );
    },
  };
}

/** TXTFS_VAULT_KEY, else DATA/vault.key (made on first use). */
export function loadVaultKey(dataDir: string): Buffer {
  const fromEnv = process.env.TXTFS_VAULT_KEY;
  if (fromEnv) {
    const key = Buffer.from(fromEnv, "base64");
    if (key.length !== 32) throw new Error("TXTFS_VAULT_KEY must be 32 bytes, base64-encoded");
    return key;
  }
  const file = join(dataDir, "vault.key");
  if (existsSync(file)) return Buffer.from(readFileSync(file, "utf8").trim(), "base64");
  // A PostgreSQL-backed server may have no data dir yet (its store is elsewhere).
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  try {
    writeFileSync(file, `${key.toString("base64")}\n`, { mode: 0o600, flag: "wx" });
  } catch (err) {
    // Another server on this data dir made it first: use theirs.
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    return Buffer.from(readFileSync(file, "utf8").trim(), "base64");
  }
  return key;
}
