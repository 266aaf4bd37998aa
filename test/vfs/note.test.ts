// A note's local write state (src/vfs/note.ts): the size stat shows follows the newest local body
// (an open buffer with writes, else the journalled save, else appends on their way), and Notes
// finds the notes open now and a create's note by its key — what unmount and a restart rely on.
import { describe, expect, it } from "vitest";
import { Journal, type JournalEntry } from "../../src/vfs/delivery/journal.ts";
import { Notes } from "../../src/vfs/note.ts";
import type { OpenNote } from "../../src/vfs/openNote.ts";
import type { FileNode } from "../../src/vfs/tree.ts";
import { Tree } from "../../src/vfs/tree.ts";

function setUp(
  entries: Record<string, Partial<JournalEntry>> = {},
  onItsWay = new Set<string>(),
  kept = new Map<string, { mtimeMs: number; atimeMs?: number }>(),
) {
  const changed: FileNode[] = [];
  const journal = { get: (key: string) => entries[key] as JournalEntry | undefined };
  const notes = new Notes({
    journal,
    onItsWay: (key) => onItsWay.has(key),
    changed: (node) => changed.push(node),
    keptTimes: (node) => kept.get(node.id ?? ""),
  });
  const tree = new Tree(notes);
  const node = (name: string, id: string | null, size = 0): FileNode => ({
    kind: "file",
    name,
    parent: tree.root,
    id,
    meta: id ? ({ id, size } as FileNode["meta"]) : null,
    remoteName: name,
    createKey: `ck-${name}`,
  });
  // Its first descriptor opens it (Note.opened), holding `content` (written into it: `dirty`).
  const openOn = (n: FileNode, content: Buffer | null, dirty: boolean, appendOnly = false): OpenNote => {
    const open = notes.of(n).opened(null, appendOnly);
    open.hold();
    if (content && dirty) open.replaced(content);
    else if (content) open.showing(content);
    return open;
  };
  return { notes, node, openOn, changed, tree };
}

describe("Note", () => {
  it("shows the open buffer's size while it holds writes, then the journalled save's, then the service's", () => {
    const { notes, node, openOn, changed } = setUp();
    const a = node("a.md", "id-a", 3);
    const note = notes.of(a);
    expect(notes.of(a)).toBe(note); // one per node
    expect(note.dirtySize).toBeUndefined();
    const open = openOn(a, Buffer.from("12345"), true);
    note.write(5);
    expect(note.dirtySize).toBe(5);
    note.journalledSave(Buffer.from("1234567"));
    expect(note.journalled?.toString()).toBe("1234567");
    note.refreshSize(); // the open buffer still holds writes: its size wins
    expect(note.dirtySize).toBe(5);
    open.saving();
    note.closed();
    expect(note.open).toBeUndefined();
    expect(note.dirtySize).toBe(7);
    note.delivered({ newerWaits: false });
    expect(note.dirtySize).toBeUndefined();
    expect(changed).toEqual([a, a, a]);
  });

  it("counts appends on their way onto the service's size, journalled and open", () => {
    const a = { fileId: "id-a", createKey: "ck-a.md" };
    const { notes, node, openOn } = setUp({
      [Journal.keyOf(a)]: { append: true, content: "xy" },
    });
    const n = node("a.md", "id-a", 10);
    expect(notes.appendsOnTheirWay(n)).toBe(true);
    notes.of(n).restoredAppends();
    expect(notes.of(n).dirtySize).toBe(12);
    openOn(n, null, false, true).append(Buffer.from("abc"));
    expect(notes.appendedSize(n)).toBe(15);
    const other = node("b.md", "id-b", 4);
    expect(notes.appendsOnTheirWay(other)).toBe(false);
    expect(notes.appendedSize(other)).toBeUndefined();
    expect(other.note).toBeUndefined(); // asking made no Note
  });

  it("lists the notes open now, and finds a create's note by its key while its save is journalled", () => {
    const { notes, node, openOn } = setUp();
    const a = node("a.md", null);
    const b = node("b.md", "id-b");
    openOn(a, null, false);
    const onB = openOn(b, Buffer.from("w"), true);
    expect([...notes.open()].map((n) => n.node.name)).toEqual(["a.md", "b.md"]);
    notes.of(a).closed();
    notes.of(b).handedAway(onB, true); // its descriptors went on with a local file
    expect([onB.dirty, onB.refs, notes.of(b).open]).toEqual([false, 0, undefined]);
    expect([...notes.open()]).toEqual([]);
    expect(notes.journalledCreate("ck-a.md")).toBeUndefined();
    notes.of(a).journalledSave(Buffer.from("x"));
    expect(notes.journalledCreate("ck-a.md")?.node).toBe(a);
    notes.of(a).forgotten();
    expect(notes.journalledCreate("ck-a.md")).toBeUndefined();
  });

  it("keeps a rename shown until its journal entry is written, however many overlap", () => {
    const { notes, node } = setUp();
    const note = notes.of(node("a.md", "id-a"));
    note.rename();
    note.rename();
    note.renameJournalled();
    expect(note.renaming).toBe(true);
    note.renameJournalled();
    expect(note.renaming).toBe(false);
  });

  it("sends its place with its next save when it continues a claim, once", () => {
    const { notes, node } = setUp();
    const note = notes.of(node("a.md", "id-a"));
    expect(note.placeUnsent).toBe(false);
    note.continuesClaim();
    expect(note.placeUnsent).toBe(true);
    note.journalledSave(Buffer.from("x"));
    expect(note.placeUnsent).toBe(false);
  });

  it("stands where its open buffer, its journal entry and the delivery put it, and runs the table for each event", () => {
    const made = { fileId: null, createKey: "ck-m.md" };
    const saved = { fileId: "id-s", createKey: "ck-s.md" };
    const sent = { fileId: "id-f", createKey: "ck-f.md" };
    const gone = { fileId: "id-g", createKey: "ck-g.md" };
    const { notes, node, openOn } = setUp(
      {
        [Journal.keyOf(made)]: { content: "x" },
        [Journal.keyOf(saved)]: { content: "y" },
        [Journal.keyOf(sent)]: { content: "z" },
        [Journal.keyOf(gone)]: { delete: "file" },
      },
      new Set([Journal.keyOf(sent)]),
    );
    const fresh = notes.of(node("n.md", null));
    const clean = notes.of(node("c.md", "id-c"));
    const pendingCreate = notes.of(node("m.md", null));
    const pendingUpdate = notes.of(node("s.md", "id-s"));
    const inFlight = notes.of(node("f.md", "id-f"));
    const deleted = notes.of(node("g.md", "id-g"));
    expect([fresh, clean, pendingCreate, pendingUpdate, inFlight, deleted].map((n) => n.state)).toEqual([
      "new",
      "clean",
      "pending-create",
      "pending-update",
      "in-flight",
      "clean", // a journalled delete is its tombstone's, not the note's
    ]);
    expect([fresh.close(), clean.close(), pendingUpdate.close()]).toEqual(["save-empty", "none", "none"]);
    expect([fresh.unlink(), pendingCreate.unlink(), inFlight.unlink(), clean.unlink()]).toEqual([
      "forget",
      "forget",
      "settle-then-delete",
      "delete-later",
    ]);
    // Unsaved writes make it dirty whatever waits in the journal.
    openOn(clean.node, Buffer.from("w"), true);
    expect(clean.state).toBe("dirty");
    expect([clean.close(), clean.unlink()]).toEqual(["save", "settle-then-delete"]);
  });

  it("answers the tree's remote events: a change or delete of a note with a save waiting keeps the save", () => {
    const waiting = { fileId: "id-w", createKey: "ck-w.md" };
    const { notes, node, tree } = setUp({ [Journal.keyOf(waiting)]: { content: "mine" } });
    const w = node("w.md", "id-w");
    const c = node("c.md", "id-c");
    const edited = (n: FileNode) => ({ ...n.meta!, contentHash: "elsewhere", etag: "e2" });
    expect([notes.remoteChange(w, edited(w)), notes.remoteDelete(w)]).toEqual([
      "keep-local",
      "keep-and-recreate",
    ]);
    expect([notes.remoteChange(c, edited(c)), notes.remoteDelete(c)]).toEqual(["apply-remote", "remove"]);
    expect([w.note, c.note]).toEqual([undefined, undefined]); // nothing to change: no Note made
    // The tree asks them: the kept note stays, the other goes.
    tree.files.set("id-w", w);
    tree.files.set("id-c", c);
    tree.addChild(tree.root, w);
    tree.addChild(tree.root, c);
    tree.remoteDelete("id-w");
    tree.remoteDelete("id-c");
    expect(tree.files.has("id-w")).toBe(true);
    expect(tree.files.has("id-c")).toBe(false);
  });

  it("owns its times: a write moves them, a remote edit clears the mtime, a metadata-only change pins it", () => {
    const { notes, node } = setUp();
    const a = node("a.md", "id-a", 3);
    a.meta = { ...a.meta!, contentHash: "h1", etag: "e1", updatedAt: "2026-01-01T00:00:00.000Z" };
    const note = notes.of(a);
    note.write(4, 1000);
    expect([note.mtimeMs, note.ctimeMs, note.dirtySize]).toEqual([1000, 1000, 4]);
    // A remote edit of the content: the service's times are shown again.
    expect(notes.remoteChange(a, { ...a.meta, contentHash: "h2", etag: "e2" })).toBe("apply-remote");
    expect([note.mtimeMs, note.ctimeMs]).toEqual([undefined, undefined]);
    // A metadata-only change (tags) keeps the time shown so far, pinned to the record's.
    const b = node("b.md", "id-b");
    b.meta = { ...b.meta!, contentHash: "h1", etag: "e1", updatedAt: "2026-01-01T00:00:00.000Z" };
    expect(b.note).toBeUndefined();
    notes.remoteChange(b, { ...b.meta, etag: "e2", updatedAt: "2026-01-02T00:00:00.000Z" });
    expect(b.note?.mtimeMs).toBe(Date.parse("2026-01-01T00:00:00.000Z"));
    // Our own answer: the time shown stays.
    note.timesSet(5, 6, 7);
    notes.ownAnswer(a);
    expect([note.mtimeMs, note.atimeMs, note.ctimeMs]).toEqual([5, 6, 7]);
  });

  it("owns its pending tags: a delivery clears only what it carried", () => {
    const { notes, node } = setUp();
    const note = notes.of(node("n.md", null));
    note.made({ mtimeMs: 1 }, { tags: ["a"] });
    const sent = note.pendingMeta;
    note.metaSet({ context: "later" }); // set while the create was on its way
    note.metaDelivered(sent);
    expect(note.pendingMeta).toEqual({ tags: ["a"], context: "later" });
    note.metaDelivered(note.pendingMeta);
    expect(note.pendingMeta).toBeUndefined();
  });

  it("acts on delivery: a conflict detaches the open buffer, a landed save rebases it, a newer save stays shown", () => {
    const { notes, node, openOn } = setUp();
    const a = node("a.md", "id-a", 3);
    const note = notes.of(a);
    const open = openOn(a, null, false);
    note.journalledSave(Buffer.from("first"));
    note.journalledSave(Buffer.from("second"));
    note.delivered({ newerWaits: true, landed: { etag: "e1", hash: "h1" } });
    expect([note.journalled?.toString(), note.dirtySize, open.base]).toEqual([
      "second",
      6,
      { etag: "e1", hash: "h1" },
    ]);
    note.delivered({ newerWaits: false, conflict: true });
    expect([note.journalled, open.detached, open.content?.toString()]).toEqual([undefined, true, "second"]);
    note.delivered({ newerWaits: false, landed: { etag: "e2", hash: "h2" }, reattach: true });
    expect([open.detached, open.base]).toEqual([false, { etag: "e2", hash: "h2" }]);
    note.journalledSave(Buffer.from("third"));
    note.refused();
    expect([note.journalled, note.state]).toEqual([undefined, "clean"]);
  });

  it("starts from the times kept for its content when it is made; without one, stat reads them as they are kept", () => {
    const kept = new Map([["id-k", { mtimeMs: 1234, atimeMs: 99 }]]);
    const { notes, node } = setUp({}, new Set(), kept);
    const k = node("k.md", "id-k");
    expect(notes.timesOf(k)).toEqual({ mtimeMs: 1234, atimeMs: 99 });
    expect(k.note).toBeUndefined(); // reading made no Note
    const note = notes.of(k);
    expect([note.mtimeMs, note.atimeMs, note.ctimeMs]).toEqual([1234, 99, undefined]);
    note.write(1, 5000); // from now on the Note's own
    expect(notes.timesOf(k)?.mtimeMs).toBe(5000);
    expect(notes.timesOf(node("other.md", "id-o"))).toBeUndefined();
  });
});
