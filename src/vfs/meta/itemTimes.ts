// The times an item shows that a program set (utimens) or the service's answer brings (a save that
// became a conflict copy), and a delivered note's times kept for the next mount (noteTimes.ts).
import type { VfsCore } from "../core.ts";
import type { Saves } from "../open/saves.ts";
import type { FileNode } from "../tree.ts";
import type { ModesAndOwners } from "./modesAndOwners.ts";
import type { SidecarAttrs } from "./sidecarAttrs.ts";
import { type StatCore, statOf } from "./statOf.ts";

/** The parts times call: a new note goes up first, modes are kept along, a sidecar has none. */
export interface ItemTimesParts {
  modes: Pick<ModesAndOwners, "keepFolderAttrs" | "keepNoteAttrs">;
  saves: Pick<Saves, "needsUpload" | "upload">;
  sidecars: Pick<SidecarAttrs, "sidecarOnly">;
}

export type ItemTimesCore = StatCore &
  Pick<VfsCore, "attrsChanged" | "clock" | "find" | "localNodes" | "times">;

export class ItemTimes {
  private readonly c: ItemTimesCore;
  private readonly modes: ItemTimesParts["modes"];
  private readonly saves: ItemTimesParts["saves"];
  private readonly sidecars: ItemTimesParts["sidecars"];

  constructor(c: ItemTimesCore, parts: ItemTimesParts) {
    this.c = c;
    this.modes = parts.modes;
    this.saves = parts.saves;
    this.sidecars = parts.sidecars;
  }

  /** Sets the times a program asked for (undefined: UTIME_OMIT, that one stays). */
  async utimens(path: string, atime: number | undefined, mtime: number | undefined): Promise<void> {
    if (this.sidecars.sidecarOnly(path)) return;
    const node = this.c.find(path);
    // `touch new.md` (create, utimens, close): send the empty note now, so it exists remotely
    // when touch returns (the kernel does not wait for release).
    const open = node.kind === "file" ? node.note?.open : undefined;
    if (open && this.saves.needsUpload(open)) await this.saves.upload(open);
    const now = this.c.clock.now();
    if (node.kind === "local") {
      node.mtimeMs = mtime ?? node.mtimeMs;
      node.atimeMs = atime ?? node.atimeMs;
      node.ctimeMs = now;
      this.c.localNodes.save();
    } else if (node.kind === "file") {
      // Kept here (the service keeps its own updatedAt), and across restarts while the content is
      // the same (noteTimes): `rsync -a` and `make` see the times they set.
      const shown = statOf(this.c, node);
      this.c.notes.of(node).timesSet(mtime ?? shown.mtime.getTime(), atime ?? shown.atime.getTime(), now);
      this.rememberTimes(node);
    } else {
      // The service keeps no time of its own a program could set: this device keeps it (rsync -a
      // sets every folder's time after filling it; not kept, every later run sent them again).
      const shown = statOf(this.c, node);
      node.localMtimeMs = mtime ?? shown.mtime.getTime();
      node.localAtimeMs = atime ?? shown.atime.getTime();
      node.localCtimeMs = now;
      node.timesKept = true;
      this.modes.keepFolderAttrs(node);
    }
    this.c.attrsChanged(node);
  }

  /**
   * The note shows the service's version where it showed our save (that save became a conflict
   * copy): its times are the service's, and its mtime always moves, so the kernel's auto_cache
   * drops the pages of our version at the next open (same size and mtime would keep them).
   */
  showRemoteVersion(node: FileNode): void {
    const before = statOf(this.c, node).mtime.getTime();
    const note = this.c.notes.of(node);
    note.timesFromService();
    if (statOf(this.c, node).mtime.getTime() === before) note.shownApart(before + 1);
    this.c.attrsChanged(node);
    this.c.tree.onRemoteChange(node);
  }

  /** Keeps a delivered note's times for the next mount (a pending one's are kept once it is delivered). */
  rememberTimes(node: FileNode): void {
    // A note made here has an id now: what this device keeps of it is kept by it.
    if (node.mode !== undefined || node.uid !== undefined || node.gid !== undefined)
      this.modes.keepNoteAttrs(node);
    const times = this.c.notes.timesOf(node);
    const mtimeMs = times?.mtimeMs;
    if (!node.meta || mtimeMs === undefined || this.c.notes.stateOf(node) !== "clean") return;
    this.c.times.set(node.meta.id, { hash: node.meta.contentHash, mtimeMs, atimeMs: times?.atimeMs });
  }
}
