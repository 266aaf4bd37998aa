// What this mount may change, known before any byte is accepted: `--read-only`, the key's scopes
// (the listing says them) and each item's role. A write-behind save the service would refuse later
// must be refused at the system call instead: the program that saw it succeed would lose it.
import { fail } from "./errors.ts";
import type { Node } from "./tree.ts";

export class Access {
  private readonly readOnlyOption: boolean;
  /** The key's scopes; undefined until told (or from a service that does not say): all assumed. */
  private scopes: ReadonlySet<string> | undefined;

  constructor(readOnlyOption: boolean) {
    this.readOnlyOption = readOnlyOption;
  }

  /** The scopes the listing reported for the mount's key (absent: a service that does not say). */
  learn(scopes: readonly string[] | undefined): void {
    this.scopes = scopes ? new Set(scopes) : undefined;
  }

  private lacks(scope: string): boolean {
    return this.scopes !== undefined && !this.scopes.has(scope);
  }

  /** Nothing may change through the mount: every change answers EROFS. */
  get readOnly(): boolean {
    return this.readOnlyOption || this.lacks("files:write");
  }

  /** Why the mount is read-only, as the mount announces it; undefined when it is not. */
  get readOnlyBecause(): string | undefined {
    if (this.readOnlyOption) return "as asked (--read-only)";
    if (this.lacks("files:write")) return "the key has no files:write";
    return undefined;
  }

  /** Whether `node` (a note, or a folder to make or change something in) may change. */
  checkWritable(node: Node): void {
    if (this.readOnly) throw fail("EROFS");
    if ((node.kind === "file" || node.kind === "dir") && node.meta?.role === "reader") throw fail("EACCES");
    if (node.kind === "local" && node.attachment?.role === "reader") throw fail("EACCES");
  }

  /** Whether a folder may be made, renamed or removed on the service (folders:write). */
  checkFolders(): void {
    if (this.readOnly) throw fail("EROFS");
    if (this.lacks("folders:write")) throw fail("EACCES", "the key has no folders:write");
  }
}
