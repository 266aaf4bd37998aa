// Admin commands work directly on the store (no server needed; safe while one runs, thanks to WAL).
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { type Command, InvalidArgumentError, Option } from "commander";
import { dataDir } from "../lib/paths.ts";
import type { Tx } from "../store/store.ts";
import { parseDurationOption } from "./options.ts";

// The store and the domain are loaded when a command runs, not to print help.
const accounts = () => import("../server/domain/accounts.ts");

interface StoreOpts {
  data: string;
  db?: string;
}

async function withStore<T>(opts: StoreOpts, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const { openStore } = await import("../store/open.ts");
  const store = await openStore({ dataDir: opts.data, db: opts.db });
  try {
    return await store.transaction(fn);
  } finally {
    await store.close();
  }
}

const out = (line = "") => process.stdout.write(`${line}\n`);

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

function describeStore(s: {
  schemaVersion: number;
  bytes: number;
  users: number;
  files: number;
  folders: number;
  versions: number;
  feedChanges: number;
}): string {
  return `${s.users} users, ${s.files} notes, ${s.folders} folders, ${s.versions} versions, ${s.feedChanges} feed changes, schema ${s.schemaVersion}, ${mib(s.bytes)}`;
}

function postgresBackupHint(db: string): string {
  return /^postgres(ql)?:\/\//.test(db)
    ? "admin backup/restore copy the embedded store; back up PostgreSQL with pg_dump --format=custom and restore with pg_restore (see docs/operations.md)"
    : `unknown --db value ${JSON.stringify(db)}: expected sqlite:PATH or postgres://...`;
}

export function registerAdmin(program: Command): void {
  const admin = program.command("admin").description("Manage users and API keys directly on the store.");
  const storeOptions = (cmd: Command) =>
    cmd
      .option("--data <dir>", "data directory", dataDir())
      .option("--db <url>", "store: sqlite:PATH or postgres://...", process.env.TXTFS_DB);

  const user = admin.command("user").description("Users");
  storeOptions(user.command("add <email>").description("Create a user; prints its id."))
    .addOption(new Option("--name <name>", "display name").default("", "none"))
    .action(async (email: string, opts: StoreOpts & { name: string }) => {
      const { createUser } = await accounts();
      const row = await withStore(opts, (tx) => createUser(tx, email, opts.name));
      out(row.id);
    });
  storeOptions(user.command("list").description("List users.")).action(async (opts: StoreOpts) => {
    const users = await withStore(opts, (tx) => tx.users.list());
    for (const u of users) out(`${u.id}\t${u.email}\t${u.name}\t${u.created_at}\t${u.plan}`);
  });

  storeOptions(
    user
      .command("plan <email> [plan]")
      .description(
        "Show or set a user's plan: free (AI only with their own key) or pro (the server's AI provider too).",
      ),
  ).action(async (email: string, plan: string | undefined, opts: StoreOpts) => {
    const [{ PLANS }, { userByEmail }] = await Promise.all([
      import("../server/domain/brain/config.ts"),
      accounts(),
    ]);
    if (plan !== undefined && !(PLANS as readonly string[]).includes(plan)) {
      throw new InvalidArgumentError(`plan must be one of ${PLANS.join(", ")}`);
    }
    const row = await withStore(opts, async (tx) => {
      const u = await userByEmail(tx, email);
      if (plan) await tx.users.setPlan(u.id, plan);
      return { ...u, plan: plan ?? u.plan };
    });
    out(`${row.email}\t${row.plan}`);
  });

  const key = admin.command("key").description("API keys");
  storeOptions(
    key
      .command("add <email>")
      .description("Mint an API key; the full key is printed once, on the last line."),
  )
    .option("--scopes <list>", "comma-separated scopes (default: all)")
    .option("--expires <duration>", "lifetime such as 30d, 12h, 1y (default: never)", parseDurationOption)
    .addOption(new Option("--label <label>", "label to recognise the key by").default("", "none"))
    .action(async (email: string, opts: StoreOpts & { scopes?: string; expires?: number; label: string }) => {
      const { createKey, userByEmail } = await accounts();
      const result = await withStore(opts, async (tx) => {
        const u = await userByEmail(tx, email);
        return createKey(tx, u.id, {
          label: opts.label,
          scopes: opts.scopes
            ?.split(",")
            .map((s) => s.trim())
            .filter(Boolean),
          expiresIn: opts.expires,
        });
      });
      out(`id: ${result.key.id}`);
      out(`prefix: ${result.key.token_prefix}`);
      out(`scopes: ${result.key.scopes.join(",")}`);
      out(`expires: ${result.key.expires_at ?? "never"}`);
      out(result.secret);
    });
  storeOptions(key.command("list [email]").description("List keys (of one user, or all).")).action(
    async (email: string | undefined, opts: StoreOpts) => {
      const { listKeys, userByEmail } = await accounts();
      const rows = await withStore(opts, async (tx) => {
        const users = email ? [await userByEmail(tx, email)] : await tx.users.list();
        const all = [];
        for (const u of users) for (const k of await listKeys(tx, u.id)) all.push({ email: u.email, ...k });
        return all;
      });
      out(["id", "prefix", "user", "label", "scopes", "expires", "last used", "today", "status"].join("\t"));
      for (const k of rows) {
        const status = k.revoked_at
          ? "revoked"
          : k.expires_at && k.expires_at <= new Date().toISOString()
            ? "expired"
            : "active";
        out(
          [
            k.id,
            k.token_prefix,
            k.email,
            k.label,
            k.scopes.join(","),
            k.expires_at ?? "never",
            k.last_used_at ?? "never",
            k.requests_today,
            status,
          ].join("\t"),
        );
      }
    },
  );
  storeOptions(
    key.command("revoke <id>").description("Revoke a key by id; it stops working at once."),
  ).action(async (id: string, opts: StoreOpts) => {
    const { revokeKey } = await accounts();
    const k = await withStore(opts, (tx) => revokeKey(tx, id));
    out(`revoked ${k.id} (${k.token_prefix})`);
  });

  storeOptions(
    admin
      .command("backup")
      .description(
        "Write a consistent copy of the embedded store to FILE, safe while a server writes to it (PostgreSQL: use pg_dump, see docs/operations.md).",
      )
      .requiredOption("--to <file>", "where the backup goes (written whole and verified, or not at all)")
      .option("--force", "replace FILE if it exists"),
  ).action(async (opts: StoreOpts & { to: string; force?: boolean }) => {
    const [{ embeddedStorePath }, { backupSqlite }] = await Promise.all([
      import("../store/open.ts"),
      import("../store/sqlite/backup.ts"),
    ]);
    const source = embeddedStorePath({ dataDir: opts.data, db: opts.db });
    if (!source) throw new Error(postgresBackupHint(opts.db ?? ""));
    const started = Date.now();
    let last = 0;
    const summary = await backupSqlite(source, resolve(opts.to), {
      force: opts.force,
      onProgress: (copied, estimated) => {
        // Progress on stderr, at most every 500 ms.
        const now = Date.now();
        if (now - last < 500) return;
        last = now;
        process.stderr.write(`backup: ${mib(copied)} of about ${mib(estimated)}\n`);
      },
    });
    const { backupVaultKey } = await import("../server/identity/vaultKeyBackup.ts");
    const vault = backupVaultKey(opts.data, resolve(opts.to));
    out(
      `backed up ${source} to ${resolve(opts.to)} in ${((Date.now() - started) / 1000).toFixed(1)} s: ${describeStore(summary)}`,
    );
    out(vault);
  });

  storeOptions(
    admin
      .command("restore")
      .description(
        "Check a backup and install it as the embedded store (refused while a server uses the store; the store it replaces is kept beside it).",
      )
      .requiredOption("--from <file>", "a backup made by txtfs admin backup")
      .option("--force", "replace an existing store (kept as txtfs.db.before-restore-<time>)"),
  ).action(async (opts: StoreOpts & { from: string; force?: boolean }) => {
    const [{ embeddedStorePath, openStore }, { restoreSqlite }] = await Promise.all([
      import("../store/open.ts"),
      import("../store/sqlite/backup.ts"),
    ]);
    const target = embeddedStorePath({ dataDir: opts.data, db: opts.db });
    if (!target) throw new Error(postgresBackupHint(opts.db ?? ""));
    const vault = await import("../server/identity/vaultKeyBackup.ts");
    // Decided before anything changes: a key conflict must not leave a half-done restore.
    const key = vault.planVaultKeyRestore(opts.data, resolve(opts.from), Boolean(opts.force));
    const { summary, keptAs } = restoreSqlite(resolve(opts.from), target, { force: opts.force });
    if (key.install) vault.installVaultKey(opts.data, resolve(opts.from));
    // Opening it applies the migrations a backup from an older txtfs lacks.
    const store = await openStore({ dataDir: opts.data, db: opts.db });
    await store.close();
    if (keptAs) out(`the store it replaced is kept as ${keptAs}`);
    if (key.message) out(key.message);
    out(`restored ${resolve(opts.from)} to ${target}: ${describeStore(summary)}`);
  });

  admin
    .command("migrate")
    .description(
      "Copy an embedded store into an empty PostgreSQL database (everything: files, versions, feed positions, keys, shares), verified by row counts and hashes.",
    )
    .requiredOption("--from <sqlite:PATH>", "the embedded store, e.g. sqlite:~/.local/share/txtfs/txtfs.db")
    .requiredOption("--to <postgres://...>", "the PostgreSQL database (created beforehand, empty)")
    .action(async (opts: { from: string; to: string }) => {
      const [{ isPostgresUrl }, { copySqliteToPostgres }] = await Promise.all([
        import("../store/open.ts"),
        import("../store/copyStore.ts"),
      ]);
      if (!opts.from.startsWith("sqlite:")) throw new Error("--from must be sqlite:PATH");
      if (!isPostgresUrl(opts.to)) throw new Error("--to must be a postgres:// URL");
      const path = opts.from.slice("sqlite:".length);
      if (!existsSync(path)) throw new Error(`no embedded store at ${path}`);
      let last = 0;
      const result = await copySqliteToPostgres(path, opts.to, (table, done, total) => {
        // Progress on stderr: at the start and end of each table, and at most every 500 ms between.
        const now = Date.now();
        if (done !== 0 && done !== total && now - last < 500) return;
        last = now;
        process.stderr.write(`migrate: ${table} ${done}/${total}\n`);
      });
      out(["table", "rows", "sha256"].join("\t"));
      for (const t of result.tables) out([t.table, t.rows, t.hash].join("\t"));
      if (result.mismatches.length) {
        throw new Error(
          `the copy does not match the source, nothing was kept:\n${result.mismatches.join("\n")}`,
        );
      }
      const rows = result.tables.reduce((n, t) => n + t.rows, 0);
      out(`copied ${rows} rows in ${result.tables.length} tables; counts and hashes match`);
    });
}
