// `txtfs dav`'s HTTP(S) server: CORS, then the one key it accepts (Basic password or bearer),
// then the protocol layer on one site.
import { timingSafeEqual } from "node:crypto";
import {
  createServer as createHttp,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttps } from "node:https";
import type { Logger } from "../lib/logger.ts";
import { challenge, keyOf } from "./auth.ts";
import { cors } from "./cors.ts";
import { handleDav } from "./handler.ts";
import type { KeptSite } from "./request.ts";

export interface DavServerOptions {
  site: KeptSite;
  /** The credential clients must present. */
  key: string;
  log: Logger;
  tls?: { cert: Buffer; key: Buffer };
}

function sameKey(given: string | undefined, key: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(key);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function createDavServer(opts: DavServerOptions): Server {
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    if (cors(req, res)) return;
    if (!sameKey(keyOf(req.headers), opts.key)) {
      req.resume();
      return challenge(
        res,
        "txtfs: an API key is needed (as the password, any user name, or a bearer token)",
      );
    }
    void handleDav(req, res, { prefix: "/", site: opts.site, log: opts.log });
  };
  return opts.tls ? createHttps({ cert: opts.tls.cert, key: opts.tls.key }, serve) : createHttp(serve);
}

/** Listens on host:port; resolves with the URL it serves. */
export function listen(server: Server, host: string, port: number, tls: boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      const addr = server.address();
      const p = typeof addr === "object" && addr ? addr.port : port;
      const shown = host.includes(":") ? `[${host}]` : host;
      resolve(`${tls ? "https" : "http"}://${shown}:${p}/`);
    });
  });
}
