// Which folders made in the mount stay on this machine. A folder made by a tool for its own state
// would otherwise appear on the service and on every other device (`git init` made 165 folders):
//
// - "always": folders tools keep their state in (`.git`, `node_modules`, virtualenvs, caches;
//   extendable with `--local-dir NAME`). Everything inside stays local, notes included (a package's
//   README.md in node_modules is not a note of yours). Like rclone's `--exclude`.
// - "until-note": any other folder whose name starts with a dot (`.obsidian`, `.github`). It stays
//   local while it holds no note, and is created on the service (with its dot-folder parents) when
//   the first note is put inside; then it is an ordinary folder.
//
// Folders made under either kind are of the same kind. Renaming a local folder to a name without a
// dot (outside any local folder) makes it an ordinary folder too.

/** Names of the folders whose content always stays local (see the header). */
export const ALWAYS_LOCAL_DIRS = [
  ".git",
  ".hg",
  ".svn",
  ".jj",
  "node_modules",
  ".venv",
  "venv",
  "__pycache__",
  ".pytest_cache",
  ".mypy_cache",
  ".cache",
  ".direnv",
  ".idea",
];

export type LocalDirKind = "until-note" | "always";

/** The kind of local folder a new folder named `name` in a folder of kind `parent` is, if any. */
export function localDirKind(
  name: string,
  parent: LocalDirKind | undefined,
  alwaysLocal: ReadonlySet<string>,
): LocalDirKind | undefined {
  if (parent === "always" || alwaysLocal.has(name)) return "always";
  if (parent === "until-note" || name.startsWith(".")) return "until-note";
  return undefined;
}
