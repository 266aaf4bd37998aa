// Dead properties (RFC 4918: set by clients, kept verbatim): per path, property name (Clark) ->
// the element's XML. They follow their resource through MOVE and COPY and go with its DELETE.

import { readJson, writeJson } from "./jsonState.ts";
import { isWithin } from "./paths.ts";

type Doc = Record<string, Record<string, string>>;

export class DeadProps {
  private readonly doc: Doc;
  /** Where they are kept; undefined: in memory only. */
  private readonly file: string | undefined;

  constructor(file: string | undefined) {
    this.file = file;
    this.doc = readJson<Doc>(file, {});
  }

  of(path: string): Record<string, string> {
    return this.doc[path] ?? {};
  }

  /** Applies sets (XML) and removals (undefined) together. */
  change(path: string, changes: Map<string, string | undefined>): void {
    const props = { ...this.of(path) };
    for (const [name, xml] of changes) {
      if (xml === undefined) delete props[name];
      else props[name] = xml;
    }
    if (Object.keys(props).length) this.doc[path] = props;
    else delete this.doc[path];
    this.save();
  }

  /**
   * What was at `from` (and below it, when `deep`) is now at `to`: MOVE, or COPY with `copy` (the
   * originals stay). A COPY of depth 0 takes the collection's own properties only.
   */
  carry(from: string, to: string, copy: boolean, deep = true): void {
    this.forget(to, false);
    for (const path of Object.keys(this.doc)) {
      if (!(deep ? isWithin(path, from) : path === from)) continue;
      const moved = to + path.slice(from.length);
      this.doc[moved] = { ...this.doc[path] };
      if (!copy) delete this.doc[path];
    }
    this.save();
  }

  /** The resource and everything below it is gone. */
  forget(path: string, save = true): void {
    for (const p of Object.keys(this.doc)) if (isWithin(p, path)) delete this.doc[p];
    if (save) this.save();
  }

  private save(): void {
    writeJson(this.file, this.doc);
  }
}
