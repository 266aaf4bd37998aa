import type { Sql } from "../store.ts";

/** A dead property set on `/dav/` (PROPPATCH): its name in Clark notation, its element verbatim. */
export interface DavPropRow {
  path: string;
  name: string;
  xml: string;
}

/** So many paths per IN list: well under either database's bound on parameters. */
const CHUNK = 500;

export class DavPropRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  /** The properties of these paths (a PROPFIND's resources), in one query per 500. */
  async of(userId: string, paths: readonly string[]): Promise<DavPropRow[]> {
    const out: DavPropRow[] = [];
    for (let i = 0; i < paths.length; i += CHUNK) {
      const some = paths.slice(i, i + CHUNK);
      out.push(
        ...(await this.sql.all<DavPropRow>(
          `SELECT path, name, xml FROM dav_props WHERE user_id = ? AND path IN (${some.map(() => "?").join(", ")})`,
          [userId, ...some],
        )),
      );
    }
    return out;
  }

  /**
   * The properties of `path` and everything below it. Below is a byte range, not LIKE (a name may
   * hold % or _): after `path/`, before `path0` ('0' follows '/'); both stores compare bytes.
   */
  within(userId: string, path: string): Promise<DavPropRow[]> {
    if (path === "/")
      return this.sql.all("SELECT path, name, xml FROM dav_props WHERE user_id = ?", [userId]);
    return this.sql.all(
      "SELECT path, name, xml FROM dav_props WHERE user_id = ? AND (path = ? OR (path >= ? AND path < ?))",
      [userId, path, `${path}/`, `${path}0`],
    );
  }

  put(userId: string, row: DavPropRow) {
    return this.sql.run(
      `INSERT INTO dav_props (user_id, path, name, xml) VALUES (?, ?, ?, ?)
       ON CONFLICT (user_id, path, name) DO UPDATE SET xml = excluded.xml`,
      [userId, row.path, row.name, row.xml],
    );
  }

  /** Sets it unless `path` already has a property of that name (which is then the newer). */
  putIfAbsent(userId: string, row: DavPropRow) {
    return this.sql.run(
      "INSERT INTO dav_props (user_id, path, name, xml) VALUES (?, ?, ?, ?) ON CONFLICT (user_id, path, name) DO NOTHING",
      [userId, row.path, row.name, row.xml],
    );
  }

  delete(userId: string, path: string, name: string) {
    return this.sql.run("DELETE FROM dav_props WHERE user_id = ? AND path = ? AND name = ?", [
      userId,
      path,
      name,
    ]);
  }

  /** Removes the properties of `path` and everything below it. */
  deleteWithin(userId: string, path: string) {
    if (path === "/") return this.sql.run("DELETE FROM dav_props WHERE user_id = ?", [userId]);
    return this.sql.run(
      "DELETE FROM dav_props WHERE user_id = ? AND (path = ? OR (path >= ? AND path < ?))",
      [userId, path, `${path}/`, `${path}0`],
    );
  }
}
