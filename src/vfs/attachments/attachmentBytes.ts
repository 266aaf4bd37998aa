// An attachment's bytes on this machine: the snapshot a save journals (copied from the file's blob
// when the program closes it, named by the bytes' SHA-256, so the journal holds a name, not the
// bytes, and a later write to the file never changes what that save sends), and the bytes of an
// attachment read from the service into its blob at the first open.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { constants, copyFile, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

export class AttachmentBytes {
  readonly dir: string;

  constructor(cacheDir: string) {
    this.dir = join(cacheDir, "attachments");
  }

  path(hash: string): string {
    return join(this.dir, hash);
  }

  /**
   * The bytes of `blob` now, kept as a snapshot: their hash and size. Copied first (a reflink
   * where the filesystem has them), then hashed from the copy, which nothing writes to.
   */
  async snapshot(blob: string): Promise<{ hash: string; size: number }> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const tmp = join(this.dir, `.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`);
    try {
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

  drop(hash: string): Promise<void> {
    return rm(this.path(hash), { force: true });
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
