// A webhook receiver written from the Standard Webhooks specification's description (not from the
// server's code): it checks `webhook-signature` (space-separated `v1,<base64>` entries, HMAC-SHA256
// with the base64-decoded secret after `whsec_`, over "id.timestamp.body"), compares in constant
// time, rejects timestamps more than 5 minutes away, and de-duplicates on `webhook-id`.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";

export interface Received {
  id: string;
  timestamp: number;
  body: string;
  event: { type: string; timestamp: string; data: Record<string, any> };
  verified: boolean;
}

export function verifySignature(
  secret: string,
  headers: Record<string, string | undefined>,
  body: string,
): boolean {
  const id = headers["webhook-id"];
  const ts = headers["webhook-timestamp"];
  const sigs = headers["webhook-signature"];
  if (!id || !ts || !sigs || !/^\d+$/.test(ts)) return false;
  if (Math.abs(Date.now() / 1000 - Number(ts)) > 300) return false;
  const key = Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64");
  const expected = createHmac("sha256", key).update(`${id}.${ts}.${body}`).digest();
  return sigs.split(" ").some((entry) => {
    const [version, sig] = entry.split(",", 2);
    if (version !== "v1" || !sig) return false;
    const given = Buffer.from(sig, "base64");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

export class WebhookReceiver {
  secret = "";
  /** Answer this status to the next N requests (then 204). */
  failNext = 0;
  failStatus = 500;
  readonly received: Received[] = [];
  readonly attempts: string[] = [];
  private readonly seen = new Set<string>();
  private server: Server | undefined;
  port = 0;

  async start(port = 0): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        const h = req.headers as Record<string, string | undefined>;
        this.attempts.push(h["webhook-id"] ?? "?");
        if (this.failNext > 0) {
          this.failNext--;
          res.writeHead(this.failStatus).end("not now");
          return;
        }
        const verified = verifySignature(this.secret, h, body);
        if (!verified) {
          res.writeHead(401).end("bad signature");
          return;
        }
        const id = h["webhook-id"] as string;
        if (!this.seen.has(id)) {
          this.seen.add(id);
          this.received.push({
            id,
            timestamp: Number(h["webhook-timestamp"]),
            body,
            event: JSON.parse(body),
            verified,
          });
        }
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, "127.0.0.1", resolve));
    const addr = this.server.address();
    this.port = typeof addr === "object" && addr ? addr.port : port;
  }

  get url() {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }
}

/** Polls `check` every 50 ms until it holds or `ms` pass (then throws with `what`). */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string,
  ms = 10_000,
): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}
