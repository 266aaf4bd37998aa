// A loopback HTTP proxy between one device and the service that misbehaves as a network does, on
// the test's say: the link cut (connections dropped, new ones refused), answers held back for a
// random while (so answers to requests in flight come back in another order than asked), an answer
// lost after the service applied the request, or a request delivered twice (a retransmit: the
// service sees it again; the device gets one answer). Every exchange can be traced (method, path,
// bodies, status) for a failure's report. Randomness comes from the rng passed in: one seed, one run.
import { createServer, type IncomingHttpHeaders, request } from "node:http";
import type { AddressInfo } from "node:net";

export interface Faults {
  /** Every connection dropped now, every request refused until restored. */
  cut: boolean;
  /** Each answer held back a uniformly random time in [0, delayMs] (ms): reorders answers in flight. */
  delayMs: number;
  /** Chance an answer is lost after the service applied the request (the connection is dropped). */
  loseAnswer: number;
  /** Chance a request goes to the service twice, one after the other (the device sees the first answer). */
  duplicate: number;
  /** The device is stopped (SIGSTOP): requests and answers wait until it goes on. */
  paused: boolean;
}

export const CLEAN: Faults = { cut: false, delayMs: 0, loseAnswer: 0, duplicate: 0, paused: false };

export interface Exchange {
  method: string;
  path: string;
  request: string;
  status: number | "cut" | "lost";
  answer: string;
  duplicated: boolean;
}

export interface FaultProxy {
  url: string;
  /** The faults in force from now on (a cut drops the connections open now). */
  set(faults: Partial<Faults>): void;
  faults(): Faults;
  /** Counts of what the proxy did, by kind. */
  counts: { requests: number; cut: number; delayed: number; lost: number; duplicated: number };
  /** Points the proxy at another upstream (a service restarted on a new port). */
  retarget(url: string): void;
  close(): Promise<void>;
}

export interface FaultProxyOptions {
  /** A number in [0, 1), seeded by the test. */
  random: () => number;
  /** Called with every exchange once it ended (for tracing). */
  trace?: (e: Exchange) => void;
  /** Long polls are not delayed or duplicated (a held poll just waits longer); paths matched here. */
  exempt?: (method: string, path: string) => boolean;
}

const isPoll = (method: string, path: string) => method === "GET" && path === "/api/v1/changes";

export async function startFaultProxy(target: string, o: FaultProxyOptions): Promise<FaultProxy> {
  let upstream = new URL(target);
  let faults: Faults = { ...CLEAN };
  // Resolved when a pause ends (a new one each pause).
  let resumed = Promise.resolve();
  let resume = () => {};
  const goOn = async () => {
    while (faults.paused) await resumed;
  };
  const exempt = o.exempt ?? isPoll;
  const counts = { requests: 0, cut: 0, delayed: 0, lost: 0, duplicated: 0 };

  const forward = (method: string, url: string, headers: IncomingHttpHeaders, body: Buffer) =>
    new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const up = request(
        { hostname: upstream.hostname, port: upstream.port, path: url, method, headers },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on("data", (c: Buffer) => chunks.push(c));
          answer.on("end", () =>
            resolve({
              status: answer.statusCode ?? 502,
              headers: answer.headers,
              body: Buffer.concat(chunks),
            }),
          );
          answer.on("error", reject);
        },
      );
      up.on("error", reject);
      up.end(body);
    });

  const server = createServer((req, res) => {
    const method = req.method ?? "GET";
    const url = req.url ?? "/";
    const path = url.split("?")[0]!;
    counts.requests++;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      await goOn();
      const body = Buffer.concat(chunks);
      const log = (status: Exchange["status"], answer: string, duplicated = false) =>
        o.trace?.({ method, path: url, request: body.toString(), status, answer, duplicated });
      if (faults.cut) {
        counts.cut++;
        log("cut", "");
        req.socket.destroy();
        return;
      }
      const plain = exempt(method, path);
      const twice = !plain && o.random() < faults.duplicate;
      const lose = !plain && o.random() < faults.loseAnswer;
      const wait = plain || faults.delayMs <= 0 ? 0 : Math.floor(o.random() * faults.delayMs);
      try {
        const answer = await forward(method, url, req.headers, body);
        if (twice) {
          // A retry on the way (a proxy's, a load balancer's): the service sees it again, the
          // device gets the first answer.
          counts.duplicated++;
          await forward(method, url, req.headers, body).catch(() => undefined);
        }
        if (wait > 0) {
          counts.delayed++;
          await new Promise((r) => setTimeout(r, wait));
        }
        await goOn();
        if (lose || faults.cut) {
          counts.lost++;
          log("lost", answer.body.toString(), twice);
          req.socket.destroy();
          return;
        }
        // Traced once it reached the device: a client that gave up meanwhile never had it.
        res.on("finish", () => log(answer.status, answer.body.toString(), twice));
        const headers = { ...answer.headers };
        delete headers["transfer-encoding"];
        headers["content-length"] = String(answer.body.length);
        res.writeHead(answer.status, headers);
        res.end(answer.body);
      } catch {
        log("cut", "");
        res.destroy();
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    set(next) {
      const wasPaused = faults.paused;
      faults = { ...faults, ...next };
      if (faults.paused && !wasPaused) resumed = new Promise<void>((r) => (resume = r));
      if (!faults.paused && wasPaused) resume();
      if (faults.cut) server.closeAllConnections();
    },
    faults: () => ({ ...faults }),
    counts,
    retarget(url) {
      upstream = new URL(url);
    },
    close: () =>
      new Promise<void>((resolve) => {
        faults = { ...CLEAN, cut: true };
        resume();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
