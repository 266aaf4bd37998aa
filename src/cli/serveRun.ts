// `txtfs serve` once its options are parsed: logs, the server, the first user, signals.
import { createLogger, type LogFormat, logFile, logWritten, stderrLog } from "../lib/logger.ts";
import { createKey, createUser } from "../server/domain/accounts.ts";
import type { AttachmentLimits } from "../server/domain/attachments/rules.ts";
import type { BrainConfig } from "../server/domain/brain/config.ts";
import { startServer } from "../server/serve.ts";
import { redactUrl } from "../store/postgres/postgresStore.ts";

export interface ServeCliOptions {
  host: string;
  port: number;
  data: string;
  db?: string;
  user?: string;
  rateLimit?: number;
  retentionDays: number;
  webhookAllowHost: string;
  trustProxy?: boolean | number | string[];
  metricsToken?: string;
  metrics: boolean;
  logLevel: string;
  logFormat?: LogFormat;
  logFile?: string;
  logRequests?: boolean;
  devIdp?: boolean;
  devIdpTokenTtl?: number;
  idpIssuer?: string;
  idpClientId?: string;
  idpAudience?: string;
  idpName?: string;
  /** The operator's AI provider (serve.ts reads its flags, key file and environment). */
  brain?: Partial<BrainConfig>;
  /** Attachments: the largest one and an account's quota, in bytes (absent: the defaults). */
  attachments?: Partial<AttachmentLimits>;
}

export async function runServe(opts: ServeCliOptions): Promise<void> {
  const file = opts.logFile ? logFile(opts.logFile) : undefined;
  const logger = createLogger("txtfs-serve", opts.logLevel, file ?? stderrLog(opts.logFormat));
  const server = await startServer({
    host: opts.host,
    port: opts.port,
    dataDir: opts.data,
    db: opts.db,
    rateLimit: opts.rateLimit ? { limit: opts.rateLimit } : undefined,
    retentionDays: opts.retentionDays,
    logger,
    attachments: opts.attachments,
    logRequests: opts.logRequests || process.env.TXTFS_LOG_REQUESTS === "1",
    trustProxy: opts.trustProxy,
    metrics: opts.metrics ? { token: opts.metricsToken } : false,
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
          clientId: opts.idpClientId!,
          audience: opts.idpAudience!,
        }
      : undefined,
    devIdp: opts.devIdp ? { accessTokenTtl: opts.devIdpTokenTtl } : undefined,
    brain: opts.brain,
  });
  // A reader of our output that went away (the program that started us died) is no reason to stop
  // serving: what is printed is for whoever reads it.
  for (const out of [process.stdout, process.stderr])
    out.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code !== "EPIPE") throw err;
    });
  // Signals are handled before the URL is printed: a supervisor that reads it may stop us at once.
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
    await logWritten(logger);
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  // SIGHUP: logrotate moved the log file; write to a fresh one under the configured name.
  process.on("SIGHUP", () => {
    if (file) {
      file.reopen();
      logger.info({ file: opts.logFile }, "log file reopened (SIGHUP)");
    } else {
      logger.info("SIGHUP: nothing to reload (logs go to stderr)");
    }
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
        `export TXTFS_URL=${server.url}\nexport TXTFS_API_KEY=${first.secret}\n` +
        "With those set, txtfs open keys (or dashboard, playground) opens that page signed in.\n",
    );
  }
  const metricsOpen = opts.metrics && !opts.metricsToken;
  if (metricsOpen && !isLoopback(opts.host))
    logger.warn(
      { host: opts.host },
      "GET /metrics answers anyone who reaches this address: set --metrics-token, or block /metrics at the proxy",
    );
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host.startsWith("127.");
}
