// The vault key (DATA/vault.key) encrypts the identity tokens and credentials the store keeps: a
// backup of the store without it restores them unreadable. `admin backup` copies it beside the
// backup as FILE.vault.key, and `admin restore` puts it back. With TXTFS_VAULT_KEY the key lives
// in the environment and neither touches a file.
import { copyFileSync, existsSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";

export const vaultKeyBeside = (backupFile: string) => `${backupFile}.vault.key`;

/** Copies the data dir's vault key beside the backup; says what it did, for the operator. */
export function backupVaultKey(dataDir: string, backupFile: string): string {
  if (process.env.TXTFS_VAULT_KEY)
    return "vaulted credentials are encrypted with TXTFS_VAULT_KEY: keep that key with your backups, the backup does not hold it";
  const key = join(dataDir, "vault.key");
  if (!existsSync(key)) return "no vault key in the data directory (no credentials are vaulted yet)";
  copyFileSync(key, vaultKeyBeside(backupFile));
  return `the vault key is copied to ${vaultKeyBeside(backupFile)} (mode 0600): keep it with the backup, restoring vaulted credentials needs it`;
}

/** What restoring `backupFile`'s vault key into `dataDir` would do, or why it must not. */
export function planVaultKeyRestore(
  dataDir: string,
  backupFile: string,
  force: boolean,
): { install: boolean; message: string } {
  const saved = vaultKeyBeside(backupFile);
  if (!existsSync(saved)) return { install: false, message: "" };
  const current = join(dataDir, "vault.key");
  if (!existsSync(current)) return { install: true, message: `vault key restored from ${saved}` };
  if (readFileSync(current, "utf8").trim() === readFileSync(saved, "utf8").trim())
    return { install: false, message: "" };
  if (!force)
    throw new Error(
      `${current} differs from the backup's ${saved}; pass --force to replace it (the current one is kept beside it)`,
    );
  return { install: true, message: `vault key restored from ${saved} (the replaced one is kept beside it)` };
}

export function installVaultKey(dataDir: string, backupFile: string): void {
  const current = join(dataDir, "vault.key");
  if (existsSync(current))
    renameSync(current, `${current}.before-restore-${new Date().toISOString().replace(/[:.]/g, "-")}`);
  copyFileSync(vaultKeyBeside(backupFile), current);
}
