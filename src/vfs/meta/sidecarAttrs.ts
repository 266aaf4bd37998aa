// Sidecars as files: the path that names one, its attributes (rendered on demand, so always fresh),
// its JSON once the note is on the service, and an edit applied or refused.
import type { VfsCore } from "../core.ts";
import type { Delivery } from "../delivery/deliver.ts";
import { fail } from "../errors.ts";
import { S_IFREG } from "../fileModes.ts";
import { parentAndName } from "../names.ts";
import type { Stat } from "../stat.ts";
import { type SidecarNode, sidecarAt } from "./sidecars.ts";
import { type StatCore, statOf } from "./statOf.ts";

/** The parts sidecars call: a note on its way is delivered before its JSON is read or applied. */
export interface SidecarAttrsParts {
  delivery: Pick<Delivery, "settle">;
}

export type SidecarAttrsCore = StatCore & Pick<VfsCore, "clock" | "localNodes" | "reports" | "sidecars">;

export class SidecarAttrs {
  private readonly c: SidecarAttrsCore;
  private readonly delivery: SidecarAttrsParts["delivery"];

  constructor(c: SidecarAttrsCore, parts: SidecarAttrsParts) {
    this.c = c;
    this.delivery = parts.delivery;
  }

  /** A sidecar's attributes with `content` as its body (what it renders, or what an open of it holds). */
  sidecarStat(sidecar: SidecarNode, content: Buffer): Stat {
    const size = content.length;
    const base = statOf(this.c, sidecar.target);
    const ro =
      this.c.access.readOnly || (sidecar.target.kind !== "local" && sidecar.target.meta?.role === "reader");
    // Sidecars are rendered on demand and may differ from what was last written to them (a refused
    // edit): a fresh mtime makes every open drop cached pages (auto_cache), so reads see the truth.
    const mtime = new Date(this.c.clock.now());
    return {
      ...base,
      mtime,
      ctime: mtime,
      mode: S_IFREG | (ro ? 0o444 : 0o644),
      size,
      nlink: 1,
      blocks: Math.ceil(size / 512),
    };
  }

  /** A sidecar's JSON; a note still on its way is delivered first (its id, times and etag are the service's). */
  async renderSidecar(target: SidecarNode["target"]): Promise<Buffer> {
    await this.delivery.settle(target);
    if (target.kind === "file" && !target.id) throw fail("ENOENT", "the note is not saved yet");
    return this.c.sidecars.render(target);
  }

  /** The (unlisted) sidecar a path names, when nothing real has that name. */
  sidecar(path: string): SidecarNode | undefined {
    const { parent, name } = parentAndName(path);
    const dir = this.c.tree.lookup(parent);
    return dir?.kind === "dir" ? sidecarAt(dir, name) : undefined;
  }

  /** Attribute calls on a sidecar path: it has no attributes of its own (null = not a sidecar). */
  sidecarOnly(path: string): SidecarNode | null {
    return this.c.tree.lookup(path) ? null : (this.sidecar(path) ?? null);
  }

  /** Applies a sidecar's JSON (written, or renamed onto it); a refusal is logged and kept for status. */
  async applySidecar(sidecar: SidecarNode, text: string): Promise<void> {
    await this.delivery.settle(sidecar.target);
    try {
      await this.c.sidecars.apply(sidecar.target, text);
      if (sidecar.target.kind === "local") this.c.localNodes.save();
    } catch (err) {
      this.sidecarRefused(sidecar, err);
      throw err;
    }
  }

  /** A sidecar edit refused (at a write or when applied): logged and kept for `txtfs status`. */
  sidecarRefused(sidecar: SidecarNode, err: unknown): void {
    const dir = this.c.tree.pathOf(sidecar.parent);
    this.c.reports.metadataRefused(`${dir === "/" ? "" : dir}/${sidecar.name}`, err);
  }
}
