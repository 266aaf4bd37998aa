// The client's HTTP transport: Node's own http/https with a keep-alive agent (a few connections,
// reused). Node's client is part of the binary, so the mount daemon loads ~4 MiB for it where
// undici's Pool, with the rest of undici it pulls in, cost ~28 MiB of RSS (docs/benchmarks.md).
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

export interface HttpRequest {
  method: string;
  /** Path and query, appended to the base URL's path. */
  path: string;
  headers: Record<string, string>;
  /** Text (JSON), or bytes exactly as given (an attachment's). */
  body?: string | Buffer;
  signal: AbortSignal;
}

export interface HttpResponse {
  statusCode: number;
  headers: IncomingMessage["headers"];
  /** The body as it arrives (read it once: this, or `text()`). */
  body: AsyncIterable<Buffer>;
  text(): Promise<string>;
}

export class HttpPool {
  private readonly base: URL;
  private readonly agent: HttpAgent;
  private readonly send: typeof httpRequest;
  private inFlight = 0;
  private idle: (() => void) | undefined;
  /** Called whenever bytes of an answer arrive (its head, each chunk of its body). */
  private readonly answered: () => void;

  constructor(url: string, connections: number, answered: () => void = () => {}) {
    this.answered = answered;
    this.base = new URL(url);
    const https = this.base.protocol === "https:";
    if (!https && this.base.protocol !== "http:") throw new Error(`not an http(s) URL: ${url}`);
    const opts = { keepAlive: true, maxSockets: connections, scheduling: "lifo" as const };
    this.agent = https ? new HttpsAgent(opts) : new HttpAgent(opts);
    this.send = https ? httpsRequest : httpRequest;
  }

  async request(r: HttpRequest): Promise<HttpResponse> {
    this.inFlight++;
    try {
      try {
        return await this.once(r);
      } catch (err) {
        // The server closed a kept-alive connection as this request went out on it (its idle
        // timeout, or a restart): a read, a delete (done twice, the second finds it gone), or a
        // write it recognises by its Idempotency-Key goes again once on a new connection. Any
        // other write is left to its caller (the journal retries it).
        const again =
          r.method === "GET" || r.method === "DELETE" || r.headers["idempotency-key"] !== undefined;
        if (again && (err as { reusedSocket?: boolean }).reusedSocket && !r.signal.aborted) {
          this.dropIdle(); // kept as long, closed too most likely: the retry gets a new connection
          return await this.once(r);
        }
        throw err;
      }
    } finally {
      if (--this.inFlight === 0) this.idle?.();
    }
  }

  private once(r: HttpRequest): Promise<HttpResponse> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { ...r.headers };
      if (r.body !== undefined) headers["content-length"] = Buffer.byteLength(r.body);
      const req = this.send(
        {
          protocol: this.base.protocol,
          hostname: this.base.hostname,
          port: this.base.port,
          path: this.base.pathname.replace(/\/$/, "") + r.path,
          method: r.method,
          headers,
          agent: this.agent,
          signal: r.signal,
        },
        (res) => {
          this.answered();
          const answered = this.answered;
          const body = (async function* () {
            for await (const chunk of res) {
              answered();
              yield chunk as Buffer;
            }
          })();
          resolve({
            statusCode: res.statusCode ?? 0,
            headers: res.headers,
            body,
            text: async () => {
              const chunks: Buffer[] = [];
              for await (const chunk of body) chunks.push(chunk);
              return Buffer.concat(chunks).toString("utf8");
            },
          });
        },
      );
      req.on("error", (err: Error & { code?: string; reusedSocket?: boolean }) => {
        if (req.reusedSocket && err.code === "ECONNRESET") err.reusedSocket = true;
        reject(err);
      });
      req.end(r.body);
    });
  }

  /** Ends the kept connections no request uses now. */
  private dropIdle(): void {
    for (const sockets of Object.values(this.agent.freeSockets))
      for (const socket of sockets ?? []) socket.destroy();
  }

  /** Waits for the requests in flight, then ends every connection. */
  async close(): Promise<void> {
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    this.agent.destroy();
  }

  /** Ends every connection now (requests in flight fail). */
  async destroy(): Promise<void> {
    this.agent.destroy();
  }
}
