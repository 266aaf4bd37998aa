// What the Vfs shows under a folder, in the FUSE model test's Manifest shape (helpers/model/runner.ts),
// read through the facade's POSIX calls as manifest.py reads a mount: the listing, every file's bytes,
// a note's user.txtfs.id and user.txtfs.tags.
import { constants as fsc } from "node:fs";
import type { Vfs } from "../../../src/vfs/vfs.ts";
import type { Manifest } from "../../helpers/model/runner.ts";

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
// As manifest.py: names that differ between a mount and a local directory by design.
const SKIP = /(^|\/)(\.[^/]*\.sw[a-z]|4913|\.fuse_hidden[^/]*)$/;
const isNote = (name: string) => name.endsWith(".md") || name.endsWith(".txt");

async function readWhole(vfs: Vfs, path: string, size: number): Promise<Buffer> {
  const fd = await vfs.open(path, fsc.O_RDONLY);
  try {
    return await vfs.read(fd, size + 4096, 0);
  } finally {
    await vfs.release(fd);
  }
}

async function xattr(vfs: Vfs, path: string, name: string): Promise<string | null> {
  try {
    return (await vfs.getxattr(path, name))?.toString("utf8") ?? null;
  } catch {
    return null;
  }
}

/**
 * With `xattrs`, each note's id and tags too. Asking a note's id waits for its delivery (a new note
 * has none before), so a manifest read after every step without them leaves saves on their way,
 * as a kill -9 or the next operation should find them.
 */
export async function vfsManifest(vfs: Vfs, root: string, o: { xattrs: boolean }): Promise<Manifest> {
  const m: Manifest = { files: {}, dirs: [], ids: {}, tags: {} };
  const walk = async (dir: string, rel: string) => {
    for (const name of [...vfs.readdir(dir)].sort()) {
      const full = `${dir}/${name}`;
      const r = rel ? `${rel}/${name}` : name;
      if (SKIP.test(r)) continue;
      let st: Awaited<ReturnType<Vfs["getattr"]>>;
      try {
        st = await vfs.getattr(full);
      } catch (err) {
        m.files[r] = `!listed, but getattr failed: ${(err as { errno?: string }).errno ?? err}`;
        continue;
      }
      if ((st.mode & S_IFMT) === S_IFDIR) {
        m.dirs.push(r);
        await walk(full, r);
        continue;
      }
      try {
        const bytes = await readWhole(vfs, full, st.size);
        m.files[r] = bytes.toString("base64");
        if (bytes.length !== st.size)
          m.files[r] = `!getattr says ${st.size} bytes, a read gave ${bytes.length}`;
      } catch (err) {
        m.files[r] = `!${(err as { errno?: string }).errno ?? err}`;
      }
      if (o.xattrs && isNote(name)) {
        m.ids[r] = await xattr(vfs, full, "user.txtfs.id");
        m.tags[r] = await xattr(vfs, full, "user.txtfs.tags");
      }
    }
  };
  await walk(root, "");
  m.dirs.sort();
  return m;
}
