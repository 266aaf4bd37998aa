// The If: header's grammar (RFC 4918 section 10.4) and its evaluation, on their own.
import { describe, expect, it } from "vitest";
import { ifHolds, parseIf, submittedTokens } from "../../src/dav/ifHeader.ts";

describe("If: header", () => {
  it("reads untagged and tagged lists, Not, tokens and ETags", () => {
    expect(parseIf('(<opaquelocktoken:a> ["e1"]) (Not <DAV:no-lock>)')).toEqual([
      {
        resource: undefined,
        conditions: [
          { not: false, token: "opaquelocktoken:a" },
          { not: false, etag: '"e1"' },
        ],
      },
      { resource: undefined, conditions: [{ not: true, token: "DAV:no-lock" }] },
    ]);
    expect(parseIf('<http://h/x/> (<t1>) <http://h/y> ([W/"e"])')).toEqual([
      { resource: "http://h/x/", conditions: [{ not: false, token: "t1" }] },
      { resource: "http://h/y", conditions: [{ not: false, etag: 'W/"e"' }] },
    ]);
  });

  it("refuses what is not the grammar (400) rather than guessing", () => {
    for (const bad of ["", "(", "()", "(<t1>", "(x)", "<http://h/x>", "([e1)"])
      expect(() => parseIf(bad), bad).toThrow(expect.objectContaining({ status: 400 }));
  });

  it("holds when one list holds; Not inverts; the submitted tokens are those named without Not", async () => {
    const lists = parseIf('(<t1> ["e2"]) (Not <DAV:no-lock> ["e1"])');
    const state = async () => ({ tokens: new Set(["t1"]), etag: '"e1"' });
    expect(await ifHolds(lists, state)).toBe(true); // the second list
    expect(await ifHolds(parseIf('(<t1> ["e2"])'), state)).toBe(false);
    expect(await ifHolds(parseIf("(<DAV:no-lock>)"), state)).toBe(false);
    expect([...submittedTokens(lists)]).toEqual(["t1"]);
  });
});
