// Which journal entry belongs to a tree node: by its id, or by the key of its create on the way.
import type { DirNode, FileNode } from "../tree.ts";
import { Journal } from "./journal.ts";

export const journalKey = (node: FileNode) => Journal.keyOf({ fileId: node.id, createKey: node.createKey });

export const dirKey = (dir: DirNode) => Journal.keyOf({ fileId: null, createKey: dir.createKey! });
