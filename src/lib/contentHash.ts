// A note's content hash, as the service computes it (`contentHash` of a note and its versions) and
// as the mount checks it against what it holds (a delivered append, a save of ours met again):
// one definition, so the two sides can never disagree.
import { createHash } from "node:crypto";

export const contentHash = (content: string | Buffer): string =>
  createHash("sha256").update(content).digest("hex");
