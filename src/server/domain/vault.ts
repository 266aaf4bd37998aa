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

/** Settings kept beside an AI key: the user's own OpenAI-compatible server and model (optional). */
export interface AiKeyOptions {
  baseUrl?: string;
  model?: string;
}

export function vaultOptions(row: Pick<VaultSecretRow, "options">): AiKeyOptions {
  try {
    const o = JSON.parse(row.options || "{}") as AiKeyOptions;
    return { baseUrl: o.baseUrl || undefined, model: o.model || undefined };
  } catch {
    return {};
  }
}

export function toVaultRecord(row: VaultSecretRow) {
  const options = vaultOptions(row);
  return {
    name: row.name,
    label: row.label,
    hint: `…${row.hint}`,
    baseUrl: options.baseUrl ?? null,
    model: options.model ?? null,
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
  input: { secret: string; label?: string; baseUrl?: string; model?: string },
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
  const options: AiKeyOptions = {};
  const baseUrl = (input.baseUrl ?? "").trim();
  if (baseUrl) {
    let url: URL;
    try {
      url = new URL(baseUrl);
    } catch {
      throw invalid("baseUrl", "not a URL");
    }
    if (!/^https?:$/.test(url.protocol) || url.username || url.password || baseUrl.length > 512)
      throw invalid("baseUrl", "an http(s) URL of at most 512 characters, without credentials");
    options.baseUrl = url.toString().replace(/\/$/, "");
  }
  const model = (input.model ?? "").trim();
  if (model) {
    if (model.length > 128 || /\s|\p{Cc}/u.test(model))
      throw invalid("model", "at most 128 characters, no spaces");
    options.model = model;
  }
  const now = nowIso();
  const existing = await tx.vault.get(userId, n);
  const row: VaultSecretRow = {
    user_id: userId,
    name: n,
    label,
    hint: secret.slice(-4),
    created_at: existing?.created_at ?? now,
    updated_at: now,
    options: JSON.stringify(options),
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
): Promise<{ secret: string; options: AiKeyOptions } | null> {
  const row = await tx.vault.get(userId, name);
  return row ? { secret: sealer.open(row.ciphertext), options: vaultOptions(row) } : null;
}
