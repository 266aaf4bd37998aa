// Shrunk sequences the reference-model test once failed on (or that pin down a rule worth keeping),
// each run on its own as a named case by test/vfs/model.test.ts. A case the vfs still fails is
// marked `fails` with the reason (the lead fixes the vfs; the case then passes and loses the mark).
import type { VfsOp } from "./ops.ts";
import { SEED_38_TWO_NOTES_ONE_NAME } from "./unshrunk.ts";

export interface Regression {
  name: string;
  ops: VfsOp[];
  /** Why the vfs still fails it (the test then expects the failure). */
  fails?: string;
  /** Why it is skipped: it fails in some runs only (so neither a pass nor a failure can be expected). */
  flaky?: string;
}

// Found by seed 19 (a 52-operation sequence, shrunk by hand, made deterministic by the `feed` step),
// and seeds 37 and 40: a note that left a name (deleted, or moved over another) came back at that
// name with its old bytes after its delete was delivered, when the feed brought the echo of its own
// earlier save after the delete (tree.deletedHere now keeps such records out).

export const REGRESSIONS: Regression[] = [
  {
    name: "a new note deleted, its name taken at once by a temp file renamed over it: the save shows there, the deleted note never again",
    ops: [
      { k: "feed" },
      { k: "create", p: "d1/b.md", text: "cat\n" },
      { k: "drain" },
      { k: "rm", p: "d1/b.md" },
      { k: "replace", p: "d1/b.md", text: "new\n" },
      { k: "drain" },
    ],
  },
  {
    name: "the same with a note edited, deleted and replaced while a vim save of another note fsyncs",
    ops: [
      { k: "feed" },
      { k: "rewrite", p: "d1/a.md", text: "cat2\n" },
      { k: "drain" },
      { k: "rm", p: "d1/a.md" },
      { k: "replace", p: "d1/a.md", text: "new\n" },
      { k: "vimsave", p: "b.md", text: "vim b\n" },
    ],
  },
  {
    // Seed 37 (41 operations; shrunk by hand, deterministic with the `feed` step first). The service
    // never has `.tmp-b.md`; the feed takes it away again, a second or so later.
    name: "two editor's saves of a note in a row (temp file + rename over, twice): the first temp file never shows again",
    ops: [{ k: "feed" }, { k: "replace", p: "b.md", text: "a" }, { k: "replace", p: "b.md", text: "b\n" }],
  },
  {
    // Seed 40 (45 operations; shrunk by hand, deterministic with the drain + `feed` steps).
    name: "a note moved over another, its old name taken by a new note: the moved note never shows at its old name again",
    ops: [
      { k: "rewrite", p: "d1/a.md", text: "cat2\n" },
      { k: "drain" },
      { k: "feed" },
      { k: "rewrite", p: "d1/a.md", text: "cat3\n" },
      { k: "drain" },
      { k: "mv", p: "d1/a.md", to: "c.txt" },
      { k: "append", p: "d1/a.md", text: "new" },
      { k: "replace", p: "c.txt", text: "y" },
    ],
  },
  {
    name: "a note deleted and created again by a plain create (tar -x): no ghost",
    ops: [
      { k: "feed" },
      { k: "create", p: "d1/b.md", text: "cat\n" },
      { k: "drain" },
      { k: "rm", p: "d1/b.md" },
      { k: "create", p: "d1/b.md", text: "new\n" },
      { k: "drain" },
      { k: "sync" },
    ],
  },
  {
    name: "a save, a kill -9 before it was delivered, a sync: the new Vfs delivers it",
    ops: [{ k: "rewrite", p: "a.md", text: "after\n" }, { k: "kill" }, { k: "sync" }],
  },
  {
    name: "an editor's save (temp file + rename over) keeps the note's id, also across a kill",
    ops: [
      { k: "tag", p: "b.md", tags: "alpha" },
      { k: "replace", p: "b.md", text: "new b\n" },
      { k: "kill" },
      { k: "vimsave", p: "b.md", text: "vim b\n" },
      { k: "sync" },
    ],
  },
  {
    name: "a folder renamed with notes inside: they keep their ids, here and on the service",
    ops: [{ k: "mkdir", d: "d2" }, { k: "rmdir", d: "d2" }, { k: "mvdir", d: "d1", to: "d2" }, { k: "sync" }],
  },
  {
    name: "remote edits, renames and deletes show here and leave the model exact",
    ops: [
      { k: "redit", p: "a.md", text: "theirs\n" },
      { k: "rrename", p: "b.md", to: "d1/b.md" },
      { k: "append", p: "d1/b.md", text: "ours\n" },
      { k: "rdelete", p: "c.txt" },
      { k: "rcreate", p: "c.txt", text: "made there" },
      { k: "kill" },
      { k: "sync" },
    ],
  },
  {
    name: "seed 38 whole: no two notes of one name on the service after a kill -9 and replay",
    ops: SEED_38_TWO_NOTES_ONE_NAME,
  },
];
