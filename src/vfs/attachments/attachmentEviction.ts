// Attachments' bytes read from the service are a cache, bounded as the notes' content cache is
// (`--cache-size`): past it, the least recently used clean ones are dropped and read again at their
// next open. Never evicted: a file with something of ours waiting (a save in the journal, a program
// holding it open, its bytes being read or snapshotted), one never on the service, and one under a
// folder made `available` or `pinned` on this device (`txtfs pin`), which is kept for offline use.
import type { LocalNode } from "../tree.ts";

export interface AttachmentEvictionDeps {
  /** Bytes of attachments kept on disk beyond which the least recently used go. */
  budget: number;
  /** Whether something of ours waits for `node` or uses its bytes now. */
  busy(node: LocalNode): boolean;
  /** Whether `node` is kept on this device whatever the budget (its folder's availability). */
  keptOffline(node: LocalNode): boolean;
  /** Whether `node` is still in the tree. */
  shown(node: LocalNode): boolean;
  /** Drops the bytes: the file is the service's only again (its blob removed, a new path given). */
  evict(node: LocalNode): void;
}

export class AttachmentEviction {
  private readonly d: AttachmentEvictionDeps;
  /** Files whose bytes are on disk, least recently used first, with those bytes' size. */
  private readonly onDisk = new Map<LocalNode, number>();
  private total = 0;

  constructor(deps: AttachmentEvictionDeps) {
    this.d = deps;
  }

  /** `node`'s bytes (`size` of them) are on disk and were just used (read, written, delivered). */
  used(node: LocalNode, size: number): void {
    this.forget(node);
    this.onDisk.set(node, size);
    this.total += size;
  }

  /** `node`'s bytes are no longer on disk (removed, changed elsewhere, evicted). */
  forget(node: LocalNode): void {
    const size = this.onDisk.get(node);
    if (size === undefined) return;
    this.onDisk.delete(node);
    this.total -= size;
  }

  /** What is kept on disk now (for `txtfs status` and tests). */
  get bytesOnDisk(): number {
    return this.total;
  }

  /** Back within the budget, oldest first; returns how many files were evicted. */
  trim(): number {
    if (this.total <= this.d.budget) return 0;
    // Unbound, gone or the service's only again (changed there): nothing of theirs here to count.
    for (const [node] of [...this.onDisk]) {
      const b = node.attachment;
      if (!b || b.remoteOnly || !this.d.shown(node)) this.forget(node);
    }
    let evicted = 0;
    for (const [node] of [...this.onDisk]) {
      if (this.total <= this.d.budget) break;
      if (!node.attachment!.id || this.d.busy(node) || this.d.keptOffline(node)) continue;
      this.d.evict(node);
      this.forget(node);
      evicted++;
    }
    return evicted;
  }
}
