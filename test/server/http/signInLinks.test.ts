// The pending sign-in links: single use, bounded lifetime and bounded memory, hashes only.
import { describe, expect, it } from "vitest";
import { LINK_MAX_TTL_SECONDS, SignInLinks } from "../../../src/server/http/signInLinks.ts";

describe("SignInLinks", () => {
  it("a token is taken once; a second take finds nothing", () => {
    const links = new SignInLinks();
    const { token } = links.mint("u_1", "keys");
    expect(links.take(token)).toEqual({ userId: "u_1", page: "keys" });
    expect(links.take(token)).toBeNull();
  });

  it("expires after its lifetime, capped at the maximum; an expired token is used up too", () => {
    let now = 1_000_000;
    const links = new SignInLinks(() => now);
    const long = links.mint("u_1", "dashboard", 3600);
    expect(long.expiresAt).toBe(now + LINK_MAX_TTL_SECONDS * 1000);
    const short = links.mint("u_1", "keys", 1);
    now += 1000;
    expect(links.take(short.token)).toBeNull();
    now = long.expiresAt;
    expect(links.take(long.token)).toBeNull();
  });

  it("keeps at most 256 pending links: the oldest go first", () => {
    const links = new SignInLinks();
    const tokens = Array.from({ length: 300 }, (_, i) => links.mint(`u_${i}`, "keys").token);
    expect(links.take(tokens[0]!)).toBeNull();
    expect(links.take(tokens[43]!)).toBeNull();
    expect(links.take(tokens[44]!)).toEqual({ userId: "u_44", page: "keys" });
    expect(links.take(tokens[299]!)).toEqual({ userId: "u_299", page: "keys" });
  });

  it("never keeps a token itself", () => {
    const links = new SignInLinks();
    const { token } = links.mint("u_1", "keys");
    expect(
      JSON.stringify([...(links as unknown as { pending: Map<string, unknown> }).pending]),
    ).not.toContain(token);
  });
});
