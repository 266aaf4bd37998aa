// One mount's exclude list: the defaults, then the `.txtfsignore` at the mount root, then each
// `--exclude` (the last pattern that matches decides, so a `!` in the file re-includes a default and
// the command line has the last word). The file is read again whenever its bytes change, so a
// save of it applies to the next file made, as a `.gitignore` does.
import type { Logger } from "../../lib/logger.ts";
import {
  DEFAULT_EXCLUDES,
  ExcludePatternError,
  type ExcludeRule,
  excludedBy,
  parseExclude,
  parseExcludeLine,
} from "./excludes.ts";

/** The ignore file's name at the mount root. */
export const IGNORE_FILE = ".txtfsignore";

/** The ignore file as the mount holds it now: `version` changes whenever its bytes may have. */
export interface IgnoreFileState {
  version: string;
  read(): Buffer;
}

export interface MountExcludesParts {
  /** `--exclude` patterns, already checked (parseExclude). */
  patterns: readonly string[];
  /** The ignore file at the mount root, if there is one. */
  ignoreFile: () => IgnoreFileState | undefined;
  log: Logger;
}

export class MountExcludes {
  private readonly defaults = DEFAULT_EXCLUDES.map(parseExclude);
  private readonly given: ExcludeRule[];
  private readonly ignoreFile: MountExcludesParts["ignoreFile"];
  private readonly log: Logger;
  private fileVersion: string | undefined;
  private fromFile: ExcludeRule[] = [];
  private rules: ExcludeRule[];
  /** The ignore file's lines that are not patterns, as `txtfs status` names them. */
  problems: string[] = [];

  constructor(parts: MountExcludesParts) {
    this.given = parts.patterns.map(parseExclude);
    this.ignoreFile = parts.ignoreFile;
    this.log = parts.log;
    this.rules = [...this.defaults, ...this.given];
  }

  /** The rule keeping `path` (a mount path, `/a/b.md`) on this machine, if any. */
  match(path: string, isDir: boolean): ExcludeRule | undefined {
    this.refresh();
    return excludedBy(this.rules, path.replace(/^\/+/, ""), isDir);
  }

  private refresh(): void {
    const file = this.ignoreFile();
    if (file?.version === this.fileVersion) return;
    this.fileVersion = file?.version;
    this.fromFile = [];
    this.problems = [];
    if (file) {
      let text = "";
      try {
        text = file.read().toString("utf8");
      } catch (err) {
        this.problems.push(`${IGNORE_FILE}: cannot be read (${(err as Error).message})`);
      }
      text.split("\n").forEach((line, i) => {
        try {
          const rule = parseExcludeLine(line);
          if (rule) this.fromFile.push(rule);
        } catch (err) {
          if (!(err instanceof ExcludePatternError)) throw err;
          this.problems.push(`${IGNORE_FILE} line ${i + 1}: ${err.message} (the line is skipped)`);
        }
      });
      if (this.problems.length) this.log.warn({ problems: this.problems }, "exclude patterns skipped");
    }
    this.rules = [...this.defaults, ...this.fromFile, ...this.given];
  }
}
