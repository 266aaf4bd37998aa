import type { Sql } from "../store.ts";
import type { FolderRow } from "./rows.ts";

/**
 * A repo lives for one unit of work (tx.ts), and remembers the folders it read by id and their
 * ancestries until a folder is written: a sync of 200 new notes into one folder looked that folder
 * up 400 times (its access, then who the change feed tells). Callers get copies, so one that
 * changes a row it was given changes nothing here.
 */
export class FolderRepo {
  private readonly sql: Sql;
  private readonly rows = new Map<string, FolderRow | undefined>();
  private readonly ancestries = new Map<string, FolderRow[]>();

  constructor(sql: Sql) {
    this.sql = sql;
  }

  /** Forgets what was read: after every write to folders, and when a savepoint rolls back. */
  forget(): void {
    this.rows.clear();
    this.ancestries.clear();
  }

  insert(row: FolderRow) {
    this.forget();
    return this.sql.run(
      `INSERT INTO folders (id, owner_id, parent_id, name, context, tags, revision, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.id,
        row.owner_id,
        row.parent_id,
        row.name,
        row.context,
        row.tags,
        row.revision,
        row.created_at,
        row.updated_at,
      ],
    );
  }

  update(row: FolderRow) {
    this.forget();
    return this.sql.run(
      `UPDATE folders SET parent_id = ?, name = ?, context = ?, tags = ?, revision = ?, updated_at = ?
       WHERE id = ?`,
      [row.parent_id, row.name, row.context, row.tags, row.revision, row.updated_at, row.id],
    );
  }

  async byId(id: string): Promise<FolderRow | undefined> {
    let row = this.rows.get(id);
    if (row === undefined && !this.rows.has(id)) {
      row = await this.sql.get<FolderRow>("SELECT * FROM folders WHERE id = ?", [id]);
      this.rows.set(id, row);
    }
    return row && { ...row };
  }

  byIds(ids: readonly string[]): Promise<FolderRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.sql.all(`SELECT * FROM folders WHERE id IN (${ids.map(() => "?").join(",")})`, ids);
  }

  listOwned(ownerId: string): Promise<FolderRow[]> {
    return this.sql.all("SELECT * FROM folders WHERE owner_id = ? ORDER BY id", [ownerId]);
  }

  children(parentId: string): Promise<FolderRow[]> {
    return this.sql.all("SELECT * FROM folders WHERE parent_id = ? ORDER BY id", [parentId]);
  }

  rootFoldersOf(ownerId: string): Promise<FolderRow[]> {
    return this.sql.all("SELECT * FROM folders WHERE owner_id = ? AND parent_id IS NULL ORDER BY id", [
      ownerId,
    ]);
  }

  /** The folder and every folder above it, nearest first. */
  async ancestry(id: string): Promise<FolderRow[]> {
    let rows = this.ancestries.get(id);
    if (!rows) {
      rows = await this.readAncestry(id);
      this.ancestries.set(id, rows);
    }
    return rows.map((r) => ({ ...r }));
  }

  private async readAncestry(id: string): Promise<FolderRow[]> {
    // The rows themselves go up the chain, each parent found by its key: joining the chain's ids
    // back to folders let PostgreSQL (which cannot tell how long the chain is) hash all of them.
    const rows = await this.sql.all<FolderRow & { up_depth: number }>(
      `WITH RECURSIVE up AS (
         SELECT folders.*, 0 AS up_depth FROM folders WHERE id = ?
         UNION ALL
         SELECT folders.*, up.up_depth + 1 FROM up JOIN folders ON folders.id = up.parent_id
       )
       SELECT * FROM up ORDER BY up_depth`,
      [id],
    );
    return rows.map(({ up_depth: _depth, ...row }) => row);
  }

  /** Ids of the folder and all folders below it. */
  async subtreeIds(ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await this.sql.all<{ id: string }>(
      `WITH RECURSIVE down(id) AS (
         SELECT id FROM folders WHERE id IN (${ids.map(() => "?").join(",")})
         UNION
         SELECT f.id FROM folders f JOIN down ON f.parent_id = down.id
       )
       SELECT id FROM down`,
      ids,
    );
    return rows.map((r) => r.id);
  }

  /** Direct file counts per folder for the given folders (kept by the database: migration 13). */
  async fileCounts(folderIds: readonly string[]): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    if (folderIds.length === 0) return counts;
    const rows = await this.sql.all<{ folder_id: string; n: number }>(
      `SELECT folder_id, files AS n FROM folder_counts WHERE folder_id IN (${folderIds.map(() => "?").join(",")})`,
      folderIds,
    );
    for (const r of rows) counts.set(r.folder_id, Number(r.n));
    return counts;
  }

  /** Direct file counts of every folder `ownerId` owns: one row per folder, whatever it holds. */
  async fileCountsOwned(ownerId: string): Promise<Map<string, number>> {
    // Each folder's count looked up by its key: a join let PostgreSQL hash the whole counts table
    // (every account's folders) once an account had a few dozen folders.
    const rows = await this.sql.all<{ folder_id: string; n: number | null }>(
      `SELECT f.id AS folder_id, (SELECT c.files FROM folder_counts c WHERE c.folder_id = f.id) AS n
       FROM folders f WHERE f.owner_id = ?`,
      [ownerId],
    );
    return new Map(rows.filter((r) => r.n !== null).map((r) => [r.folder_id, Number(r.n)]));
  }

  setAiExcluded(id: string, excluded: boolean) {
    this.forget();
    return this.sql.run("UPDATE folders SET ai_excluded = ? WHERE id = ?", [excluded ? 1 : 0, id]);
  }

  /** Every folder of these owners kept away from the AI (the setting, not yet its subtree). */
  aiExcludedOf(ownerIds: readonly string[]): Promise<{ id: string }[]> {
    if (ownerIds.length === 0) return Promise.resolve([]);
    return this.sql.all(
      `SELECT id FROM folders WHERE ai_excluded = 1 AND owner_id IN (${ownerIds.map(() => "?").join(",")})`,
      ownerIds,
    );
  }

  delete(id: string) {
    this.forget();
    return this.sql.run("DELETE FROM folders WHERE id = ?", [id]);
  }
}
