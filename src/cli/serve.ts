import { type Command, Option } from "commander";
import { LOG_LEVELS } from "../lib/logLevels.ts";
import { dataDir } from "../lib/paths.ts";
import { addAiOptions, brainOptions } from "./aiOptions.ts";
import { attachmentLimits } from "./attachmentLimits.ts";
import { parseByteSize } from "./byteSize.ts";
import {
  fromEnv,
  logFormatOption,
  parsePort,
  parsePositiveInt,
  parseTrustProxy,
  UsageError,
} from "./options.ts";

export const DEFAULT_PORT = 8750;
/** Mirrors server/maintenance.ts (not imported: `--help` must not load the server). */
const DEFAULT_TOMBSTONE_RETENTION_DAYS = 90;

export function registerServe(program: Command): void {
  const serve = program
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
      "--attachment-max-bytes <size>",
      "largest attachment (a file that is not a note), e.g. 100MiB (or TXTFS_ATTACHMENT_MAX_BYTES; default 100MiB)",
      parseByteSize,
    )
    .option(
      "--attachment-quota-bytes <size>",
      "attachment bytes one account may own, e.g. 10GiB (or TXTFS_ATTACHMENT_QUOTA_BYTES; default 10GiB)",
      parseByteSize,
    )
    .option(
      "--retention-days <days>",
      "how long delete tombstones stay in the change feed",
      parsePositiveInt,
      DEFAULT_TOMBSTONE_RETENTION_DAYS,
    )
    .addOption(
      new Option(
        "--webhook-allow-host <hosts>",
        "hosts (comma-separated) webhooks may be delivered to besides loopback",
      ).default(process.env.TXTFS_WEBHOOK_ALLOW_HOSTS ?? "", process.env.TXTFS_WEBHOOK_ALLOW_HOSTS || "none"),
    )
    .option(
      "--trust-proxy <proxies>",
      "behind a reverse proxy: trust its X-Forwarded-For/-Proto/-Host (true, a hop count, or comma-separated addresses/CIDRs such as 127.0.0.1,10.0.0.0/8)",
      parseTrustProxy,
      process.env.TXTFS_TRUST_PROXY ? parseTrustProxy(process.env.TXTFS_TRUST_PROXY) : undefined,
    )
    .option(
      "--metrics-token <token>",
      "require `Authorization: Bearer TOKEN` on GET /metrics (default: open, like /healthz)",
      process.env.TXTFS_METRICS_TOKEN,
    )
    .option("--no-metrics", "do not serve GET /metrics")
    .addOption(
      new Option("--log-level <level>", "log level")
        .choices(LOG_LEVELS)
        .default(process.env.TXTFS_LOG_LEVEL ?? "info"),
    )
    .addOption(logFormatOption())
    .option(
      "--log-file <file>",
      "append logs to FILE instead of stderr (reopened on SIGHUP, for logrotate)",
      process.env.TXTFS_LOG_FILE,
    )
    .option("--log-requests", "one log line per request (or TXTFS_LOG_REQUESTS=1)")
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
    .option("--idp-name <name>", "the provider's name (identity.provider)", process.env.TXTFS_IDP_NAME);
  addAiOptions(serve, { quotas: true }).action(async (opts) => {
    if (opts.idpIssuer && opts.devIdp) throw new UsageError("use either --dev-idp or --idp-issuer, not both");
    if (opts.idpIssuer && !(opts.idpClientId && opts.idpAudience)) {
      throw new UsageError("--idp-issuer needs --idp-client-id and --idp-audience");
    }
    const port: number = opts.port ?? fromEnv("TXTFS_PORT", parsePort) ?? DEFAULT_PORT;
    const brain = brainOptions(opts);
    const attachments = attachmentLimits({
      maxBytes: opts.attachmentMaxBytes,
      quotaBytes: opts.attachmentQuotaBytes,
    });
    const { runServe } = await import("./serveRun.ts");
    await runServe({ ...opts, port, brain, attachments });
  });
}
