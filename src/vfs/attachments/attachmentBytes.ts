// An attachment's bytes on this machine: the snapshot a save journals (copied from the file's blob
// when the program closes it, named by the bytes' SHA-256, so the journal holds a name, not the
// bytes, and a later write to the file never changes what that save sends), and the bytes of an
// attachment read from the service into its blob at the first open.
import { createHash } from "node:crypto";
import { createReadStream, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { constants, copyFile, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** Up to this size a snapshot is read and written from memory; past it, copied and then hashed. */
const IN_MEMORY_BYTES = 1 << 20;

export class AttachmentBytes {
  readonly dir: string;
  /** The snapshots' folder exists (made at the first snapshot; `sweep` never removes it). */
  private dirMade = false;

  constructor(cacheDir: string) {
    this.dir = join(cacheDir, "attachments");
  }

  path(hash: string): string {
    return join(this.dir, hash);
  }

  /**
   * The bytes of `blob` now, kept as a snapshot: their hash and size. A small file is read once
   * and written from memory (a program's temp file, closed and renamed at once: `sed -i`, `perl -i`,
   * pays a few system calls); a large one is copied first (a reflink where the filesystem has
   * them), then hashed from the copy, which nothing writes to.
   */
  async snapshot(blob: string): Promise<{ hash: string; size: number }> {
    if (!this.dirMade) {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      this.dirMade = true;
    }
    const tmp = join(this.dir, `.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`);
    try {
      if (statSync(blob).size <= IN_MEMORY_BYTES) {
        // Synchronous: into the page cache, no fsync; four trips through libuv's pool cost more.
        const bytes = readFileSync(blob);
        const hash = createHash("sha256").update(bytes).digest("hex");
        writeFileSync(tmp, bytes, { mode: 0o600 });
        renameSync(tmp, this.path(hash));
        return { hash, size: bytes.length };
      }
      await copyFile(blob, tmp, constants.COPYFILE_FICLONE);
      const { hash, size } = await hashOf(tmp);
      await rename(tmp, this.path(hash));
      return { hash, size };
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  read(hash: string): Promise<Buffer> {
    return readFile(this.path(hash));
  }

  /** Writes `bytes` to `blob` whole (temp file, then rename: a reader never sees half). */
  async fill(blob: string, bytes: Buffer): Promise<void> {
    const tmp = `${blob}.part`;
    await writeFile(tmp, bytes, { mode: 0o600 });
    await rename(tmp, blob);
  }

  async drop(hash: string): Promise<void> {
    try {
      unlinkSync(this.path(hash)); // one system call: cheaper than a trip through libuv's pool
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }

  /** Removes every snapshot no pending entry names (a crash between a delivery and its drop). */
  async sweep(keep: ReadonlySet<string>): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return;
    }
    await Promise.all(names.filter((n) => !keep.has(n)).map((n) => rm(join(this.dir, n), { force: true })));
  }
}

/** The SHA-256 (hex) and size of a file, read in a stream (an attachment may be large). */
export async function hashOf(file: string): Promise<{ hash: string; size: number }> {
  const h = createHash("sha256");
  let size = 0;
  for await (const chunk of createReadStream(file)) {
    h.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { hash: h.digest("hex"), size };
}
