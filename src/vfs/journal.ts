// Writes that could not reach the service are kept here, on disk, until they can: one entry per
// note (later saves of the same note replace its content but keep its place in line), replayed in
// the order the notes were first saved. Survives a crash of the daemon.
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";

export interface JournalEntry {
  seq: number;
  /** Remote id, or null for a note created while offline. */
  fileId: string | null;
  /** Idempotency-Key of the create: a replay after a lost response cannot make two notes. */
  createKey: string;
  name: string;
  folderId: string | null;
  content: string;
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

  /** Records (or replaces) a note's pending write, durably (fsync) before returning. */
  async put(entry: Omit<JournalEntry, "seq" | "savedAt">): Promise<JournalEntry> {
    const key = Journal.keyOf(entry);
    const previous = this.entries.get(key);
    const full: JournalEntry = {
      ...entry,
      // Keep the first base: the remote never saw the saves in between.
      baseEtag: previous ? previous.baseEtag : entry.baseEtag,
      baseHash: previous ? previous.baseHash : entry.baseHash,
      seq: previous?.seq ?? ++this.seq,
      savedAt: new Date().toISOString(),
    };
    const file = this.file(full);
    const tmp = `${file}.tmp`;
    const fh = await open(tmp, "w", 0o600);
    try {
      await fh.writeFile(JSON.stringify(full));
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
    this.entries.set(key, full);
    return full;
  }

  /**
   * The entry reached the service (as `delivered`). If the note was saved again meanwhile, that
   * newer entry stays, now based on what was delivered (and keyed by the id a create received).
   */
  async done(
    entry: JournalEntry,
    delivered?: { id: string; etag: string; contentHash: string },
  ): Promise<void> {
    const key = Journal.keyOf(entry);
    const current = this.entries.get(key);
    this.entries.delete(key);
    await rm(this.file(entry), { force: true });
    if (current && current.savedAt !== entry.savedAt && delivered) {
      await rm(this.file(current), { force: true });
      await this.put({
        ...current,
        fileId: delivered.id,
        baseEtag: delivered.etag,
        baseHash: delivered.contentHash,
      });
    }
  }

  private file(e: JournalEntry): string {
    return join(
      this.dir,
      `${String(e.seq).padStart(10, "0")}-${Journal.keyOf(e).replace(/[^\w-]/g, "_")}.json`,
    );
  }
}
