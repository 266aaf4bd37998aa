// Notes saved before links were read have no names or links in the index: a new note linking to
// one would call it unresolved. They are indexed once, in small transactions, when the server
// starts. Their declared tags join their record on their next save (a record never changes
// without a new revision).
import type { Store } from "../../../store/store.ts";
import { indexNote } from "./linkIndex.ts";

const PER_TRANSACTION = 200;

/** Indexes every note not indexed yet; returns how many. */
export async function indexOldNotes(store: Store): Promise<number> {
  let done = 0;
  for (;;) {
    const n = await store.transaction(async (tx) => {
      const ids = await tx.links.unindexed(PER_TRANSACTION);
      for (const id of ids) {
        const file = await tx.files.byId(id);
        if (file) await indexNote(tx, file);
      }
      return ids.length;
    });
    done += n;
    if (n < PER_TRANSACTION) return done;
  }
}
