// MCP authorization as a real MCP client does it: the SDK's own OAuth client meets a 401 from /mcp,
// follows WWW-Authenticate's resource_metadata to the protected-resource metadata (RFC 9728), finds
// the dev identity provider there, signs in with PKCE asking for a token with `resource` = the MCP
// endpoint (RFC 8707), and lists the tools. Both stores.

import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEV_CLIENT_ID } from "../../src/server/identity/devIdp.ts";
import { loginAt } from "../helpers/oidc.ts";
import { expectError, startTestServer, type TestServer } from "../helpers/server.ts";

let t: TestServer;
let keysOnly: TestServer;

beforeAll(async () => {
  t = await startTestServer({ devIdp: {} });
  keysOnly = await startTestServer();
});
afterAll(async () => {
  await t.close();
  await keysOnly.close();
});

/** An MCP client's OAuth state, in memory; the "browser" is loginAt as alice. */
class TestOAuthClient implements OAuthClientProvider {
  readonly redirectUrl = "http://127.0.0.1:9/callback";
  verifier = "";
  saved: OAuthTokens | undefined;
  authorizationUrl: URL | undefined;
  get clientMetadata() {
    return {
      client_name: "mcp-oauth-test",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      scope: "openid mcp:use files:read files:write",
    };
  }
  clientInformation(): OAuthClientInformationMixed {
    return { client_id: DEV_CLIENT_ID };
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

describe("OAuth for MCP", () => {
  it("the protected-resource metadata names the provider, mcp:use and the resource", async () => {
    for (const path of ["/.well-known/oauth-protected-resource/mcp"]) {
      const res = await t.client().get(path);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({
        resource: `${t.url}/mcp`,
        authorization_servers: [`${t.url}/dev-idp`],
        bearer_methods_supported: ["header"],
      });
      expect(res.body.scopes_supported).toContain("mcp:use");
    }
    const unauthorized = await t.client().request("POST", "/mcp", {
      json: { jsonrpc: "2.0", id: 1, method: "tools/list" },
      headers: { accept: "application/json, text/event-stream" },
    });
    expectError(unauthorized, 401, "unauthenticated");
    expect(unauthorized.headers.get("www-authenticate")).toBe(
      `Bearer realm="txtfs", resource_metadata="${t.url}/.well-known/oauth-protected-resource/mcp"`,
    );
  });

  it("a server with API keys only says so: no metadata, no resource_metadata to follow", async () => {
    expectError(
      await keysOnly.client().get("/.well-known/oauth-protected-resource/mcp"),
      404,
      "oauth_not_configured",
    );
    const res = await keysOnly.client().request("POST", "/mcp", {
      json: { jsonrpc: "2.0", id: 1, method: "tools/list" },
      headers: { accept: "application/json, text/event-stream" },
    });
    expectError(res, 401, "unauthenticated");
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="txtfs"');
  });

  it("the whole dance with the SDK's OAuth client: discovery, PKCE, token with resource, tools/list", async () => {
    const oauth = new TestOAuthClient();
    const url = new URL(`${t.url}/mcp`);
    const first = new Client({ name: "mcp-oauth-test", version: "1" });
    await expect(
      first.connect(new StreamableHTTPClientTransport(url, { authProvider: oauth })),
    ).rejects.toThrow(/Unauthorized/i);
    // The client found the provider through the metadata and asks for the MCP resource, with PKCE.
    const auth = oauth.authorizationUrl!;
    expect(auth.origin + auth.pathname).toMatch(new RegExp(`^${t.url}/dev-idp/`));
    expect(auth.searchParams.get("resource")).toBe(`${t.url}/mcp`);
    expect(auth.searchParams.get("code_challenge_method")).toBe("S256");
    expect(auth.searchParams.get("scope")).toContain("mcp:use");

    const callback = await loginAt(auth.toString(), "alice", "alice-password", oauth.redirectUrl);
    const code = callback.searchParams.get("code")!;
    expect(code).toBeTruthy();
    const transport = new StreamableHTTPClientTransport(url, { authProvider: oauth });
    await transport.finishAuth(code);
    const claims = decodeJwt(oauth.saved!.access_token);
    expect(claims.aud).toBe(`${t.url}/mcp`);
    expect(String(claims.scope)).toContain("mcp:use");

    const client = new Client({ name: "mcp-oauth-test", version: "1" });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((x) => x.name)).toContain("memory_view");
      const wrote = (await client.callTool({
        name: "memory_create",
        arguments: { path: "/memories/signed-in.md", file_text: "by OAuth" },
      })) as { isError?: boolean; content: { text: string }[] };
      expect(wrote.isError, wrote.content[0]?.text).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  it("a token for another resource is refused at /mcp", async () => {
    const { signIn } = await import("../helpers/oidc.ts");
    const other = await signIn({
      issuer: `${t.url}/dev-idp`,
      user: "alice",
      password: "alice-password",
      scope: "openid mcp:use files:read",
      resource: "urn:example:other-api",
    });
    const res = await t.client(other.access_token).request("POST", "/mcp", {
      json: { jsonrpc: "2.0", id: 1, method: "tools/list" },
      headers: { accept: "application/json, text/event-stream" },
    });
    expectError(res, 401, "invalid_token");
  });
});
