// One local operation on each side: on the Vfs through its POSIX calls as the kernel would make them
// (a lookup first: O_EXCL and O_CREAT are the kernel's decisions), and on the model, a local
// directory, through node:fs. Both answer 0 or the errno name, so the two can be compared.
import {
  closeSync,
  existsSync,
  constants as fsc,
  mkdirSync,
  openSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  truncateSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import type { Vfs } from "../../../src/vfs/vfs.ts";
import type { VfsOp } from "./ops.ts";

export type Outcome = 0 | string;

type LocalOp = Exclude<
  VfsOp,
  { k: "redit" | "rcreate" | "rrename" | "rdelete" | "drain" | "feed" | "sync" | "kill" | "lossykill" }
>;

const errnoOf = (err: unknown): string => {
  const e = err as { errno?: unknown; code?: unknown };
  if (typeof e.errno === "string") return e.errno; // VfsError
  if (typeof e.code === "string") return e.code; // node:fs
  throw err;
};

/** The name an editor's temp file has beside `p` (Python's os.replace save in the FUSE model). */
const tempOf = (p: string) => join(dirname(p), `.tmp-${p.slice(p.lastIndexOf("/") + 1)}`);

/** Runs `op` on the Vfs under `root` ("/r1"). */
export async function applyToVfs(vfs: Vfs, root: string, op: LocalOp): Promise<Outcome> {
  const at = (p: string) => `${root}/${p}`;
  const exists = async (p: string) =>
    vfs.getattr(p).then(
      () => true,
      (err) => {
        if (errnoOf(err) === "ENOENT") return false;
        throw err;
      },
    );
  const writeAll = async (fd: number, text: string | Buffer, position: number) => {
    const data = typeof text === "string" ? Buffer.from(text) : text;
    for (let done = 0; done < data.length; )
      done += await vfs.write(fd, data.subarray(done), position + done);
  };
  /** Opens `p` as open(2) with O_CREAT would: the kernel creates it only when its lookup missed. */
  const openOrCreate = async (p: string, flags: number) =>
    (await exists(p)) ? vfs.open(p, flags) : vfs.create(p, 0o644);
  const save = async (fd: number, text: string | Buffer, position: number, fsync = false) => {
    try {
      await writeAll(fd, text, position);
      if (fsync) await vfs.fsync(fd);
      await vfs.flush(fd);
    } finally {
      await vfs.release(fd);
    }
  };
  /** rm -rf: what is below first (unlink each file, rmdir each folder), then the folder; none: done. */
  const removeTree = async (dir: string): Promise<void> => {
    for (const name of vfs.readdir(dir)) {
      const full = `${dir}/${name}`;
      const st = await vfs.getattr(full).catch((err) => {
        if (errnoOf(err) === "ENOENT") return undefined; // gone meanwhile (a delivery's rename)
        throw err;
      });
      if (!st) continue;
      if ((st.mode & 0o170000) === 0o040000) await removeTree(full);
      else await vfs.unlink(full);
    }
    await vfs.rmdir(dir);
  };
  try {
    switch (op.k) {
      case "bin": {
        const bytes = Buffer.from(op.hex, "hex");
        if (op.off >= 0) {
          await save(await openOrCreate(at(op.p), fsc.O_WRONLY), bytes, op.off);
          return 0;
        }
        const made = !(await exists(at(op.p)));
        const fd = made ? await vfs.create(at(op.p), 0o644) : await vfs.open(at(op.p), fsc.O_WRONLY);
        if (!made)
          await vfs.truncate(at(op.p), 0).catch(async (err) => {
            await vfs.release(fd);
            throw err;
          });
        await save(fd, bytes, 0);
        return 0;
      }
      case "rmrf":
        if (!(await exists(at(op.d)))) return 0;
        await removeTree(at(op.d));
        return 0;
      case "create": {
        if (await exists(at(op.p))) return "EEXIST";
        await save(await vfs.create(at(op.p), 0o644), op.text, 0);
        return 0;
      }
      case "rewrite": {
        // The mount asks for no atomic O_TRUNC: the kernel opens, then truncates by path.
        const made = !(await exists(at(op.p)));
        const fd = made ? await vfs.create(at(op.p), 0o644) : await vfs.open(at(op.p), fsc.O_WRONLY);
        if (!made)
          await vfs.truncate(at(op.p), 0).catch(async (err) => {
            await vfs.release(fd);
            throw err;
          });
        await save(fd, op.text, 0);
        return 0;
      }
      case "append": {
        const fd = await openOrCreate(at(op.p), fsc.O_WRONLY | fsc.O_APPEND);
        // The kernel hands an O_APPEND write the size it knows as its offset.
        await save(fd, op.text, (await vfs.getattr(at(op.p))).size);
        return 0;
      }
      case "pwrite":
        await save(await openOrCreate(at(op.p), fsc.O_WRONLY), op.text, op.off);
        return 0;
      case "truncate":
        await vfs.truncate(at(op.p), op.size);
        return 0;
      case "replace": {
        const tmp = tempOf(at(op.p));
        await save(await vfs.create(tmp, 0o644), op.text, 0);
        await vfs.rename(tmp, at(op.p));
        return 0;
      }
      case "vimsave": {
        if (!(await exists(at(op.p)))) return "ENOENT";
        await vfs.rename(at(op.p), `${at(op.p)}~`);
        await save(await vfs.create(at(op.p), 0o644), op.text, 0, true);
        await vfs.unlink(`${at(op.p)}~`);
        return 0;
      }
      case "mv":
        await vfs.rename(at(op.p), at(op.to));
        return 0;
      case "rm":
        await vfs.unlink(at(op.p));
        return 0;
      case "mkdir":
        await vfs.mkdir(at(op.d), 0o755);
        return 0;
      case "rmdir":
        await vfs.rmdir(at(op.d));
        return 0;
      case "mvdir":
        // The kernel refuses a folder moved into itself before FUSE hears of it; the facade does
        // not (model.test.ts pins that), so the kernel's answer stands in for it here.
        if (op.to.startsWith(`${op.d}/`) && (await exists(at(op.d)))) return "EINVAL";
        await vfs.rename(at(op.d), at(op.to));
        return 0;
      case "tag":
        await vfs.setxattr(at(op.p), "user.txtfs.tags", Buffer.from(op.tags));
        return 0;
      case "corrupt": {
        if (!(await exists(at(op.p)))) return "ENOENT";
        const fd = await vfs.open(at(op.p), fsc.O_WRONLY | fsc.O_APPEND);
        await save(fd, "X", (await vfs.getattr(at(op.p))).size);
        return 0;
      }
    }
  } catch (err) {
    return errnoOf(err);
  }
}

/** Runs `op` on the model, a local directory. */
export function applyToModel(dir: string, op: LocalOp): Outcome {
  const at = (p: string) => join(dir, p);
  const write = (p: string, flags: string, text: string | Buffer, position: number | null) => {
    const fd = openSync(p, flags, 0o644);
    const data = typeof text === "string" ? Buffer.from(text) : text;
    try {
      writeSync(fd, data, 0, data.length, position);
    } finally {
      closeSync(fd);
    }
  };
  try {
    switch (op.k) {
      case "bin": {
        const bytes = Buffer.from(op.hex, "hex");
        if (op.off < 0) write(at(op.p), "w", bytes, 0);
        else write(at(op.p), existsSync(at(op.p)) ? "r+" : "w", bytes, op.off);
        return 0;
      }
      case "rmrf":
        rmSync(at(op.d), { recursive: true, force: true });
        return 0;
      case "create":
        write(at(op.p), "wx", op.text, 0);
        return 0;
      case "rewrite":
        write(at(op.p), "w", op.text, 0);
        return 0;
      case "append":
        write(at(op.p), "a", op.text, null);
        return 0;
      case "pwrite":
        write(at(op.p), existsSync(at(op.p)) ? "r+" : "w", op.text, op.off);
        return 0;
      case "truncate":
        if (statSync(at(op.p)).isDirectory()) return "EISDIR";
        truncateSync(at(op.p), op.size);
        return 0;
      case "replace": {
        const tmp = tempOf(at(op.p));
        write(tmp, "wx", op.text, 0);
        renameSync(tmp, at(op.p));
        return 0;
      }
      case "vimsave":
        if (!existsSync(at(op.p))) return "ENOENT";
        renameSync(at(op.p), `${at(op.p)}~`);
        write(at(op.p), "wx", op.text, 0);
        unlinkSync(`${at(op.p)}~`);
        return 0;
      case "mv":
        renameSync(at(op.p), at(op.to));
        return 0;
      case "rm":
        unlinkSync(at(op.p));
        return 0;
      case "mkdir":
        mkdirSync(at(op.d));
        return 0;
      case "rmdir":
        rmdirSync(at(op.d));
        return 0;
      case "mvdir":
        renameSync(at(op.d), at(op.to));
        return 0;
      case "tag":
        // The model keeps tags in the identity model; here only whether setxattr would succeed.
        statSync(at(op.p));
        return 0;
      case "corrupt":
        return existsSync(at(op.p)) ? 0 : "ENOENT";
    }
  } catch (err) {
    return errnoOf(err);
  }
}
