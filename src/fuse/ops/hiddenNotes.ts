// A removed or replaced note still open keeps a hidden name (`.fuse_hidden…`) until its last close,
// as libfuse's high-level API does: its handles go on reading and writing what they opened.
import { errnoOf } from "../errno.ts";
import type { KernelNode } from "../kernelCache/nodes.ts";
import type { OpContext } from "./context.ts";

export class HiddenNotes {
  private readonly ctx: OpContext;

  constructor(ctx: OpContext) {
    this.ctx = ctx;
  }

  /** `node` at `path` is open (NativeOpens.openWatched said so): it takes a hidden name instead. */
  async hide(node: KernelNode, path: string): Promise<void> {
    const { nodes, names, vfs, opens } = this.ctx;
    const name = nodes.hiddenName(node);
    const hidden = `${path.slice(0, path.lastIndexOf("/"))}/${name}`;
    names.named(node.parent, name);
    this.ctx.trace("rename", path);
    await vfs.rename(path, hidden);
    nodes.move(node, node.parent, name);
    node.hidden = true;
    // Its last release may have been answered during the rename, before it was hidden.
    if (opens.count(node) === 0) await this.remove(node);
  }

  /** A hidden note's last handle was released: the hidden name goes (once). */
  async remove(node: KernelNode): Promise<void> {
    if (!node.hidden) return;
    const { nodes, native, vfs, log } = this.ctx;
    node.hidden = false;
    native.watchReleases(node.ino, false);
    const path = nodes.pathOf(node.ino);
    if (path !== undefined) {
      try {
        this.ctx.trace("unlink", path);
        await vfs.unlink(path);
      } catch (err) {
        const errno = errnoOf(err, log, "unlink", path);
        log.warn({ path, errno }, "a removed note's hidden name could not be removed");
      }
    }
    nodes.detach(node);
  }
}
