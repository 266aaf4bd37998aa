import type { Sql } from "../store.ts";

export interface VaultSecretRow {
  user_id: string;
  /** What the secret is for, e.g. `ai-key`. */
  name: string;
  label: string;
  /** The last 4 characters, to recognise the secret without revealing it. */
  hint: string;
  created_at: string;
  updated_at: string;
  /** JSON: settings that go with the secret, not secret themselves (an AI key's `baseUrl`, `model`). */
  options: string;
  /** AES-256-GCM ciphertext (see server/identity/vaultCipher.ts). */
  ciphertext: string;
}

export class VaultRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  async put(row: VaultSecretRow) {
    const changed = await this.sql.run(
      "UPDATE vault_secrets SET label = ?, hint = ?, updated_at = ?, options = ?, ciphertext = ? WHERE user_id = ? AND name = ?",
      [row.label, row.hint, row.updated_at, row.options, row.ciphertext, row.user_id, row.name],
    );
    if (changed.changes > 0) return changed;
    return this.sql.run(
      "INSERT INTO vault_secrets (user_id, name, label, hint, created_at, updated_at, options, ciphertext) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      [
        row.user_id,
        row.name,
        row.label,
        row.hint,
        row.created_at,
        row.updated_at,
        row.options,
        row.ciphertext,
      ],
    );
  }

  get(userId: string, name: string): Promise<VaultSecretRow | undefined> {
    return this.sql.get("SELECT * FROM vault_secrets WHERE user_id = ? AND name = ?", [userId, name]);
  }

  listForUser(userId: string): Promise<VaultSecretRow[]> {
    return this.sql.all("SELECT * FROM vault_secrets WHERE user_id = ? ORDER BY name", [userId]);
  }

  delete(userId: string, name: string) {
    return this.sql.run("DELETE FROM vault_secrets WHERE user_id = ? AND name = ?", [userId, name]);
  }
}
