// The handles of ours open on each kernel node. The kernel's fstat(2) sends GETATTR without the
// descriptor's handle (only lseek, reads and writes pass it): a node whose name is gone (its note
// removed under an open sidecar, say) still answers from one of its open files.
export class OpenHandles {
  private readonly byNode = new Map<number, Set<number>>();

  opened(ino: number, fh: number): void {
    const fhs = this.byNode.get(ino) ?? new Set<number>();
    fhs.add(fh);
    this.byNode.set(ino, fhs);
  }

  released(ino: number, fh: number): void {
    const fhs = this.byNode.get(ino);
    if (!fhs) return;
    fhs.delete(fh);
    if (fhs.size === 0) this.byNode.delete(ino);
  }

  /** One handle open on `ino`, if any. */
  any(ino: number): number | undefined {
    for (const fh of this.byNode.get(ino) ?? []) return fh;
    return undefined;
  }
}
