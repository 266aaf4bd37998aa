// One kind of directory under `.txtfs/` (versions/, tags/, ...). `parts` are the path's parts below
// the area's own directory; `path` is the whole mount path (symlinks are relative to it).
import type { FileNode } from "../tree.ts";
import type { Entry } from "./entries.ts";

export interface Area {
  stat(parts: string[], path: string): Promise<Entry>;
  list(parts: string[], path: string): Promise<string[]>;
  /** A generated file's bytes. */
  read?(parts: string[]): Promise<Buffer>;
  /**
   * Bytes appended to a generated file (comments/): applied (true), not a whole message yet
   * (false: more is to come), or refused with EINVAL.
   */
  append?(parts: string[], data: Buffer): Promise<boolean>;
  mkdir?(parts: string[]): Promise<void>;
  rmdir?(parts: string[]): Promise<void>;
  /** `ln -s NOTE path`: the note the link points at. */
  symlink?(parts: string[], note: FileNode): Promise<void>;
  unlink?(parts: string[], path: string): Promise<void>;
  getxattr?(parts: string[], name: string, path: string): Promise<Buffer | null>;
  setxattr?(parts: string[], name: string, value: Buffer): Promise<void>;
  xattrNames?(parts: string[]): string[];
}
