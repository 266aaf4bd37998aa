// The credential a WebDAV client sends: HTTP Basic with any user name and the API key as the
// password (what every client can be told), or a bearer token. No credential: 401 with a
// challenge, so the client asks its user.
import type { IncomingHttpHeaders, ServerResponse } from "node:http";

export const CHALLENGE = 'Basic realm="txtfs", charset="UTF-8"';

/** The key in the request's Authorization header, or undefined. */
export function keyOf(headers: IncomingHttpHeaders): string | undefined {
  const h = headers.authorization?.trim();
  if (!h) return undefined;
  const bearer = /^bearer\s+(\S+)$/i.exec(h);
  if (bearer) return bearer[1];
  const basic = /^basic\s+(\S+)$/i.exec(h);
  if (!basic) return undefined;
  const decoded = Buffer.from(basic[1]!, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  const password = colon < 0 ? "" : decoded.slice(colon + 1);
  return password || undefined;
}

export function challenge(res: ServerResponse, why: string): void {
  res.statusCode = 401;
  res.setHeader("WWW-Authenticate", CHALLENGE);
  res.setHeader("Content-Type", "text/plain; charset=utf-8");
  res.end(`${why}\n`);
}
