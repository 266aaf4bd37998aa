// Pieces of sign-in without a server: realtime normalization, OAuth scope grants, the vault cipher.
import { randomBytes } from "node:crypto";
import { describe, expect, test } from "vitest";
import { keyScopesOfOAuth } from "../../../src/server/domain/scopes.ts";
import { normalizeRealtime } from "../../../src/server/identity/realtime.ts";
import { createVaultCipher } from "../../../src/server/identity/vaultCipher.ts";

describe("normalizeRealtime", () => {
  test("connectable only when configured, not off, and with a sync server", () => {
    expect(
      normalizeRealtime({ realtime: { configured: true, syncMode: "live", syncServer: "wss://s" } }),
    ).toEqual({
      configured: true,
      syncMode: "live",
      syncServer: "wss://s",
      connectable: true,
    });
    expect(normalizeRealtime({ configured: true, syncMode: "OFF", syncServer: "wss://s" }).connectable).toBe(
      false,
    );
    expect(normalizeRealtime({ configured: true, syncMode: "live", syncServer: "  " })).toMatchObject({
      syncServer: null,
      connectable: false,
    });
    expect(
      normalizeRealtime({ configured: "yes", syncMode: "live", syncServer: "wss://s" }).connectable,
    ).toBe(false);
    expect(normalizeRealtime({ configured: true, sync_mode: "push", sync_server: "wss://t" })).toMatchObject({
      syncMode: "push",
      connectable: true,
    });
    expect(normalizeRealtime(null)).toEqual({
      configured: false,
      syncMode: "off",
      syncServer: null,
      connectable: false,
    });
  });
});

test("OAuth scopes grant key scopes; identity scopes grant none", () => {
  expect([...keyScopesOfOAuth(["files:read"])].sort()).toEqual([
    "collaboration:read",
    "files:read",
    "folders:read",
  ]);
  expect([...keyScopesOfOAuth(["files:share", "context:write"])].sort()).toEqual([
    "ai:read",
    "ai:use",
    "shares:read",
    "shares:write",
  ]);
  expect([...keyScopesOfOAuth(["context:read"])]).toEqual(["ai:read"]);
  expect(keyScopesOfOAuth(["openid", "profile", "email", "offline_access", "mcp:use"]).size).toBe(0);
});

test("the vault cipher seals with a fresh IV and detects tampering and other keys", () => {
  const cipher = createVaultCipher(randomBytes(32));
  const a = cipher.seal("sk-secret-value");
  const b = cipher.seal("sk-secret-value");
  expect(a).not.toBe(b);
  expect(a).not.toContain("secret");
  expect(cipher.open(a)).toBe("sk-secret-value");
  const parts = a.split(".");
  const flipped = Buffer.from(parts[3]!, "base64url");
  flipped[0] = flipped[0]! ^ 1;
  expect(() => cipher.open([...parts.slice(0, 3), flipped.toString("base64url")].join("."))).toThrow();
  expect(() => createVaultCipher(randomBytes(32)).open(a)).toThrow();
  expect(() => createVaultCipher(randomBytes(16))).toThrow();
});
