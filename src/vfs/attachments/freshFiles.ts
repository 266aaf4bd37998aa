// Files made here and closed, not saved as attachments yet: saved a moment later, so a program's
// temp file renamed over its note at once (`sed -i`, `perl -i`, a script's `out.tmp`) costs no
// snapshot and no journal entry. Nothing is lost meanwhile: the file and its bytes are in the
// local store and its manifest (written at the close), so a kill -9 finds it and the next start
// saves it (Attachments.started). Whatever must see every save journalled — fsync, a drain (`txtfs
// sync`, unmount), an open for writing — saves them first, and they count as pending.
import type { LocalNode } from "../tree.ts";

/** How long a closed new file waits before its save: longer than a rename right after a close. */
export const FRESH_MS = 200;

export class FreshFiles {
  private readonly waiting = new Map<LocalNode, ReturnType<typeof setTimeout>>();
  private readonly save: (node: LocalNode) => Promise<void>;
  private readonly failed: (err: unknown, node: LocalNode) => void;

  constructor(save: (node: LocalNode) => Promise<void>, failed: (err: unknown, node: LocalNode) => void) {
    this.save = save;
    this.failed = failed;
  }

  get size(): number {
    return this.waiting.size;
  }

  has(node: LocalNode): boolean {
    return this.waiting.has(node);
  }

  /** `node` was closed: its save goes in FRESH_MS (again from now, if it was waiting). */
  closed(node: LocalNode): void {
    clearTimeout(this.waiting.get(node));
    const timer = setTimeout(() => {
      if (this.waiting.get(node) !== timer) return;
      this.waiting.delete(node);
      this.save(node).catch((err) => this.failed(err, node));
    }, FRESH_MS);
    timer.unref?.();
    this.waiting.set(node, timer);
  }

  /** `node` needs no save of its own now (removed, became a note, or saved by its caller). */
  forget(node: LocalNode): void {
    clearTimeout(this.waiting.get(node));
    this.waiting.delete(node);
  }

  /** `node`'s save, now, if it waits. */
  async now(node: LocalNode): Promise<void> {
    if (!this.waiting.has(node)) return;
    this.forget(node);
    await this.save(node);
  }

  /** Every waiting save, now. */
  async all(): Promise<void> {
    for (const node of [...this.waiting.keys()]) await this.now(node);
  }
}
