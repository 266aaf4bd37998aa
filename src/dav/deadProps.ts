// Dead properties (RFC 4918: set by clients, kept verbatim): per path, property name (Clark) ->
// the element's XML. They follow their resource through MOVE and COPY and go with its DELETE.
// `txtfs dav` keeps them in a file of its cache dir (DeadProps); `/dav/` in the store.

import { readJson, writeJson } from "./jsonState.ts";
import { isWithin } from "./paths.ts";

/** Where a site's dead properties are kept. */
export interface DeadPropKeeper {
  /** The properties of each of these paths (a path without any is left out). */
  of(paths: readonly string[]): Promise<Map<string, Record<string, string>>>;
  /** Applies sets (XML) and removals (undefined) together. */
  change(path: string, changes: Map<string, string | undefined>): Promise<void>;
  /**
   * What was at `from` (and below it, when `deep`) is now at `to`: MOVE, or COPY with `copy` (the
   * originals stay). A COPY of depth 0 takes the collection's own properties only. What was at
   * `to` goes.
   */
  carry(from: string, to: string, copy: boolean, deep?: boolean): Promise<void>;
  /** The resource and everything below it is gone. */
  forget(path: string): Promise<void>;
}

type Doc = Record<string, Record<string, string>>;

export class DeadProps implements DeadPropKeeper {
  private readonly doc: Doc;
  /** Where they are kept; undefined: in memory only. */
  private readonly file: string | undefined;

  constructor(file: string | undefined) {
    this.file = file;
    this.doc = readJson<Doc>(file, {});
  }

  async of(paths: readonly string[]): Promise<Map<string, Record<string, string>>> {
    return new Map(paths.filter((p) => this.doc[p]).map((p) => [p, this.doc[p]!]));
  }

  async change(path: string, changes: Map<string, string | undefined>): Promise<void> {
    const props = { ...this.doc[path] };
    for (const [name, xml] of changes) {
      if (xml === undefined) delete props[name];
      else props[name] = xml;
    }
    if (Object.keys(props).length) this.doc[path] = props;
    else delete this.doc[path];
    this.save();
  }

  async carry(from: string, to: string, copy: boolean, deep = true): Promise<void> {
    this.drop(to);
    for (const path of Object.keys(this.doc)) {
      if (!(deep ? isWithin(path, from) : path === from)) continue;
      const moved = to + path.slice(from.length);
      this.doc[moved] = { ...this.doc[path] };
      if (!copy) delete this.doc[path];
    }
    this.save();
  }

  async forget(path: string): Promise<void> {
    this.drop(path);
    this.save();
  }

  private drop(path: string): void {
    for (const p of Object.keys(this.doc)) if (isWithin(p, path)) delete this.doc[p];
  }

  private save(): void {
    writeJson(this.file, this.doc);
  }
}
