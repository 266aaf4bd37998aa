// Shrunk sequences the reference-model test once failed on (or that pin down a rule worth keeping),
// each run on its own as a named case by test/vfs/model.test.ts. A case the vfs still fails is
// marked `fails` with the reason (the lead fixes the vfs; the case then passes and loses the mark).
import type { VfsOp } from "./ops.ts";

export interface Regression {
  name: string;
  ops: VfsOp[];
  /** Why the vfs still fails it (the test then expects the failure). */
  fails?: string;
}

export const REGRESSIONS: Regression[] = [
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
];
