// How remote names become file names in the mount, and back.

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
