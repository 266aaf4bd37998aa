// Symbolic links: kept on this device like the other files that are not notes (the service has
// no links), in the local-files manifest with their target, so they survive a restart and are
// listed by `txtfs status`. A link named like a note (`LINK.md -> README.md` in a git repository)
// is still a link: only regular files become notes.
import { checkName, type VfsCore } from "../core.ts";
import { fail } from "../errors.ts";
import { parentAndName } from "../names.ts";
import type { LocalNode } from "../tree.ts";

/** The longest target a link may hold (Linux's PATH_MAX, terminating null included). */
const PATH_MAX = 4096;

export class Symlinks {
  private readonly c: VfsCore;

  constructor(c: VfsCore) {
    this.c = c;
  }

  /** `ln -s target path`. */
  create(target: string, path: string): void {
    const { parent, name } = parentAndName(path);
    const dir = this.c.findDir(parent);
    this.c.checkWritable(dir);
    checkName(name);
    if (dir.children.has(name)) throw fail("EEXIST");
    const bytes = Buffer.byteLength(target, "utf8");
    if (bytes === 0) throw fail("ENOENT");
    if (bytes >= PATH_MAX) throw fail("ENAMETOOLONG");
    const node: LocalNode = {
      kind: "local",
      name,
      parent: dir,
      blob: "",
      link: target,
      mode: 0o777,
      size: bytes,
      mtimeMs: Date.now(),
    };
    this.c.tree.addChild(dir, node);
    // A note deleted under this name a moment ago is not continued by a later create: the name
    // was taken by something else meanwhile.
    this.c.claims.nameTaken(dir, name);
    this.c.saveLocal();
  }

  /** `readlink path`. */
  read(path: string): string {
    const node = this.c.find(path);
    if (node.kind !== "local" || node.link === undefined) throw fail("EINVAL");
    return node.link;
  }
}

/** Whether a node is a symbolic link. */
export const isSymlink = (node: { kind: string; link?: string } | undefined): boolean =>
  node?.kind === "local" && node.link !== undefined;
