// Cross-server signals over LISTEN/NOTIFY: every committing write transaction notifies (inside the
// transaction, so the message is delivered only if and when it commits); each server listens on one
// dedicated connection, drops its read-through cache and wakes its change-feed long-polls.
import pg from "pg";
import type { Logger } from "../../lib/logger.ts";

export const CHANNEL = "txtfs_changes";
/** NOTIFY payloads must stay under 8000 bytes; beyond that, "every account" is announced. */
const MAX_PAYLOAD = 7000;

export interface ChangeMessage {
  /** The announcing store instance (its own messages are ignored: it already acted on commit). */
  origin: string;
  /** Accounts whose feed moved, or "*" for all. */
  accounts: string[] | "*";
}

export function encodeChange(origin: string, accounts: readonly string[]): string {
  const payload = JSON.stringify({ origin, accounts: [...new Set(accounts)] });
  return payload.length <= MAX_PAYLOAD ? payload : JSON.stringify({ origin, accounts: "*" });
}

export interface ChangeBusHandlers {
  /** Another server committed (or the connection was lost and changes may have been missed). */
  onChange(message: ChangeMessage): void;
}

export class ChangeBus {
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** True while LISTEN is active: only then may other servers' changes be assumed to reach us. */
  listening = false;

  private readonly config: pg.ClientConfig;
  private readonly origin: string;
  private readonly handlers: ChangeBusHandlers;
  private readonly log: Logger | undefined;

  constructor(config: pg.ClientConfig, origin: string, handlers: ChangeBusHandlers, log?: Logger) {
    this.config = config;
    this.origin = origin;
    this.handlers = handlers;
    this.log = log;
  }

  /** Starts listening (idempotent); resolves once LISTEN is active or the attempt failed. */
  start(): Promise<void> {
    if (this.closed || this.listening) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ application_name: "txtfs-listen", ...this.config });
    client.on("error", (err) => this.lost(client, err));
    client.on("end", () => this.lost(client));
    client.on("notification", (msg) => {
      if (msg.channel !== CHANNEL || !msg.payload) return;
      let parsed: ChangeMessage;
      try {
        parsed = JSON.parse(msg.payload) as ChangeMessage;
      } catch {
        return;
      }
      if (parsed.origin !== this.origin) this.handlers.onChange(parsed);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (err) {
      this.log?.warn({ err }, "postgres: could not LISTEN for other servers' changes; retrying");
      await client.end().catch(() => {});
      this.scheduleRetry();
      return;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.listening = true;
    // Anything committed while we were not listening may have been missed: treat it as changed.
    this.handlers.onChange({ origin: "", accounts: "*" });
  }

  private lost(client: pg.Client, err?: Error): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.listening = false;
    if (this.closed) return;
    this.log?.warn({ err }, "postgres: lost the LISTEN connection; reconnecting");
    this.handlers.onChange({ origin: "", accounts: "*" });
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.start();
    }, 1000);
    this.retryTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.connecting?.catch(() => {});
    const client = this.client;
    this.client = undefined;
    this.listening = false;
    await client?.end().catch(() => {});
  }
}
