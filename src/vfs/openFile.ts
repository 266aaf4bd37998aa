// What an open file descriptor is in the vfs: a note, a sidecar, a local file or a folder.
import type { Base } from "./base.ts";
import type { LocalHandle } from "./local/localFiles.ts";
import type { SidecarNode } from "./meta/sidecars.ts";
import type { FileNode, LocalNode } from "./tree.ts";

/** Written by its two owners only: OpenFiles (handles.ts) and its note's Note (note.ts). */
export interface OpenNote {
  node: FileNode;
  refs: number;
  /** The body being edited; null until something needs it. */
  content: Buffer | null;
  /** The version the edit is based on: If-Match on upload, and how to tell a real conflict. */
  base: Base;
  dirty: boolean;
  /**
   * The note shows another version than this buffer (our save became a conflict copy while the
   * file was open): once the last handle closes, its times move so no stale page is read again.
   */
  detached?: boolean;
  /** Made by create(): uploaded at release even if nothing was written (touch). */
  created: boolean;
  /** Spare capacity behind `content`, so a file written 4 KiB at a time is not copied each time. */
  backing?: Buffer;
  /**
   * Append-only (opened O_WRONLY|O_APPEND, body not here): the bytes appended since the last save,
   * the body never loaded. Saved as an append (`file.append`); anything else done with the note
   * loads the body first and turns this into `content` (handles.ts, materialize).
   */
  tail?: Buffer;
  materializing?: Promise<void>;
}

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
  | { kind: "local"; node: LocalNode; fh: LocalHandle; append: boolean; written?: boolean }
  | { kind: "dir" };
