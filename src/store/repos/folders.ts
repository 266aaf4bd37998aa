import type { Sql } from "../store.ts";
import type { FolderRow } from "./rows.ts";

export class FolderRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  insert(row: FolderRow) {
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
    return this.sql.run(
      `UPDATE folders SET parent_id = ?, name = ?, context = ?, tags = ?, revision = ?, updated_at = ?
       WHERE id = ?`,
      [row.parent_id, row.name, row.context, row.tags, row.revision, row.updated_at, row.id],
    );
  }

  byId(id: string): Promise<FolderRow | undefined> {
    return this.sql.get("SELECT * FROM folders WHERE id = ?", [id]);
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
  ancestry(id: string): Promise<FolderRow[]> {
    return this.sql.all(
      `WITH RECURSIVE up(id, depth) AS (
         SELECT id, 0 FROM folders WHERE id = ?
         UNION ALL
         SELECT f.parent_id, up.depth + 1 FROM folders f JOIN up ON f.id = up.id WHERE f.parent_id IS NOT NULL
       )
       SELECT folders.* FROM up JOIN folders ON folders.id = up.id ORDER BY up.depth`,
      [id],
    );
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

  /** Direct file counts per folder for the given folders. */
  async fileCounts(folderIds: readonly string[]): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    if (folderIds.length === 0) return counts;
    const rows = await this.sql.all<{ folder_id: string; n: number }>(
      `SELECT folder_id, COUNT(*) AS n FROM files WHERE folder_id IN (${folderIds.map(() => "?").join(",")})
       GROUP BY folder_id`,
      folderIds,
    );
    for (const r of rows) counts.set(r.folder_id, Number(r.n));
    return counts;
  }

  async fileCountsOwned(ownerId: string): Promise<Map<string, number>> {
    const rows = await this.sql.all<{ folder_id: string; n: number }>(
      "SELECT folder_id, COUNT(*) AS n FROM files WHERE owner_id = ? AND folder_id IS NOT NULL GROUP BY folder_id",
      [ownerId],
    );
    return new Map(rows.map((r) => [r.folder_id, Number(r.n)]));
  }

  setAiExcluded(id: string, excluded: boolean) {
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
    return this.sql.run("DELETE FROM folders WHERE id = ?", [id]);
  }
}
