import type { TxtFolder } from "../lib/apiTypes.ts";
import type { DirNode } from "./tree.ts";

/** The record a folder made here (at `atMs`, the mount's clock) shows until the service has created it. */
export function provisionalFolder(name: string, parent: DirNode, atMs: number): TxtFolder {
  const now = new Date(atMs).toISOString();
  return {
    id: "",
    name,
    context: "",
    tags: [],
    parentFolderId: parent.id,
    fileCount: 0,
    createdAt: now,
    updatedAt: now,
    endpoint: "",
    access: "owner",
    role: "owner",
  };
}
