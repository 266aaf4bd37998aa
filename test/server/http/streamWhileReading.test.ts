// A body written while it is read (src/server/http/streamWhileReading.ts): a failure before the
// first text is the caller's to answer, and no stream is left to fail on its own (an 'error' with
// no listener would end the server); a failure after it cuts the stream.
import { setImmediate as tick } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { streamWhileReading } from "../../../src/server/http/streamWhileReading.ts";

async function readAll(body: AsyncIterable<Buffer | string>): Promise<string> {
  let text = "";
  for await (const chunk of body) text += chunk.toString();
  return text;
}

describe("streamWhileReading", () => {
  it("gives every text written, in order, once the first is written", async () => {
    let wrote = 0;
    const body = await streamWhileReading(async (write) => {
      for (const page of ["a", "b", "c"]) {
        write(page);
        wrote++;
        await tick();
      }
    });
    expect(wrote).toBeLessThan(3); // the body was handed over before the last page was read
    expect(await readAll(body)).toBe("abc");
  });

  it("a failure before the first text rejects, and nothing fails later on its own", async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on("uncaughtException", onUncaught);
    try {
      await expect(
        streamWhileReading(async () => {
          await tick();
          throw new Error("store is closed");
        }),
      ).rejects.toThrow("store is closed");
      await tick();
      await tick();
      expect(uncaught).toEqual([]);
    } finally {
      process.off("uncaughtException", onUncaught);
    }
  });

  it("a failure after the first text cuts the stream", async () => {
    const body = await streamWhileReading(async (write) => {
      write("first");
      await tick();
      throw new Error("lost the store");
    });
    await expect(readAll(body)).rejects.toThrow("lost the store");
  });
});
