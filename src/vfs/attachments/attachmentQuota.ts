// The service's limits on attachments, met at the write: past the size per file (EFBIG) or the
// account's quota (EDQUOT) a save would be refused for good at delivery, and a write must not be
// accepted only to be undone later. The quota counts the bytes of the account's current
// attachments: the service's figure (read at the start, moved by our own deliveries, read again
// after a refusal) plus what this mount has written and not delivered yet.
import type { AttachmentLimits } from "../../client/attachments.ts";
import { fail } from "../errors.ts";
import type { DirNode, LocalNode } from "../tree.ts";

export interface AttachmentQuotaDeps {
  /** The service's limits now (undefined: it does not say; the delivery then finds out). */
  read(): Promise<AttachmentLimits | undefined>;
  /** Whether `node` is in this mount's tree still. */
  shown(node: LocalNode): boolean;
  /** Whether `node` goes to the service: bound, or a new file whose first save is still to come. */
  goesUp(node: LocalNode): boolean;
  root: DirNode;
}

export class AttachmentQuota {
  private readonly d: AttachmentQuotaDeps;
  private limits: AttachmentLimits | undefined;
  /** Files written here whose size may differ from the version the service has (baseSize). */
  private readonly unsent = new Set<LocalNode>();
  /** Moved by every delivery of ours: a figure read across one is older than ours, and dropped. */
  private generation = 0;
  /** Our deletes on their way: the size each frees once it lands. */
  private readonly deleting = new Map<string, number>();
  private reading: Promise<void> | undefined;
  private readAgain = false;

  constructor(d: AttachmentQuotaDeps) {
    this.d = d;
  }

  /** The limits as read at the start. */
  known(limits: AttachmentLimits | undefined): void {
    this.limits = limits;
  }

  /**
   * Before `node` (an attachment of the account) takes `size` bytes: EFBIG past the largest file,
   * EDQUOT when it grows past what the quota leaves. Becoming smaller never fails.
   */
  check(node: LocalNode, size: number): void {
    const limits = this.limits;
    if (!limits) return;
    if (size > limits.maxBytes)
      throw fail("EFBIG", `the service takes files of at most ${limits.maxBytes} bytes`);
    if (!this.counted(node)) return;
    const grows = size - baseSize(node);
    if (grows > 0) {
      let others = 0;
      for (const n of this.unsent) {
        if (n === node) continue;
        if (!this.d.shown(n) || !this.d.goesUp(n)) this.unsent.delete(n);
        else others += Math.max(0, n.size - baseSize(n));
      }
      if (limits.usedBytes + others + grows > limits.quotaBytes)
        throw fail(
          "EDQUOT",
          `the account's attachments would pass their quota of ${limits.quotaBytes} bytes`,
        );
    }
    this.unsent.add(node);
  }

  /** Our save of `node` landed: the service counts `size` bytes for it where it counted `before`. */
  delivered(node: LocalNode, before: number, size: number): void {
    this.generation++;
    if (this.limits) this.limits = { ...this.limits, usedBytes: this.limits.usedBytes + size - before };
    if (node.size === size) this.unsent.delete(node);
  }

  /** Our delete of attachment `id` is on its way: once it lands, the service no longer counts `size`. */
  freeing(id: string, size: number | undefined): void {
    if (size !== undefined) this.deleting.set(id, size);
  }

  /** Our delete of `id` was answered: `gone` (it removed the version it named), or it stays. */
  deleted(id: string, gone: boolean): void {
    const size = this.deleting.get(id);
    this.deleting.delete(id);
    if (!gone || size === undefined) return;
    this.generation++;
    if (this.limits) this.limits = { ...this.limits, usedBytes: Math.max(0, this.limits.usedBytes - size) };
  }

  /**
   * The service's figure again (after a refusal: another device may have filled the quota; after
   * a conflict copy). Awaitable, so a refusal's next write already knows.
   */
  refresh(): Promise<void> {
    if (this.reading) {
      this.readAgain = true;
      return this.reading;
    }
    const generation = this.generation;
    this.reading = this.d
      .read()
      .then((limits) => {
        if (limits && generation === this.generation) this.limits = limits;
      })
      .catch(() => {}) // the figure we have stands; the delivery finds out
      .finally(() => {
        this.reading = undefined;
        if (this.readAgain) {
          this.readAgain = false;
          void this.refresh();
        }
      });
    return this.reading;
  }

  /** In a folder someone else owns (shared with us), a file counts against their quota, not ours. */
  private counted(node: LocalNode): boolean {
    let dir: DirNode | null = node.parent;
    while (dir && dir !== this.d.root && !dir.meta) dir = dir.parent;
    return !dir || dir === this.d.root || dir.meta?.access !== "shared";
  }
}

/** The size the service has for `node` (its current size when not recorded: bound before sizes were kept). */
function baseSize(node: LocalNode): number {
  const b = node.attachment;
  if (!b || b.etag === null) return 0;
  return b.size ?? node.size;
}
