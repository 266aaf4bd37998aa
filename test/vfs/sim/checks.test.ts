// The simulation's feed check on crafted page sequences: it must find a gap, a record twice, one out
// of commit order and an item's last change never received, and pass a contiguous sequence.
import { describe, expect, it } from "vitest";
import type { ChangeRecord } from "../../../src/lib/apiTypes.ts";
import { feedProblems } from "./checks.ts";
import type { FeedPage, Incarnation, SimWorld } from "./world.ts";

const rec = (seq: number, id: string): ChangeRecord =>
  ({ seq, kind: "file", id, deleted: false, changedAt: "" }) as ChangeRecord;

/** The witness saw a.md at 3, b.md at 4 and 6 (its last change), c.md at 5. */
const world = { witnessed: [rec(3, "a"), rec(4, "b"), rec(5, "c"), rec(6, "b")] } as unknown as SimWorld;
const device = (pages: FeedPage[]) => ({ pages, dead: false }) as unknown as Incarnation;
const listing = (cursor: number): FeedPage => ({ from: -1, cursor, seqs: [] });

describe("the simulation's feed check", () => {
  it("passes pages that follow each other from the listing, each item's last change among them", () => {
    const pages = [listing(2), { from: 2, cursor: 4, seqs: [3, 4] }, { from: 4, cursor: 6, seqs: [5, 6] }];
    expect(feedProblems(world, [device(pages)], 6)).toEqual([]);
  });

  it("finds a page asked from past where the last one ended (a gap), and the change it skipped", () => {
    const pages = [listing(2), { from: 2, cursor: 4, seqs: [3, 4] }, { from: 5, cursor: 6, seqs: [6] }];
    const problems = feedProblems(world, [device(pages)], 6).join("\n");
    expect(problems).toMatch(/asked the feed from 5, its last page ended at 4/);
    expect(problems).toMatch(/never received file:c's last change \(record 5\)/);
  });

  it("finds a record twice, one out of order, and a device behind the head", () => {
    const pages = [listing(2), { from: 2, cursor: 5, seqs: [3, 5, 4] }, { from: 5, cursor: 5, seqs: [5] }];
    const problems = feedProblems(world, [device(pages)], 6).join("\n");
    expect(problems).toMatch(/record 4 after 5/);
    expect(problems).toMatch(/record 5 outside its page|record 5 received twice/);
    expect(problems).toMatch(/its feed is at 5, the service's at 6/);
  });
});
