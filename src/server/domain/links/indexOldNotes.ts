// Notes saved before links were read have no names or links in the index: a new note linking to
// one would call it unresolved. They are indexed once, in small transactions, when the server
// starts (every later save indexes itself). Their declared tags join their record on their next
// save: a record never changes without a new revision.
import type { Store } from "../../../store/store.ts";
import { indexNote } from "./linkIndex.ts";

/** Notes looked at per transaction (most are indexed already: a probe of the name index each). */
const WINDOW = 500;

/** Indexes every note not indexed yet; returns how many. */
export async function indexOldNotes(store: Store): Promise<number> {
  let done = 0;
  let after = "";
  for (;;) {
    const { last, indexed } = await store.transaction(async (tx) => {
      const window = await tx.links.unindexed(after, WINDOW);
      for (const id of window.ids) {
        const file = await tx.files.byId(id);
        if (file) await indexNote(tx, file);
      }
      return { last: window.last, indexed: window.ids.length };
    });
    done += indexed;
    if (last === undefined) return done;
    after = last;
    // The event loop's next turn first: a request waiting commits this work before it reads, and
    // windows queued back to back would all be committed ahead of it.
    await new Promise((resolve) => setImmediate(resolve));
  }
}
