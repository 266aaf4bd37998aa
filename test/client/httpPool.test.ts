// The client's transport (src/client/http.ts) against a real server on loopback: connections are
// kept and reused, a deadline ends a request, and a kept connection the server closed as a request
// went out on it is retried once, for reads, deletes and writes with an Idempotency-Key only.
import { createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { HttpPool } from "../../src/client/http.ts";

let server: Server | undefined;
afterEach(async () => {
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = undefined;
});

/**
 * A raw HTTP/1.1 server: `answer(n, socket)` is called for the n-th request (0-based) read on any
 * connection and returns the response text, or null to close the connection without answering.
 */
async function rawServer(answer: (n: number, socket: Socket) => string | null) {
  let n = 0;
  const connections: Socket[] = [];
  server = createServer((socket) => {
    connections.push(socket);
    let buf = "";
    socket.on("data", (d) => {
      buf += d.toString("latin1");
      for (;;) {
        const end = buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = buf.slice(0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        buf = buf.slice(end + 4 + length);
        const res = answer(n++, socket);
        if (res === null) socket.destroy();
        else socket.write(res);
      }
    });
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  const port = (server!.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}`, connections, requests: () => n };
}

const ok = (body: string) =>
  `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: keep-alive\r\n\r\n${body}`;
const call = (pool: HttpPool, method: string, headers: Record<string, string> = {}, ms = 2000) =>
  pool.request({
    method,
    path: "/api/x?y=1",
    headers,
    body: method === "GET" ? undefined : "{}",
    signal: AbortSignal.timeout(ms),
  });

describe("the client's HTTP transport", () => {
  it("keeps one connection for requests one after another, and reads bodies whole (UTF-8 across chunks)", async () => {
    const s = await rawServer((n) => ok(JSON.stringify({ n, text: "é✓".repeat(5000) })));
    const pool = new HttpPool(s.url, 8);
    for (let i = 0; i < 5; i++) {
      const res = await call(pool, "GET");
      expect(res.statusCode).toBe(200);
      expect(JSON.parse(await res.text())).toEqual({ n: i, text: "é✓".repeat(5000) });
    }
    expect(s.connections).toHaveLength(1);
    await pool.close();
  });

  it("says when bytes of an answer arrive (its head and each chunk), never for a request left unanswered", async () => {
    const s = await rawServer((n) => (n === 1 ? null : ok(JSON.stringify({ text: "x".repeat(200_000) }))));
    let answers = 0;
    const pool = new HttpPool(s.url, 8, () => answers++);
    const res = await call(pool, "GET");
    const head = answers;
    expect(head).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(await res.text()).text).toHaveLength(200_000);
    expect(answers).toBeGreaterThan(head);
    const before = answers;
    await expect(call(pool, "PUT")).rejects.toThrow();
    expect(answers).toBe(before);
    await pool.close();
  });

  it("a kept connection closed by the server as a GET or an idempotent write went out: sent again once", async () => {
    // Request 1 arrives on the kept connection and the server drops it unanswered.
    const s = await rawServer((n) => (n === 1 || n === 4 ? null : ok(`{"n":${n}}`)));
    const pool = new HttpPool(s.url, 8);
    await (await call(pool, "GET")).text();
    const res = await call(pool, "GET");
    expect(await res.text()).toBe('{"n":2}');
    await (await call(pool, "POST", { "idempotency-key": "k1" })).text(); // n=3
    const again = await call(pool, "POST", { "idempotency-key": "k2" }); // n=4 dropped, n=5
    expect(await again.text()).toBe('{"n":5}');
    await pool.close();
  });

  it("a delete on kept connections the server closed (a restart): sent again once, on a new connection", async () => {
    // Two connections kept; then every request on either is dropped, as a restarted server's are.
    let old: Socket[] = [];
    const s = await rawServer((n, socket) => (n >= 2 && old.includes(socket) ? null : ok(`{"n":${n}}`)));
    const pool = new HttpPool(s.url, 8);
    await Promise.all([call(pool, "GET"), call(pool, "GET")].map(async (r) => (await r).text()));
    old = [...s.connections];
    expect(old).toHaveLength(2);
    const res = await call(pool, "DELETE", { "if-match": '"1-x"' });
    expect(await res.text()).toBe('{"n":3}');
    expect(s.connections).toHaveLength(3);
    await pool.close();
  });

  it("a write without an Idempotency-Key is not sent again: its caller hears of it", async () => {
    const s = await rawServer((n) => (n === 1 ? null : ok(`{"n":${n}}`)));
    const pool = new HttpPool(s.url, 8);
    await (await call(pool, "GET")).text();
    await expect(call(pool, "PUT")).rejects.toThrow();
    expect(s.requests()).toBe(2);
    await pool.close();
  });

  it("a deadline ends a request the server never answers", async () => {
    const s = await rawServer(() => "");
    const pool = new HttpPool(s.url, 8);
    const started = Date.now();
    await expect(call(pool, "GET", {}, 150)).rejects.toThrow(/abort/i);
    expect(Date.now() - started).toBeLessThan(2000);
    await pool.destroy();
  });

  it("refuses a URL that is not http(s)", () => {
    expect(() => new HttpPool("ftp://127.0.0.1/", 8)).toThrow(/not an http/);
  });
});
