// Saves on their way to the service are kept here, on disk, until it has them: one entry per note
// (later saves of the same note replace its content but keep its place in line), delivered in the
// order the notes were first saved. Survives a crash of the daemon; with `durable` (and after
// `sync`) also a crash of the machine.
import { renameSync, writeFileSync } from "node:fs";
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { Mutex } from "../lib/mutex.ts";

export interface JournalEntry {
  seq: number;
  /** Remote id, or null for a note created while offline. */
  fileId: string | null;
  /** Idempotency-Key of the create: a replay after a lost response cannot make two notes. */
  createKey: string;
  name: string;
  folderId: string | null;
  /** The body to save; absent when only the note's place changed. */
  content?: string;
  /** The note was renamed or moved here: `name` and `folderId` are to be sent too. */
  move?: boolean;
  /** The ETag the edit was based on (If-Match on replay), and that version's content hash. */
  baseEtag: string | null;
  baseHash?: string | null;
  path: string;
  savedAt: string;
}

export class Journal {
  private readonly dir: string;
  private seq = 0;
  private readonly entries = new Map<string, JournalEntry>();
  /** put/done/sync read-modify-write an entry across awaits: one at a time. */
  private readonly lock = new Mutex();

  constructor(cacheDir: string) {
    this.dir = join(cacheDir, "journal");
  }

  static keyOf(e: { fileId: string | null; createKey: string }): string {
    return e.fileId ?? `new-${e.createKey}`;
  }

  async load(): Promise<JournalEntry[]> {
    await mkdir(this.dir, { recursive: true });
    for (const name of (await readdir(this.dir)).filter((n) => n.endsWith(".json"))) {
      try {
        const e = JSON.parse(await readFile(join(this.dir, name), "utf8")) as JournalEntry;
        this.entries.set(Journal.keyOf(e), e);
        this.seq = Math.max(this.seq, e.seq);
      } catch {
        // a half-written temp file from a crash: the previous version of that entry still stands
      }
    }
    return this.pending();
  }

  pending(): JournalEntry[] {
    return [...this.entries.values()].sort((a, b) => a.seq - b.seq);
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): JournalEntry | undefined {
    return this.entries.get(key);
  }

  /**
   * Records (or replaces) a note's pending write. `durable`: fsynced before returning; otherwise it
   * survives a crash of the daemon but not of the machine until `sync`.
   */
  put(entry: Omit<JournalEntry, "seq" | "savedAt">, durable = true): Promise<JournalEntry> {
    return this.lock.run(() => this.write(entry, durable));
  }

  /** `fresh`: a new entry in line, with the base given (not the one of an entry it replaces). */
  private async write(
    entry: Omit<JournalEntry, "seq" | "savedAt">,
    durable: boolean,
    fresh = false,
  ): Promise<JournalEntry> {
    const key = Journal.keyOf(entry);
    const previous = fresh ? undefined : this.entries.get(key);
    const full: JournalEntry = {
      ...entry,
      // A rename keeps a pending body, a save keeps a pending rename.
      content: entry.content ?? previous?.content,
      move: entry.move || previous?.move || undefined,
      // Keep the first base: the remote never saw the saves in between.
      baseEtag: previous ? previous.baseEtag : entry.baseEtag,
      baseHash: previous ? previous.baseHash : entry.baseHash,
      seq: previous?.seq ?? ++this.seq,
      savedAt: new Date().toISOString(),
    };
    const file = this.file(full);
    const tmp = `${file}.tmp`;
    if (durable) {
      const fh = await open(tmp, "w", 0o600);
      try {
        await fh.writeFile(JSON.stringify(full));
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, file);
    } else {
      // A write-behind save lands in the page cache: done in place, it costs microseconds, where
      // four trips through libuv's thread pool would cost more than the whole FUSE operation.
      writeFileSync(tmp, JSON.stringify(full), { mode: 0o600 });
      renameSync(tmp, file);
    }
    this.entries.set(key, full);
    return full;
  }

  /** Makes a pending entry durable (fsync), e.g. for fsync(2) while the service is unreachable. */
  sync(key: string): Promise<void> {
    return this.lock.run(async () => {
      const entry = this.entries.get(key);
      if (!entry) return;
      const fh = await open(this.file(entry), "r");
      try {
        await fh.sync();
      } finally {
        await fh.close();
      }
    });
  }

  /**
   * The entry reached the service (as `delivered`). If the note was saved again meanwhile, that
   * newer entry stays, now based on what was delivered (and keyed by the id a create received).
   */
  done(entry: JournalEntry, delivered?: { id: string; etag: string; contentHash: string }): Promise<void> {
    return this.lock.run(async () => {
      const key = Journal.keyOf(entry);
      const current = this.entries.get(key);
      // Saved again while it was being delivered: `current` is a newer object (savedAt may be
      // equal). It becomes a fresh entry based on what was delivered, in place before the old one
      // goes, so the journal never looks empty meanwhile.
      if (current && current !== entry && delivered) {
        const next = {
          ...current,
          fileId: delivered.id,
          baseEtag: delivered.etag,
          baseHash: delivered.contentHash,
        };
        await this.write(next, true, true);
        if (Journal.keyOf(next) !== key) this.entries.delete(key);
      } else {
        this.entries.delete(key);
      }
      await rm(this.file(entry), { force: true }); // also the newer save's old file: same name
    });
  }

  private file(e: JournalEntry): string {
    return join(
      this.dir,
      `${String(e.seq).padStart(10, "0")}-${Journal.keyOf(e).replace(/[^\w-]/g, "_")}.json`,
    );
  }
}
