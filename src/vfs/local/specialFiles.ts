// Files that are not regular files: symbolic links, fifos, sockets and device nodes. Kept on this device like the
// other files that are not notes (the service has none of them), in the local-files manifest
// (a link with its target), so they survive a restart and are listed by `txtfs status`. Whatever
// their name (`LINK.md -> README.md` in a git repository), they never go up: only regular files
// become notes. The mount is nodev: a device node is kept (`tar -x`, `cp -a` of one work) but
// cannot be opened through it.

import type { VfsCore } from "../core.ts";
import { fail } from "../errors.ts";
import type { Attributes } from "../meta/attributes.ts";
import { checkName, parentAndName } from "../names.ts";
import type { DirNode, LocalNode } from "../tree.ts";
import type { Claims } from "./claims.ts";

/** The longest target a link may hold (Linux's PATH_MAX, terminating null included). */
const PATH_MAX = 4096;
const S_IFMT = 0o170000;
const S_IFIFO = 0o010000;
const S_IFSOCK = 0o140000;
const S_IFCHR = 0o020000;
const S_IFBLK = 0o060000;
const TYPES = { fifo: S_IFIFO, socket: S_IFSOCK, device: 0 } as const;

/** Who made an item (the request's uid and gid): its owner on this device. */
export interface Owner {
  uid: number;
  gid: number;
}

/** The parts special files call. */
export interface SpecialFilesParts {
  attributes: Pick<Attributes, "ownedBy">;
  claims: Pick<Claims, "nameTaken">;
}

/** What special files use of the mount's shared state. */
export type SpecialFilesCore = Pick<
  VfsCore,
  "checkWritable" | "clock" | "find" | "findDir" | "localNodes" | "tree"
>;

export class SpecialFiles {
  private readonly attributes: SpecialFilesParts["attributes"];
  private readonly claims: SpecialFilesParts["claims"];
  private readonly c: SpecialFilesCore;

  constructor(c: SpecialFilesCore, parts: SpecialFilesParts) {
    this.c = c;
    this.attributes = parts.attributes;
    this.claims = parts.claims;
  }

  /** `ln -s target path`. */
  symlink(target: string, path: string, owner?: Owner): void {
    const bytes = Buffer.byteLength(target, "utf8");
    if (bytes === 0) throw fail("ENOENT");
    if (bytes >= PATH_MAX) throw fail("ENAMETOOLONG");
    const node = this.make(path, 0o777, owner);
    node.link = target;
    node.size = bytes;
  }

  /** `readlink path`. */
  readlink(path: string): string {
    const node = this.c.find(path);
    if (node.kind !== "local" || node.link === undefined) throw fail("EINVAL");
    return node.link;
  }

  /** `mkfifo`, a socket's bind(2), `mknod`: `mode` with its type bits. */
  mknod(path: string, mode: number, rdev: number, owner?: Owner): void {
    const type = mode & S_IFMT;
    if (type === 0 || type === 0o100000) throw fail("EPERM", "a regular file is made by create");
    if (type !== S_IFIFO && type !== S_IFSOCK && type !== S_IFCHR && type !== S_IFBLK) throw fail("EINVAL");
    const node = this.make(path, mode & 0o7777, owner);
    node.special = type === S_IFIFO ? "fifo" : type === S_IFSOCK ? "socket" : "device";
    if (node.special === "device") node.rdev = { type, dev: rdev };
  }

  private make(path: string, mode: number, owner: Owner | undefined): LocalNode {
    const { parent, name } = parentAndName(path);
    const dir: DirNode = this.c.findDir(parent);
    this.c.checkWritable(dir);
    checkName(name);
    if (dir.children.has(name)) throw fail("EEXIST");
    const node: LocalNode = {
      kind: "local",
      name,
      parent: dir,
      blob: "",
      mode,
      size: 0,
      mtimeMs: this.c.clock.now(),
    };
    this.attributes.ownedBy(node, owner);
    this.c.tree.addChild(dir, node);
    // A note deleted under this name a moment ago is not continued by a later create: the name
    // was taken by something else since.
    this.claims.nameTaken(dir, name);
    this.c.localNodes.save();
    return node;
  }
}

/** Whether a node is a link, fifo or socket: kept as it is under any name, never opened here. */
export const isSpecial = (node: { kind: string; link?: string; special?: string } | undefined): boolean =>
  node?.kind === "local" && (node.link !== undefined || node.special !== undefined);

/** The type bits of a special local file. */
export function specialType(node: LocalNode): number | undefined {
  if (node.link !== undefined) return 0o120000;
  if (node.special === "device") return node.rdev?.type ?? S_IFCHR;
  return node.special ? TYPES[node.special] : undefined;
}
