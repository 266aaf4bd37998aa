// Notes saved before links were read have no names or links in the index: a new note linking to
// one would call it unresolved. They are indexed once, in small transactions, when the server
// starts (every later save indexes itself). Their declared tags join their record on their next
// save: a record never changes without a new revision.
import type { Store } from "../../../store/store.ts";
import { indexNote } from "./linkIndex.ts";

const PER_TRANSACTION = 200;

/** Indexes every note not indexed yet; returns how many. */
export async function indexOldNotes(store: Store): Promise<number> {
  let done = 0;
  let after = "";
  for (;;) {
    const ids = await store.transaction(async (tx) => {
      const found = await tx.links.unindexed(after, PER_TRANSACTION);
      for (const id of found) {
        const file = await tx.files.byId(id);
        if (file) await indexNote(tx, file);
      }
      return found;
    });
    done += ids.length;
    if (ids.length < PER_TRANSACTION) return done;
    after = ids.at(-1)!;
  }
}
