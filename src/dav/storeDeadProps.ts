// The dead properties of `/dav/` kept in the store (dav_props, migration 21): every `txtfs serve`
// on one database answers a PROPFIND with what a PROPPATCH on any of them set. Each change is one
// unit of work, so a MOVE's properties are never half at the old path and half at the new.
import type { DavPropRow } from "../store/repos/davProps.ts";
import type { Store } from "../store/store.ts";
import type { DeadPropKeeper } from "./deadProps.ts";
import { isWithin } from "./paths.ts";

export class StoreDeadProps implements DeadPropKeeper {
  private readonly store: Store;
  private readonly userId: string;

  constructor(store: Store, userId: string) {
    this.store = store;
    this.userId = userId;
  }

  async of(paths: readonly string[]): Promise<Map<string, Record<string, string>>> {
    const out = new Map<string, Record<string, string>>();
    if (!paths.length) return out;
    for (const row of await this.store.read((tx) => tx.davProps.of(this.userId, paths))) {
      const props = out.get(row.path) ?? {};
      props[row.name] = row.xml;
      out.set(row.path, props);
    }
    return out;
  }

  change(path: string, changes: Map<string, string | undefined>): Promise<void> {
    return this.store.transaction(async (tx) => {
      for (const [name, xml] of changes) {
        if (xml === undefined) await tx.davProps.delete(this.userId, path, name);
        else await tx.davProps.put(this.userId, { path, name, xml });
      }
    });
  }

  carry(from: string, to: string, copy: boolean, deep = true): Promise<void> {
    return this.store.transaction(async (tx) => {
      const rows = (await tx.davProps.within(this.userId, from)).filter((r: DavPropRow) =>
        deep ? isWithin(r.path, from) : r.path === from,
      );
      await tx.davProps.deleteWithin(this.userId, to);
      if (!copy) await tx.davProps.deleteWithin(this.userId, from);
      for (const r of rows)
        await tx.davProps.put(this.userId, { ...r, path: to + r.path.slice(from.length) });
    });
  }

  async forget(path: string): Promise<void> {
    await this.store.transaction((tx) => tx.davProps.deleteWithin(this.userId, path));
  }
}
