// The link graph as related notes see it: the notes a note links to and the notes linking to it,
// each with the links as written.
import type { LinkRow } from "../../../store/repos/links.ts";
import type { Tx } from "../../../store/store.ts";

export interface LinkedNote {
  /** Links from the note to this one, as written. */
  out: { text: string; embed: boolean }[];
  /** Links from this one to the note. */
  in: { text: string; embed: boolean }[];
}

/** Links of one direction read per note: a note linked from ten thousand others stays one answer. */
const PER_DIRECTION = 200;
/** Links quoted per pair of notes and direction. */
const QUOTED = 5;

const quote = (l: LinkRow) => ({ text: l.text, embed: l.embed === 1 });

/** Notes linked with `fileId` either way (never itself), each with the links that join them. */
export async function linkedNotes(tx: Tx, fileId: string): Promise<Map<string, LinkedNote>> {
  const out = new Map<string, LinkedNote>();
  const entry = (id: string) => {
    let e = out.get(id);
    if (!e) {
      e = { out: [], in: [] };
      out.set(id, e);
    }
    return e;
  };
  for (const l of await tx.links.from(fileId, PER_DIRECTION))
    if (l.target_id && l.target_id !== fileId) {
      const e = entry(l.target_id);
      if (e.out.length < QUOTED) e.out.push(quote(l));
    }
  for (const l of await tx.links.to(fileId, PER_DIRECTION))
    if (l.source_id !== fileId) {
      const e = entry(l.source_id);
      if (e.in.length < QUOTED) e.in.push(quote(l));
    }
  return out;
}
