// txtfs login / whoami / logout as child processes against a server with the dev identity
// provider: PKCE with a loopback redirect, tokens stored mode 0600, refresh, revocation.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { runTxtfs, spawnLogin, spawnServe } from "../helpers/cli.ts";
import { completeLogin, signIn, tokenRequest } from "../helpers/oidc.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let srv: TestServer;
let configDir: string;
const env = () => ({ TXTFS_CONFIG: configDir, TXTFS_URL: "" });
const config = () => JSON.parse(readFileSync(join(configDir, "config.json"), "utf8"));

beforeAll(async () => {
  // Tokens live 30 s: less than the CLI's 60 s refresh margin, so every use refreshes first.
  srv = await startTestServer({ devIdp: { accessTokenTtl: 30 } });
  configDir = mkdtempSync(join(tmpdir(), "txtfs-login-"));
});
afterAll(async () => {
  await srv?.close();
  rmSync(configDir, { recursive: true, force: true });
});

test("login (PKCE S256, loopback redirect), whoami refreshes, logout revokes", async () => {
  const login = await spawnLogin(["--url", srv.url], env());
  const auth = new URL(login.authUrl);
  expect(auth.searchParams.get("code_challenge_method")).toBe("S256");
  expect(auth.searchParams.get("code_challenge")).toMatch(/^[\w-]{43}$/);
  expect(auth.searchParams.get("redirect_uri")).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
  expect(auth.searchParams.get("client_id")).toBe("txtfs");

  const cb = await completeLogin(login.authUrl, "alice", "alice-password");
  expect(cb.status).toBe(200);
  expect(cb.text).toContain("Signed in");
  expect(await login.exited).toBe(0);
  expect(login.stdout()).toContain("as alice@dev.txtfs.test");

  const file = join(configDir, "config.json");
  expect(statSync(file).mode & 0o777).toBe(0o600);
  const first = config().signIn;
  expect(first).toMatchObject({ url: srv.url, provider: "dev", clientId: "txtfs" });
  expect(first.accessToken.split(".")).toHaveLength(3);
  expect(first.refreshToken).toBeTruthy();
  expect((await srv.client(first.accessToken).get("/api/me")).body.identity.subject).toBe("alice");

  // whoami: the token is within the refresh margin, so it is refreshed (and the refresh token rotated).
  const who = await runTxtfs(["whoami", "--json"], env());
  expect(who.code, who.stderr).toBe(0);
  expect(JSON.parse(who.stdout)).toMatchObject({
    user: { email: "alice@dev.txtfs.test" },
    identity: { subject: "alice" },
  });
  const second = config().signIn;
  expect(second.accessToken).not.toBe(first.accessToken);
  expect(second.refreshToken).not.toBe(first.refreshToken);
  expect(statSync(file).mode & 0o777).toBe(0o600);

  const out = await runTxtfs(["logout"], env());
  expect(out.code, out.stderr).toBe(0);
  expect(out.stdout).toContain("tokens revoked");
  expect(config().signIn).toBeUndefined();
  const reuse = await tokenRequest(`${srv.url}/dev-idp/token`, {
    grant_type: "refresh_token",
    refresh_token: second.refreshToken,
  });
  expect(reuse.status).toBe(400);
  expect(reuse.body.error).toBe("invalid_grant");
  const again = await runTxtfs(["whoami"], env());
  expect(again.code).toBe(1);
  expect(again.stderr).toContain("not signed in");
});

test("login gives up after --timeout, and refuses a server without an identity provider", async () => {
  const login = await spawnLogin(["--url", srv.url, "--timeout", "1"], env());
  expect(await login.exited).toBe(1);
  expect(login.stderr()).toContain("no answer within 1 s");

  const plain = await startTestServer();
  try {
    const res = await runTxtfs(["login", "--no-browser", "--url", plain.url], env());
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("has no identity provider");
  } finally {
    await plain.close();
  }
});

test("txtfs serve --dev-idp runs the provider in-process and accepts its sign-ins", async () => {
  const data = mkdtempSync(join(tmpdir(), "txtfs-devidp-"));
  const serve = await spawnServe(["--dev-idp", "--data", data]);
  try {
    for (let i = 0; i < 50 && !serve.stdout().includes("Key page"); i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(serve.stdout()).toContain(`Dev identity provider ${serve.url}/dev-idp`);
    const t = await signIn({ issuer: `${serve.url}/dev-idp`, user: "bob", password: "bob-password" });
    const me = await fetch(`${serve.url}/api/me`, { headers: { authorization: `Bearer ${t.access_token}` } });
    const body = (await me.json()) as { identity: { provider: string; subject: string } };
    expect(body.identity).toMatchObject({ provider: "dev", subject: "bob" });
    // A wrong password is refused at the provider's sign-in page.
    await expect(signIn({ issuer: `${serve.url}/dev-idp`, user: "bob", password: "nope" })).rejects.toThrow();
    expect(statSync(join(data, "dev-idp-key.json")).mode & 0o777).toBe(0o600);
    expect(statSync(join(data, "vault.key")).mode & 0o777).toBe(0o600);
  } finally {
    await serve.stop();
    rmSync(data, { recursive: true, force: true });
  }
});

test("the redirect is checked (oauth4webapi): a stray state is ignored, another issuer or an error ends the sign-in", async () => {
  const callback = (authUrl: string, params: Record<string, string>) => {
    const auth = new URL(authUrl);
    const target = new URL(auth.searchParams.get("redirect_uri")!);
    target.search = new URLSearchParams(params).toString();
    return fetch(target);
  };
  const issuer = `${srv.url}/dev-idp`;
  // A forged answer with the wrong issuer (RFC 9207 mix-up): refused, and the sign-in ends.
  const mixUp = await spawnLogin(["--url", srv.url], env());
  const state = new URL(mixUp.authUrl).searchParams.get("state")!;
  const stray = await callback(mixUp.authUrl, { state: "not-ours", code: "x", iss: issuer });
  expect(stray.status).toBe(400);
  expect(await stray.text()).toContain("does not belong to this sign-in");
  expect(mixUp.child.exitCode).toBe(null); // still waiting for the real answer
  const forged = await callback(mixUp.authUrl, { state, code: "x", iss: "http://127.0.0.1:1/evil" });
  expect(forged.status).toBe(400);
  expect(await mixUp.exited).toBe(1);
  expect(mixUp.stderr()).toMatch(/sign-in failed: the answer is not valid: .*iss/);

  // The provider's own refusal is said as it was given.
  const denied = await spawnLogin(["--url", srv.url], env());
  const deniedState = new URL(denied.authUrl).searchParams.get("state")!;
  await callback(denied.authUrl, {
    state: deniedState,
    iss: issuer,
    error: "access_denied",
    error_description: "the user said no",
  });
  expect(await denied.exited).toBe(1);
  expect(denied.stderr()).toContain(
    "sign-in failed: the identity provider said access_denied: the user said no",
  );
  // Nothing was saved.
  const saved = existsSync(join(configDir, "config.json")) ? config() : {};
  expect(saved.signIn).toBeUndefined();
});

test("whoami with a key (TXTFS_API_KEY, a key file) says whose it is and where it came from", async () => {
  const user = await srv.user("kim@example.com");
  const keyEnv = { ...env(), TXTFS_URL: srv.url, TXTFS_API_KEY: user.key };
  const who = await runTxtfs(["whoami"], keyEnv);
  expect(who.code, who.stderr).toBe(0);
  expect(who.stdout).toBe(
    `kim@example.com at ${srv.url}, with the API key ${user.key.slice(0, 8)}… from TXTFS_API_KEY\n`,
  );
  const json = await runTxtfs(["whoami", "--json"], keyEnv);
  expect(JSON.parse(json.stdout)).toMatchObject({
    user: { email: "kim@example.com" },
    url: srv.url,
    key: { prefix: user.key.slice(0, 8), from: "TXTFS_API_KEY" },
  });

  const keyFile = join(configDir, "kim.key");
  writeFileSync(keyFile, `${user.key}\n`, { mode: 0o600 });
  const fromFile = await runTxtfs(["whoami"], { ...env(), TXTFS_URL: srv.url, TXTFS_API_KEY_FILE: keyFile });
  expect(fromFile.stdout).toContain(`from TXTFS_API_KEY_FILE (${keyFile})`);

  const wrong = await runTxtfs(["whoami"], {
    ...keyEnv,
    TXTFS_API_KEY: "txt_NotAKeyOfThisServer000000000000000000",
  });
  expect(wrong.code).toBe(1);
  expect(wrong.stderr).toMatch(new RegExp(`^txtfs: ${srv.url} refused the API key from TXTFS_API_KEY`));

  const empty = mkdtempSync(join(tmpdir(), "txtfs-login-none-"));
  const noUrl = await runTxtfs(["whoami"], { TXTFS_CONFIG: empty, TXTFS_URL: "", TXTFS_API_KEY: user.key });
  rmSync(empty, { recursive: true, force: true });
  expect(noUrl.code).toBe(2);
  expect(noUrl.stderr).toBe(
    "txtfs: an API key from TXTFS_API_KEY, but no service: set TXTFS_URL (or pass it in the config file)\n",
  );
});

test("login on a service without an identity provider points at the key file, not --key", async () => {
  const plain = await startTestServer();
  try {
    const res = await runTxtfs(["login", "--no-browser", "--url", plain.url], env());
    expect(res.code).toBe(1);
    expect(res.stderr).not.toContain("--key)");
    expect(res.stderr).toContain("--key-file");
    expect(res.stderr).toContain("TXTFS_API_KEY");
  } finally {
    await plain.close();
  }
});
