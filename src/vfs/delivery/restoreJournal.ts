// After a restart: what the journal holds is shown in the tree before it is delivered — folders
// made here, notes deleted here (gone until the service agrees), renames at their new place, saves
// with their bodies and sizes (Delivery.restoreJournal then delivers them).
import type { VfsCore } from "../core.ts";
import type { Renames } from "../namespace/renames.ts";
import { provisionalFolder } from "../provisionalFolder.ts";
import type { DirNode } from "../tree.ts";
import { Journal, type JournalEntry } from "./journal.ts";

export type RestoreCore = Pick<
  VfsCore,
  "attrsChanged" | "clock" | "nodeFor" | "notes" | "parentFor" | "pendingDirs" | "shadowedDirs" | "tree"
>;

export function restoreJournal(
  c: RestoreCore,
  renames: Pick<Renames, "placeLocally">,
  entries: JournalEntry[],
): void {
  // Folders that lost an item or took one: named anew at the end. A note moved here onto the
  // name of a note deleted here (`mv a.md x.md; mv x.md a.md` over a note since deleted) is
  // placed while the deleted one may still hold that name, and would keep a suffixed name
  // (`a (5zae2p).md`) after it went.
  const touched = new Set<DirNode>();
  for (const entry of entries) {
    if (entry.attachment) continue; // Attachments.restoreJournal
    if (entry.folder) {
      // Made here before the restart: shown (with what goes into it) until the service has it.
      const parent = c.parentFor(entry);
      const dir: DirNode = {
        kind: "dir",
        name: entry.name,
        parent,
        id: null,
        meta: provisionalFolder(entry.name, parent, c.clock.now()),
        children: new Map(),
        createKey: entry.createKey,
      };
      // A listed folder of its name may be what the create made (its answer lost), or a folder
      // made elsewhere: that one shows again beside it once the answer says which (FolderDelivery.folderMade).
      const taken = parent.children.get(dir.name);
      c.tree.addChild(parent, dir);
      if (taken?.kind === "dir" && taken.id) c.shadowedDirs.set(dir, taken);
      c.pendingDirs.set(Journal.keyOf(entry), dir);
      continue;
    }
    if (entry.delete) {
      // Deleted here before the restart: gone from the tree until the service agrees.
      c.tree.withheld.deleteStarted(entry.fileId!);
      const gone = entry.delete === "file" ? c.tree.files.get(entry.fileId!) : c.tree.dirs.get(entry.fileId!);
      if (gone?.parent) touched.add(gone.parent);
      if (entry.delete === "file") c.tree.removeFile(entry.fileId!);
      else c.tree.removeFolder(entry.fileId!);
      continue;
    }
    const node = c.nodeFor(entry);
    if (entry.move && node.id) {
      // Renamed here before the restart: shown at its new place until the service has it.
      renames.placeLocally(node, c.parentFor(entry), entry.name);
      touched.add(node.parent);
    }
    if (entry.content === undefined) continue;
    if (entry.append) {
      c.notes.of(node).restoredAppends();
      continue;
    }
    const body = Buffer.from(entry.content, "utf8");
    c.notes.of(node).restoredSave(body);
  }
  const pending = new Set(c.pendingDirs.values());
  const inTree = (dir: DirNode) =>
    dir === c.tree.root || c.tree.dirs.get(dir.id ?? "") === dir || pending.has(dir);
  for (const dir of touched) if (inTree(dir)) c.tree.relayout(dir);
  c.attrsChanged();
}
