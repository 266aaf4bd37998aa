// Extended attributes: a note's metadata read and set on the service once its save is there
// (xattrs.ts), and the availability attribute `txtfs pin` sets (pins.ts).
import type { Attachments } from "../attachments/attachments.ts";
import type { VfsCore } from "../core.ts";
import type { Delivery } from "../delivery/deliver.ts";
import { fail, toVfsError } from "../errors.ts";
import type { Node } from "../tree.ts";
import { AVAILABILITIES, type Availability, itemsBelow } from "./pins.ts";
import type { SidecarAttrs } from "./sidecarAttrs.ts";
import { readXattr, STATE_XATTR, writeXattr, xattrNames } from "./xattrs.ts";

/** The parts xattrs call: a note's waiting save settles first; a sidecar path has none. */
export interface ExtendedAttrsParts {
  attachments: Pick<Attachments, "keepPinned">;
  delivery: Pick<Delivery, "settle">;
  sidecars: Pick<SidecarAttrs, "sidecarOnly">;
}

export type ExtendedAttrsCore = Pick<
  VfsCore,
  "checkWritable" | "client" | "find" | "localNodes" | "notes" | "pins" | "reports" | "tree"
>;

export class ExtendedAttrs {
  private readonly c: ExtendedAttrsCore;
  private readonly attachments: ExtendedAttrsParts["attachments"];
  private readonly delivery: ExtendedAttrsParts["delivery"];
  private readonly sidecars: ExtendedAttrsParts["sidecars"];

  constructor(c: ExtendedAttrsCore, parts: ExtendedAttrsParts) {
    this.c = c;
    this.attachments = parts.attachments;
    this.delivery = parts.delivery;
    this.sidecars = parts.sidecars;
  }

  async getxattr(path: string, name: string): Promise<Buffer | null> {
    if (this.sidecars.sidecarOnly(path)) return null;
    const node = this.c.find(path);
    if (name === STATE_XATTR) return this.readState(node);
    await this.delivery.settle(node);
    return readXattr(this.c.client, node, name);
  }

  listxattr(path: string): string[] {
    if (this.sidecars.sidecarOnly(path)) return [];
    return xattrNames(this.c.find(path));
  }

  async setxattr(path: string, name: string, value: Buffer): Promise<void> {
    if (this.sidecars.sidecarOnly(path)) throw fail("ENOTSUP");
    const node = this.c.find(path);
    if (name === STATE_XATTR) return this.writeState(node, value);
    if (name.startsWith("user.txtfs.")) this.c.checkWritable(node);
    await this.delivery.settle(node);
    try {
      await writeXattr(this.c.client, this.c.tree, this.c.notes, node, name, value);
    } catch (err) {
      this.c.reports.metadataRefused(`${path} (${name})`, err);
      throw err;
    }
    if (node.kind === "local") this.c.localNodes.save();
  }

  readState(node: Node): Buffer | null {
    // An attachment's own state, else its folder's (attachmentEviction.ts, attachmentDownloads.ts).
    if (node.kind === "local") return node.attachment ? Buffer.from(this.c.pins.stateOf(node)) : null;
    if (!node.id) return null;
    return Buffer.from(this.c.pins.stateOf(node));
  }

  /** `txtfs pin/unpin` set this attribute: online-only, available or pinned (folders: recursive). */
  async writeState(node: Node, value: Buffer): Promise<void> {
    const state = value.toString("utf8").trim() as Availability;
    if (!AVAILABILITIES.includes(state)) throw fail("EINVAL");
    // Not on the service (yet): a local-only file, a note or attachment whose create is on its way.
    if (node.kind === "local" ? !node.attachment?.id : !node.id) throw fail("EPERM");
    try {
      await this.c.pins.set(node, state, itemsBelow(node));
    } catch (err) {
      throw toVfsError(err);
    }
    // Its files that are not notes too, now: `txtfs pin` returns with everything on this device.
    if (state === "pinned" && node.kind !== "file") await this.attachments.keepPinned();
  }
}
