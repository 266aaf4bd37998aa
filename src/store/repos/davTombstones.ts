import type { Sql } from "../store.ts";

/** A note deleted over `/dav/` a moment ago, by one key at one place (src/dav/serviceTombstones.ts). */
export interface DavTombstoneRow {
  /** The account that deleted it: its tombstones are bounded together. */
  user_id: string;
  /** The key (or token subject) that deleted it: only that one's PUT continues the note. */
  principal: string;
  owner_id: string;
  /** The folder's id, or '' at the top. */
  folder_key: string;
  name: string;
  /** The note as it was (a FileSnapshot), JSON. */
  snapshot: string;
  bytes: number;
  /** ISO time: a PUT after then makes a new note. */
  expires_at: string;
}

export type TombstonePlace = Pick<DavTombstoneRow, "principal" | "owner_id" | "folder_key" | "name">;

const AT = "principal = ? AND owner_id = ? AND folder_key = ? AND name = ?";
const at = (p: TombstonePlace) => [p.principal, p.owner_id, p.folder_key, p.name];

export class DavTombstoneRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  /** Keeps a tombstone, replacing the one at its place. */
  async put(row: DavTombstoneRow): Promise<void> {
    await this.sql.run(`DELETE FROM dav_tombstones WHERE ${AT}`, at(row));
    await this.sql.run(
      `INSERT INTO dav_tombstones (user_id, principal, owner_id, folder_key, name, snapshot, bytes, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.user_id,
        row.principal,
        row.owner_id,
        row.folder_key,
        row.name,
        row.snapshot,
        row.bytes,
        row.expires_at,
      ],
    );
  }

  /**
   * The tombstone at this place still live at `now`, deleted as it is read: of two units of work
   * taking it at once, the second deletes nothing (it waits on the first's row) and gets undefined.
   */
  async take(place: TombstonePlace, now: string): Promise<DavTombstoneRow | undefined> {
    const row = await this.sql.get<DavTombstoneRow>(
      `SELECT * FROM dav_tombstones WHERE ${AT} AND expires_at > ?`,
      [...at(place), now],
    );
    const { changes } = await this.sql.run(`DELETE FROM dav_tombstones WHERE ${AT}`, at(place));
    if (!row || changes === 0) return undefined;
    return { ...row, bytes: Number(row.bytes) };
  }

  /** An account's tombstones, newest first, without their snapshots (to bound them). */
  async sizes(userId: string): Promise<(TombstonePlace & { bytes: number })[]> {
    const rows = await this.sql.all<TombstonePlace & { bytes: number }>(
      `SELECT principal, owner_id, folder_key, name, bytes FROM dav_tombstones
       WHERE user_id = ? ORDER BY expires_at DESC`,
      [userId],
    );
    return rows.map((r) => ({ ...r, bytes: Number(r.bytes) }));
  }

  async delete(place: TombstonePlace): Promise<void> {
    await this.sql.run(`DELETE FROM dav_tombstones WHERE ${AT}`, at(place));
  }

  /** Drops every account's tombstones expired at `now`; returns how many. */
  async deleteExpired(now: string): Promise<number> {
    return (await this.sql.run("DELETE FROM dav_tombstones WHERE expires_at <= ?", [now])).changes;
  }
}
