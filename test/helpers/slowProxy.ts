// A loopback HTTP proxy in front of a real service that holds chosen answers back for a while: a
// slow network or an overloaded service, as the mount sees it (each request still gets the
// service's own answer, only later).
import { createServer, type IncomingHttpHeaders, request } from "node:http";
import type { AddressInfo } from "node:net";

export interface SlowProxy {
  url: string;
  /** How many answers were held back so far. */
  held(): number;
  /** Drops every connection open now: answers on their way are lost (the listener stays). */
  cut(): void;
  close(): Promise<void>;
}

/**
 * `delayMs(method, path, headers)`: how long to hold that request's answer (0: pass it on at once;
 * below 0: the connection is cut before the request reaches the service, as when it is unreachable).
 */
export async function startSlowProxy(
  target: string,
  delayMs: (method: string, path: string, headers: IncomingHttpHeaders) => number,
): Promise<SlowProxy> {
  const to = new URL(target);
  let held = 0;
  const server = createServer((req, res) => {
    const wait = delayMs(req.method ?? "GET", (req.url ?? "/").split("?")[0]!, req.headers);
    if (wait < 0) {
      req.socket.destroy();
      return;
    }
    const upstream = request(
      { hostname: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        const pass = () => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        };
        if (wait > 0) {
          held++;
          setTimeout(pass, wait);
        } else pass();
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    held: () => held,
    cut: () => server.closeAllConnections(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
