// txtfs open keys|dashboard|playground: the page in a browser, signed in. The CLI proves it holds an
// all-scopes key of the service (the local user's in local use) and gets a one-time link that the
// browser trades for the session cookie (docs/api.md, "One-time sign-in links").
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { dataDir } from "../lib/paths.ts";
import { rememberedPort } from "./mountIdentity.ts";
import { UsageError } from "./options.ts";
import { call, type Service, service } from "./serviceCall.ts";

const PAGES = ["keys", "dashboard", "playground"] as const;

/** The service `txtfs mount --serve --data DATA` runs (or ran) here: its port and local key. */
function localService(data: string): Service | null {
  const keyFile = join(data, "mount.key");
  const port = rememberedPort(data);
  if (!port || !existsSync(keyFile)) return null;
  return { url: `http://127.0.0.1:${port}`, key: readFileSync(keyFile, "utf8").trim() };
}

export function registerOpen(program: Command): void {
  program
    .command("open [page]")
    .description(
      "Open the key page, the usage dashboard or the playground (keys|dashboard|playground) signed in, through a one-time link (needs a key with every scope).",
    )
    .option("--url <url>", "service URL (or TXTFS_URL)")
    .option("--key <key>", "API key (or TXTFS_API_KEY)")
    .option("--data <dir>", "with no service configured: the one txtfs mount --serve runs on DIR", dataDir())
    .option("--no-browser", "only print the link (it works once, within a minute)")
    .action(async (page: string | undefined, opts) => {
      const wanted = page ?? "keys";
      if (!(PAGES as readonly string[]).includes(wanted))
        throw new UsageError(`no page ${wanted}: use one of ${PAGES.join(", ")}`);
      const svc = await service(opts).catch((err: Error) => {
        const local = localService(opts.data);
        if (local) return local;
        throw err;
      });
      const link = await call<{ path: string; expiresAt: string }>(svc, "POST", "/api/me/session/link", {
        json: { page: wanted },
      });
      // Joined to the URL this CLI uses: the server's idea of its own host may differ behind a proxy.
      const url = svc.url + link.path;
      if (!opts.browser) {
        process.stdout.write(`${url}\n`);
        return;
      }
      try {
        const { default: open } = await import("open");
        const child = await open(url);
        child.on("error", () => process.stderr.write(`Could not open a browser; open this once:\n${url}\n`));
        process.stderr.write(`Opening the ${wanted} page of ${svc.url}, signed in.\n`);
      } catch {
        process.stderr.write(`Could not open a browser; open this once, within a minute:\n${url}\n`);
      }
    });
}
