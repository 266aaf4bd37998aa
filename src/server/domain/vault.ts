// Vaulted credentials: secrets a user hands the service (a user-supplied AI key), sealed at rest and
// never shown again — only a label and the last four characters.
import { nowIso } from "../../lib/time.ts";
import type { VaultSecretRow } from "../../store/repos/vault.ts";
import type { Tx } from "../../store/store.ts";
import { invalid, ServiceError } from "./errors.ts";
import type { Sealer } from "./identities.ts";

export const VAULT_NAMES = ["ai-key"] as const;
export type VaultName = (typeof VAULT_NAMES)[number];
const SECRET_MAX = 4096;
const LABEL_MAX = 64;

export function toVaultRecord(row: VaultSecretRow) {
  return {
    name: row.name,
    label: row.label,
    hint: `…${row.hint}`,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function checkName(name: string): VaultName {
  if (!(VAULT_NAMES as readonly string[]).includes(name)) {
    throw new ServiceError(
      404,
      "not_found",
      `No vaulted credential named ${name}.`,
      `Known names: ${VAULT_NAMES.join(", ")}.`,
    );
  }
  return name as VaultName;
}

export async function putVaultSecret(
  tx: Tx,
  userId: string,
  name: string,
  input: { secret: string; label?: string },
  sealer: Sealer,
) {
  const n = checkName(name);
  const secret = input.secret.trim();
  if (secret.length < 8 || secret.length > SECRET_MAX)
    throw invalid("secret", `8 to ${SECRET_MAX} characters`);
  if (/\s|\p{Cc}/u.test(secret)) throw invalid("secret", "no spaces or control characters");
  const label = (input.label ?? "").trim();
  if ([...label].length > LABEL_MAX || /\p{Cc}/u.test(label))
    throw invalid("label", `at most ${LABEL_MAX} printable characters`);
  const now = nowIso();
  const existing = await tx.vault.get(userId, n);
  const row: VaultSecretRow = {
    user_id: userId,
    name: n,
    label,
    hint: secret.slice(-4),
    created_at: existing?.created_at ?? now,
    updated_at: now,
    ciphertext: sealer.seal(secret),
  };
  await tx.vault.put(row);
  return toVaultRecord(row);
}

export async function listVault(tx: Tx, userId: string) {
  return (await tx.vault.listForUser(userId)).map(toVaultRecord);
}

export async function deleteVaultSecret(tx: Tx, userId: string, name: string) {
  const n = checkName(name);
  const removed = await tx.vault.delete(userId, n);
  return { name: n, deleted: removed.changes > 0 };
}

/** The plain secret, for the features that call the AI provider with it. */
export async function openVaultSecret(
  tx: Tx,
  userId: string,
  name: VaultName,
  sealer: Sealer,
): Promise<string | null> {
  const row = await tx.vault.get(userId, name);
  return row ? sealer.open(row.ciphertext) : null;
}
