// How remote names become file names in the mount, and back.
import { fail } from "./errors.ts";

/** Only .md and .txt files live remotely; any other name is a local-only file. */
export function isNoteName(name: string): boolean {
  return /\.(md|txt)$/i.test(name) && !name.startsWith(".fuse_hidden");
}

/** A remote note whose name lacks its type's extension is shown with it. */
export function displayName(remoteName: string, type: "txt" | "md"): string {
  return isNoteName(remoteName) ? remoteName : `${remoteName}.${type}`;
}

/** `note.md` + id -> `note (a1b2c3).md`: stable (derived from the id) and keeps the extension. */
export function disambiguated(name: string, id: string): string {
  const suffix = id.slice(-6).toLowerCase();
  const dot = name.lastIndexOf(".");
  return dot > 0 ? `${name.slice(0, dot)} (${suffix})${name.slice(dot)}` : `${name} (${suffix})`;
}

export function splitPath(path: string): string[] {
  return path.split("/").filter((p) => p !== "");
}

export function parentAndName(path: string): { parent: string; name: string } {
  const parts = splitPath(path);
  const name = parts.pop() ?? "";
  return { parent: `/${parts.join("/")}`, name };
}

/** The name a save that could not go under its own name is kept as (room left for `.99`). */
export function unsentName(name: string): string {
  let stem = name;
  while (Buffer.byteLength(`${stem}.unsent.99`, "utf8") > 255) stem = stem.slice(0, -1);
  return `${stem}.unsent`;
}

/** Whether `name` is one `unsentName` (and `freeName`) makes: such a copy stays on this machine. */
export const isUnsentName = (name: string): boolean => /\.unsent(\.\d+)?$/.test(name);

export function checkName(name: string): void {
  if (Buffer.byteLength(name, "utf8") > 255) throw fail("ENAMETOOLONG");
}
