// Once, after an upgrade: the dead properties `/dav/` kept in DATA/dav/<user>/properties.json
// before they lived in the store (dav_props, migration 21) go into the store, so what WebDAV
// clients set is still answered. The file is then renamed `properties.json.imported` (kept, never
// read again); a property the store already has for that path is newer and stays.
import { existsSync, readdirSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../lib/logger.ts";
import type { Store } from "../store/store.ts";

type Doc = Record<string, Record<string, string>>;

/** How many properties were imported (0: none waited). */
export async function importOldDavProps(store: Store, dataDir: string, log: Logger): Promise<number> {
  const root = join(dataDir, "dav");
  if (!existsSync(root)) return 0;
  let imported = 0;
  for (const userId of readdirSync(root)) {
    const file = join(root, userId, "properties.json");
    if (!existsSync(file)) continue;
    let doc: Doc;
    try {
      doc = parseDoc(readFileSync(file, "utf8"));
    } catch (err) {
      log.warn(
        { err, file },
        "old WebDAV properties not imported: the file is not what /dav/ wrote (left as it is)",
      );
      continue;
    }
    const rows = Object.entries(doc).flatMap(([path, props]) =>
      Object.entries(props).map(([name, xml]) => ({ path, name, xml })),
    );
    const known = await store.read((tx) => tx.users.byId(userId));
    if (!known) {
      log.warn({ file }, "old WebDAV properties of an account that is gone: not imported (left as it is)");
      continue;
    }
    await store.transaction(async (tx) => {
      for (const row of rows) await tx.davProps.putIfAbsent(userId, row);
    });
    renameSync(file, `${file}.imported`);
    imported += rows.length;
    log.info(
      { file, properties: rows.length },
      "imported the WebDAV properties kept before the store had them",
    );
  }
  return imported;
}

/** The file's document, checked: path -> property name (Clark) -> XML, all strings. */
function parseDoc(text: string): Doc {
  const doc: unknown = JSON.parse(text);
  if (!isRecord(doc)) throw new Error("not a JSON object");
  for (const [path, props] of Object.entries(doc)) {
    if (!path.startsWith("/") || !isRecord(props)) throw new Error(`bad entry for ${JSON.stringify(path)}`);
    for (const xml of Object.values(props))
      if (typeof xml !== "string") throw new Error(`bad property of ${JSON.stringify(path)}`);
  }
  return doc as Doc;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
