// `txtfs dav`'s back end: the mount's vfs through its plain interface (paths, bytes, errno names),
// so WebDAV has what the mount has: the write-behind journal, the cache, conflict copies, identity
// kept through renames, files that are not notes as attachments, `.txtfs/`.
import { constants as fsc } from "node:fs";
import type { Vfs } from "../vfs/vfs.ts";
import type { DavBackend, DavEntry } from "./backend.ts";
import { esc, TXTFS_NS } from "./xml.ts";

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const CHUNK = 1 << 20;

/** The note metadata shown as properties in txtfs's namespace, by the xattr that holds each. */
const OWN = {
  context: "user.txtfs.context",
  tags: "user.txtfs.tags",
  connections: "user.txtfs.connections",
  id: "user.txtfs.id",
};
const name = (local: string) => `{${TXTFS_NS}}${local}`;
const FILE_PROPS = Object.keys(OWN).map(name);
const FOLDER_PROPS = ["context", "tags", "id"].map(name);
const WRITABLE = ["context", "tags"].map(name);

// A note's close puts its save in the journal (kept through a kill -9); another file (an
// attachment) is fsynced too: a PUT answers once its bytes are on the service, or journalled.
const NOTE_NAME = /\.(md|txt)$/i;

export class VfsBackend implements DavBackend {
  private readonly vfs: Vfs;

  constructor(vfs: Vfs) {
    this.vfs = vfs;
  }

  async stat(path: string): Promise<DavEntry | undefined> {
    try {
      const st = await this.vfs.getattr(path);
      const collection = (st.mode & S_IFMT) === S_IFDIR;
      const t = (d: Date) => d.getTime().toString(36);
      return {
        collection,
        size: st.size,
        mtime: st.mtime,
        ctime: st.ctime,
        etag: `"${t(st.mtime)}-${st.size.toString(36)}-${t(st.ctime)}"`,
      };
    } catch (err) {
      if ((err as { errno?: string }).errno === "ENOENT") return undefined;
      throw err;
    }
  }

  async list(path: string): Promise<string[]> {
    return this.vfs.isControl(path) ? this.vfs.readdirControl(path) : this.vfs.readdir(path);
  }

  async read(path: string): Promise<Buffer> {
    const fd = await this.vfs.open(path, fsc.O_RDONLY);
    try {
      const parts: Buffer[] = [];
      for (let at = 0; ; ) {
        const part = await this.vfs.read(fd, CHUNK, at);
        if (!part.length) break;
        parts.push(part);
        at += part.length;
      }
      return Buffer.concat(parts);
    } finally {
      await this.vfs.release(fd);
    }
  }

  async write(path: string, data: Buffer): Promise<void> {
    const exists = (await this.stat(path)) !== undefined;
    const fd = exists ? await this.vfs.open(path, fsc.O_WRONLY) : await this.vfs.create(path, 0o644);
    let released = false;
    try {
      if (exists) await this.vfs.ftruncate(fd, 0);
      for (let at = 0; at < data.length; ) at += await this.vfs.write(fd, data.subarray(at, at + CHUNK), at);
      await this.vfs.flush(fd);
      if (!NOTE_NAME.test(path)) await this.vfs.fsync(fd);
      released = true;
      await this.vfs.release(fd);
    } catch (err) {
      if (!released) await this.vfs.release(fd).catch(() => undefined);
      // A refused PUT (too large, say) leaves nothing behind: the empty file it made goes again.
      if (!exists) await this.vfs.unlink(path).catch(() => undefined);
      throw err;
    }
  }

  mkdir(path: string): Promise<void> {
    return this.vfs.mkdir(path, 0o755);
  }

  remove(path: string, collection: boolean): Promise<void> {
    return collection ? this.vfs.rmdir(path) : this.vfs.unlink(path);
  }

  rename(from: string, to: string): Promise<void> {
    return this.vfs.rename(from, to);
  }

  setModified(path: string, mtime: Date): Promise<void> {
    return this.vfs.utimens(path, undefined, mtime.getTime());
  }

  async quota() {
    const s = await this.vfs.statfs();
    return { available: s.bavail * s.frsize, used: (s.blocks - s.bfree) * s.frsize };
  }

  ownPropertyNames(collection: boolean) {
    return { all: collection ? FOLDER_PROPS : FILE_PROPS, writable: WRITABLE };
  }

  async ownProperties(path: string, collection: boolean): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const [local, xattr] of Object.entries(OWN)) {
      if (collection && local === "connections") continue;
      const value = await this.vfs.getxattr(path, xattr).catch(() => null);
      if (value !== null) out.set(name(local), esc(value.toString("utf8")));
    }
    return out;
  }

  async setOwnProperty(path: string, prop: string, text: string | undefined): Promise<void> {
    const local = prop.slice(TXTFS_NS.length + 2) as keyof typeof OWN;
    await this.vfs.setxattr(path, OWN[local], Buffer.from(text?.trim() ?? "", "utf8"));
  }
}
