// What an open file descriptor is in the vfs: a note, a sidecar, a local file or a folder.
import type { Base } from "./base.ts";
import type { LocalHandle } from "./local/localFiles.ts";
import type { SidecarNode } from "./meta/sidecars.ts";
import type { OpenNote } from "./openNote.ts";
import type { LocalNode } from "./tree.ts";

export interface OpenSidecar {
  sidecar: SidecarNode;
  refs: number;
  content: Buffer;
  dirty: boolean;
}

export type OpenFile =
  | {
      kind: "note";
      open: OpenNote;
      append: boolean;
      writable: boolean;
      /** What a reader reads while nothing is written through the note, and what it is a copy of. */
      snapshot?: Buffer;
      snapshotOf?: unknown;
      /** The version that snapshot is: a write through this handle builds on it (handles.ts). */
      snapshotBase?: Base;
      /**
       * A write would have taken the note past its largest size: the save through this handle is
       * refused whole, so its writes, flushes and close answer EFBIG (handles.ts, refuseOversize).
       */
      oversize?: boolean;
    }
  | {
      kind: "sidecar";
      open: OpenSidecar;
      /** A write through it could never make an acceptable sidecar: EINVAL until it is closed. */
      refused?: boolean;
    }
  | {
      kind: "local";
      node: LocalNode;
      fh: LocalHandle;
      append: boolean;
      written?: boolean;
      /** Written since its last flush: an attachment's bytes go up at the next (saves.ts). */
      unsaved?: boolean;
      /** Made by this open (create): an attachment goes up at its close even if nothing was written. */
      made?: boolean;
    }
  | { kind: "dir" };
