import type { Command } from "commander";
import { createLogger } from "../lib/logger.ts";
import { dataDir } from "../lib/paths.ts";
import { createKey, createUser } from "../server/domain/accounts.ts";
import { DEFAULT_TOMBSTONE_RETENTION_DAYS } from "../server/maintenance.ts";
import { startServer } from "../server/serve.ts";
import { redactUrl } from "../store/postgres/postgresStore.ts";
import { fromEnv, parsePort, parsePositiveInt, UsageError } from "./options.ts";

export const DEFAULT_PORT = 8750;

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("Run the Remote Text Filesystem Service (HTTP API) on the embedded store or PostgreSQL.")
    .option("--host <host>", "address to bind", process.env.TXTFS_HOST ?? "127.0.0.1")
    // No default here: TXTFS_PORT is read (and checked, naming the variable) only when serving.
    .option(
      "--port <port>",
      `port to listen on (0 = any free port; or TXTFS_PORT; default ${DEFAULT_PORT})`,
      parsePort,
    )
    .option("--data <dir>", "data directory (the embedded store lives here)", dataDir())
    .option(
      "--db <url>",
      "store: sqlite:PATH or postgres://USER@HOST:PORT/DB (default: txtfs.db under --data)",
      process.env.TXTFS_DB,
    )
    .option(
      "--user <email>",
      "email of the first user, created when the store has none",
      process.env.TXTFS_USER,
    )
    .option("--rate-limit <points>", "points per minute per key (reads 1, writes 5)", parsePositiveInt)
    .option(
      "--retention-days <days>",
      "how long delete tombstones stay in the change feed",
      parsePositiveInt,
      DEFAULT_TOMBSTONE_RETENTION_DAYS,
    )
    .option(
      "--webhook-allow-host <hosts>",
      "hosts (comma-separated) webhooks may be delivered to besides loopback",
      process.env.TXTFS_WEBHOOK_ALLOW_HOSTS ?? "",
    )
    .option(
      "--dev-idp",
      "run the development identity provider in-process (under /dev-idp) and accept its sign-ins",
    )
    .option(
      "--dev-idp-token-ttl <seconds>",
      "access-token lifetime of the dev identity provider",
      parsePositiveInt,
    )
    .option(
      "--idp-issuer <url>",
      "identity provider (OpenID Connect issuer) whose access tokens are accepted",
      process.env.TXTFS_IDP_ISSUER,
    )
    .option(
      "--idp-client-id <id>",
      "OAuth client id of txtfs at that provider",
      process.env.TXTFS_IDP_CLIENT_ID,
    )
    .option(
      "--idp-audience <aud>",
      "access-token audience that means this API",
      process.env.TXTFS_IDP_AUDIENCE,
    )
    .option("--idp-name <name>", "the provider's name (identity.provider)", process.env.TXTFS_IDP_NAME)
    .action(async (opts) => {
      if (opts.idpIssuer && opts.devIdp)
        throw new UsageError("use either --dev-idp or --idp-issuer, not both");
      if (opts.idpIssuer && !(opts.idpClientId && opts.idpAudience)) {
        throw new UsageError("--idp-issuer needs --idp-client-id and --idp-audience");
      }
      const port: number = opts.port ?? fromEnv("TXTFS_PORT", parsePort) ?? DEFAULT_PORT;
      const logger = createLogger("txtfs-serve");
      const server = await startServer({
        host: opts.host,
        port,
        dataDir: opts.data,
        db: opts.db,
        rateLimit: opts.rateLimit ? { limit: opts.rateLimit } : undefined,
        retentionDays: opts.retentionDays,
        logger,
        webhooks: {
          allowHosts: String(opts.webhookAllowHost)
            .split(",")
            .map((h: string) => h.trim())
            .filter(Boolean),
        },
        identity: opts.idpIssuer
          ? {
              name: opts.idpName ?? new URL(opts.idpIssuer).hostname,
              issuer: opts.idpIssuer,
              clientId: opts.idpClientId,
              audience: opts.idpAudience,
            }
          : undefined,
        devIdp: opts.devIdp ? { accessTokenTtl: opts.devIdpTokenTtl } : undefined,
      });
      const first = await server.store.transaction(async (tx) => {
        if ((await tx.users.list()).length > 0) return null;
        const user = await createUser(tx, opts.user ?? `${process.env.USER || "me"}@localhost`, "Local user");
        const { secret } = await createKey(tx, user.id, { label: "first key" });
        return { user, secret };
      });
      process.stdout.write(`txtfs ${server.url}  (data: ${opts.db ? redactUrl(opts.db) : opts.data})\n`);
      if (server.identity.devIdp) {
        process.stdout.write(
          `Dev identity provider ${server.identity.devIdp.issuer} (users alice, bob, carol; password: <user>-password)\n` +
            `Key page: ${server.url}/keys   Sign in from a shell: txtfs login --url ${server.url}\n`,
        );
      }
      if (first) {
        process.stdout.write(
          `Created the first user ${first.user.email} (${first.user.id}) and an API key with every scope.\n` +
            "It is shown only this once; keep it (more keys: txtfs admin key add EMAIL):\n" +
            `export TXTFS_URL=${server.url}\nexport TXTFS_API_KEY=${first.secret}\n`,
        );
      }
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) {
          logger.warn({ signal }, "second signal: exiting now");
          process.exit(1);
        }
        stopping = true;
        logger.info({ signal }, "shutting down: finishing in-flight requests");
        await server.close();
        logger.info("stopped cleanly");
        logger.flush();
        process.exit(0);
      };
      process.on("SIGTERM", () => void stop("SIGTERM"));
      process.on("SIGINT", () => void stop("SIGINT"));
    });
}
