// txtfs login / logout / whoami: sign in with the service's identity provider from a shell.
import type { Command } from "commander";
import { readCliConfig, resolveCredentials } from "./credentials.ts";
import { fromEnv, parsePositiveInt, parseUrl, UsageError } from "./options.ts";

/** The sign-in client (jose, undici), loaded only when a command runs. */
const signIn = () => import("../client/signIn.ts");

export function registerLogin(program: Command): void {
  program
    .command("login")
    .description("Sign in with the service's identity provider (browser, PKCE); the mount then needs no key.")
    .option("--url <url>", "the txtfs service (or TXTFS_URL, or the saved one)", parseUrl)
    .option("--no-browser", "only print the sign-in URL (to open on any browser of this machine)")
    .option("--timeout <seconds>", "how long to wait for the browser", parsePositiveInt, 300)
    .action(async (opts) => {
      // A malformed config file is reported, not silently replaced by the sign-in's save.
      const config = await readCliConfig();
      const { login, SignInError } = await signIn();
      const url: string | undefined = opts.url ?? fromEnv("TXTFS_URL", parseUrl) ?? config.url;
      if (!url) throw new SignInError("no service: pass --url URL (or set TXTFS_URL)");
      const signedIn = await login({
        url,
        timeoutMs: opts.timeout * 1000,
        onAuthorizationUrl: async (authUrl) => {
          process.stderr.write(`Sign in at:\n${authUrl}\n`);
          if (!opts.browser) return;
          try {
            const { default: open } = await import("open");
            const child = await open(authUrl);
            child.on("error", () => process.stderr.write("Could not open a browser: open the URL above.\n"));
          } catch {
            process.stderr.write("Could not open a browser: open the URL above.\n");
          }
        },
      });
      const me = await fetch(`${signedIn.url}/api/me`, {
        headers: { authorization: `Bearer ${signedIn.accessToken}` },
      }).then((r) => r.json() as Promise<{ user?: { email: string } }>);
      process.stdout.write(
        `Signed in to ${signedIn.url} as ${me.user?.email ?? "?"} (${signedIn.provider}); access token valid until ${signedIn.expiresAt}, refreshed automatically.\n`,
      );
    });

  program
    .command("logout")
    .description("Revoke the signed-in tokens at the identity provider and forget them.")
    .action(async () => {
      const out = await (await signIn()).logout();
      if (!out.hadSignIn) process.stdout.write("Not signed in.\n");
      else
        process.stdout.write(
          out.revoked
            ? "Signed out (tokens revoked).\n"
            : "Signed out (tokens forgotten; the provider could not be told).\n",
        );
    });

  program
    .command("whoami")
    .description(
      "Show who txtfs acts as: the API key's owner (TXTFS_API_KEY, a key file, the config file) or the signed-in identity.",
    )
    .option("--json", "print the service's answer as JSON")
    .action(async (opts) => {
      // The same credential a mount would use: a key first, else the sign-in of txtfs login.
      const creds = resolveCredentials({}, await readCliConfig());
      if (creds.key) return whoamiByKey(creds.url, creds.key, creds.keyFrom ?? "", opts.json);
      const { currentSignIn, SignInError } = await signIn();
      const s = await currentSignIn();
      if (!s) throw new SignInError("not signed in: run txtfs login --url URL");
      const res = await fetch(`${s.url}/api/me`, { headers: { authorization: `Bearer ${s.accessToken}` } });
      const body = (await res.json()) as {
        user?: { email: string };
        identity?: { provider: string; subject: string } | null;
        error?: { message: string };
      };
      if (!res.ok)
        throw new SignInError(
          `the service refused the sign-in: ${body.error?.message ?? res.status}; run txtfs login`,
        );
      if (opts.json) {
        process.stdout.write(
          `${JSON.stringify({ user: body.user, identity: body.identity, expiresAt: s.expiresAt })}\n`,
        );
      } else {
        process.stdout.write(
          `${body.user?.email} via ${body.identity?.provider}:${body.identity?.subject} at ${s.url} (token valid until ${s.expiresAt})\n`,
        );
      }
    });
}

/** whoami with an API key: its owner, at which service, and where the key came from. */
async function whoamiByKey(url: string | undefined, key: string, keyFrom: string, json?: boolean) {
  if (!url)
    throw new UsageError(
      `an API key from ${keyFrom}, but no service: set TXTFS_URL (or pass it in the config file)`,
    );
  let res: Response;
  try {
    res = await fetch(`${url}/api/me`, { headers: { authorization: `Bearer ${key}` } });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause;
    throw new Error(`cannot reach the service at ${url} (${cause?.code ?? (err as Error).message})`);
  }
  const body = (await res.json().catch(() => ({}))) as {
    user?: { id: string; email: string; name?: string };
    error?: { message: string };
  };
  if (!res.ok) {
    throw new Error(
      `${url} refused the API key from ${keyFrom}: ${body.error?.message ?? res.status}; check the key or mint a new one (txtfs admin key add EMAIL on the server, or its /keys page)`,
    );
  }
  const prefix = key.slice(0, 8);
  process.stdout.write(
    json
      ? `${JSON.stringify({ user: body.user, url, key: { prefix, from: keyFrom } })}\n`
      : `${body.user?.email} at ${url}, with the API key ${prefix}… from ${keyFrom}\n`,
  );
}
