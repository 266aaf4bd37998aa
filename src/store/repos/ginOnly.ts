// PostgreSQL statements that find notes by a word through the GIN index and nothing else. With a
// LIMIT, the planner prefers walking the table (or an index in id order) and testing each note,
// hoping to stop early: right for a word in most notes, but a word rarer than it guessed then reads
// every note of the store (related notes: 0.2 s at 10,000 notes, 0.64 s at 100,000). GIN builds the
// bitmap of a word's notes before the first row, so a rare word costs its few notes, and a common
// one is never asked (wordCounts.ts). SET LOCAL lasts to the end of the transaction: put back after.
import type { Sql } from "../store.ts";

export async function ginOnly<T>(sql: Sql, fn: () => Promise<T>): Promise<T> {
  const before = await sql.get<{ s: string; i: string }>(
    `SELECT current_setting('enable_seqscan') AS s, current_setting('enable_indexscan') AS i,
       set_config('enable_seqscan', 'off', true), set_config('enable_indexscan', 'off', true)`,
  );
  const restore = () =>
    sql.get("SELECT set_config('enable_seqscan', ?, true), set_config('enable_indexscan', ?, true)", [
      before?.s ?? "on",
      before?.i ?? "on",
    ]);
  let result: T;
  try {
    result = await fn();
  } catch (err) {
    // A failed statement aborts the transaction: its error is the one to report, not the restore's.
    await restore().catch(() => {});
    throw err;
  }
  await restore();
  return result;
}
