// Which paths the kernel may still hold stale attributes for. A note whose content changed without
// the kernel (a remote edit, our save kept as a conflict copy, another note taking the name) is told
// to the kernel by a notification (reconcile.ts), which waits while a request about the
// note is being answered: until it lands, the kernel may show the note's previous size, reads
// through the page cache stop at that size (a cut-off file, which an editor would save back) and
// appends land at it. Opens of such a note within the window get direct I/O (reads and writes go to
// the daemon, never cut at the kernel's size), and none is answered in C (native/fuse3/opens.c);
// after it the page cache is safe (pages are kept only while mtime and size stay, checked at every
// open). The window is the longest the kernel keeps attributes it is not told about: a second.

/** How long the kernel could keep a path's attributes untold (seconds): the window's base. */
export const KERNEL_ATTR_TIMEOUT_S = 1;

/** That timeout plus a margin for answers in flight while the change happened. */
export const STALE_WINDOW_MS = KERNEL_ATTR_TIMEOUT_S * 1000 + 500;

const PRUNE_AT = 10_000;

export class StaleWindow {
  private readonly changedAt = new Map<string, number>();
  private anyChangedAt = Number.NEGATIVE_INFINITY;
  private readonly windowMs: number;
  private readonly now: () => number;

  constructor(windowMs = STALE_WINDOW_MS, now: () => number = performance.now.bind(performance)) {
    this.windowMs = windowMs;
    this.now = now;
  }

  /** What `path` answers changed (no path: what anything answers may have). */
  changed(path?: string): void {
    const now = this.now();
    if (path !== undefined && this.changedAt.size >= PRUNE_AT) this.prune(now);
    // Too many at once (a burst of remote changes): as if anything changed.
    if (path === undefined || this.changedAt.size >= PRUNE_AT) {
      this.anyChangedAt = now;
      this.changedAt.clear(); // all covered by anyChangedAt for the next window
      return;
    }
    this.changedAt.set(path, now);
  }

  /** Whether the kernel may hold attributes of `path` from before its last change. */
  mayBeStale(path: string): boolean {
    return this.staleForMs(path) > 0;
  }

  /** For how much longer the kernel may hold attributes of `path` from before its last change (0: not). */
  staleForMs(path: string): number {
    const last = Math.max(this.anyChangedAt, this.changedAt.get(path) ?? Number.NEGATIVE_INFINITY);
    return Math.max(0, last + this.windowMs - this.now());
  }

  private prune(now: number): void {
    for (const [path, at] of this.changedAt) if (at <= now - this.windowMs) this.changedAt.delete(path);
  }
}
