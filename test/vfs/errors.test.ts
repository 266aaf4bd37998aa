// API failures as errno (src/vfs/errors.ts): the service's limits are a program's EFBIG and EDQUOT,
// and they are final: a delivery never retries a refusal the service will repeat.
import { describe, expect, it } from "vitest";
import { ApiError, NetworkError } from "../../src/client/api.ts";
import { isTransient, toVfsError } from "../../src/vfs/errors.ts";

describe("errors", () => {
  it("413 is EFBIG and 507 (the account's quota) is EDQUOT; neither is retried", () => {
    const tooLarge = new ApiError(413, "payload_too_large", "at most 100 MiB");
    const overQuota = new ApiError(507, "insufficient_storage", "over quota", {
      quotaBytes: 10,
      usedBytes: 10,
    });
    expect(toVfsError(tooLarge).errno).toBe("EFBIG");
    expect(toVfsError(overQuota).errno).toBe("EDQUOT");
    expect([isTransient(tooLarge), isTransient(overQuota)]).toEqual([false, false]);
  });

  it("the service down, overloaded or failing for now is retried", () => {
    for (const status of [500, 502, 503, 504, 429])
      expect(isTransient(new ApiError(status, "x", "y")), String(status)).toBe(true);
    expect(isTransient(new NetworkError("ECONNREFUSED"))).toBe(true);
  });
});
