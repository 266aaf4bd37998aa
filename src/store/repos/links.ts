// Links between notes (note_links), the names and aliases notes are found by (note_names) and the
// tags set through the API apart from the ones a note's text declares (note_set_tags). Every read
// goes through an index by key, source or target, so a save costs its own links, not the store.
import type { Sql } from "../store.ts";

export interface LinkRow {
  source_id: string;
  ord: number;
  owner_id: string;
  embed: number;
  path: string;
  name_key: string;
  alias_key: string;
  target_id: string | null;
  /** The attachment it names (a file that is not a note), when target_id is null. */
  attachment_id: string | null;
  text: string;
}

export interface NameRow {
  file_id: string;
  name_key: string;
  alias: number;
}

function placeholders(n: number): string {
  return Array.from({ length: n }, () => "?").join(", ");
}

const normal = (r: LinkRow): LinkRow => ({ ...r, ord: Number(r.ord), embed: Number(r.embed) });

export class LinkRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  /** The note's links become exactly `links` (its previous ones are dropped; `fresh`: it has none). */
  async replaceFrom(sourceId: string, links: readonly LinkRow[], fresh = false): Promise<void> {
    if (!fresh) await this.sql.run("DELETE FROM note_links WHERE source_id = ?", [sourceId]);
    for (const l of links)
      await this.sql.run(
        `INSERT INTO note_links (source_id, ord, owner_id, embed, path, name_key, alias_key, target_id, attachment_id, text)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          l.source_id,
          l.ord,
          l.owner_id,
          l.embed,
          l.path,
          l.name_key,
          l.alias_key,
          l.target_id,
          l.attachment_id,
          l.text,
        ],
      );
  }

  setTarget(sourceId: string, ord: number, target: { targetId: string | null; attachmentId: string | null }) {
    return this.sql.run(
      "UPDATE note_links SET target_id = ?, attachment_id = ? WHERE source_id = ? AND ord = ?",
      [target.targetId, target.attachmentId, sourceId, ord],
    );
  }

  /** The note's links in the order written (the first `limit`, when given). */
  async from(sourceId: string, limit?: number): Promise<LinkRow[]> {
    const cap = limit === undefined ? "" : ` LIMIT ${Math.floor(limit)}`;
    return (
      await this.sql.all<LinkRow>(`SELECT * FROM note_links WHERE source_id = ? ORDER BY ord${cap}`, [
        sourceId,
      ])
    ).map(normal);
  }

  /** Links resolved to the note, by source (the first `limit`, when given). */
  async to(targetId: string, limit?: number): Promise<LinkRow[]> {
    const cap = limit === undefined ? "" : ` LIMIT ${Math.floor(limit)}`;
    return (
      await this.sql.all<LinkRow>(
        `SELECT * FROM note_links WHERE target_id = ? ORDER BY source_id, ord${cap}`,
        [targetId],
      )
    ).map(normal);
  }

  /** Links of the account that a note with these name or alias keys might be the target of. */
  async byKeys(ownerId: string, names: readonly string[], aliases: readonly string[]): Promise<LinkRow[]> {
    const out = new Map<string, LinkRow>();
    const add = (rows: LinkRow[]) => {
      for (const r of rows) out.set(`${r.source_id}\u0000${r.ord}`, normal(r));
    };
    if (names.length)
      add(
        await this.sql.all<LinkRow>(
          `SELECT * FROM note_links WHERE owner_id = ? AND name_key IN (${placeholders(names.length)})`,
          [ownerId, ...names],
        ),
      );
    if (aliases.length)
      add(
        await this.sql.all<LinkRow>(
          `SELECT * FROM note_links WHERE owner_id = ? AND alias_key IN (${placeholders(aliases.length)})`,
          [ownerId, ...aliases],
        ),
      );
    return [...out.values()];
  }

  /** The account's unresolved links, by source note then position, after the given one. */
  async unresolved(ownerId: string, after: { sourceId: string; ord: number } | null, limit: number) {
    const rows = after
      ? await this.sql.all<LinkRow>(
          `SELECT * FROM note_links WHERE owner_id = ? AND target_id IS NULL AND attachment_id IS NULL
             AND (source_id > ? OR (source_id = ? AND ord > ?)) ORDER BY source_id, ord LIMIT ${limit}`,
          [ownerId, after.sourceId, after.sourceId, after.ord],
        )
      : await this.sql.all<LinkRow>(
          `SELECT * FROM note_links WHERE owner_id = ? AND target_id IS NULL AND attachment_id IS NULL ORDER BY source_id, ord LIMIT ${limit}`,
          [ownerId],
        );
    return rows.map(normal);
  }

  /** The note's name and aliases become exactly these keys (`fresh`: it has none yet). */
  async replaceNames(
    fileId: string,
    ownerId: string,
    names: readonly { key: string; alias: boolean }[],
    fresh = false,
  ) {
    if (!fresh) await this.sql.run("DELETE FROM note_names WHERE file_id = ?", [fileId]);
    const seen = new Set<string>();
    for (const n of names) {
      const k = `${n.alias ? 1 : 0}:${n.key}`;
      if (seen.has(k)) continue;
      seen.add(k);
      await this.sql.run("INSERT INTO note_names (owner_id, name_key, file_id, alias) VALUES (?, ?, ?, ?)", [
        ownerId,
        n.key,
        fileId,
        n.alias ? 1 : 0,
      ]);
    }
  }

  async namesOf(fileId: string): Promise<NameRow[]> {
    return (
      await this.sql.all<NameRow>("SELECT file_id, name_key, alias FROM note_names WHERE file_id = ?", [
        fileId,
      ])
    ).map((r) => ({ ...r, alias: Number(r.alias) }));
  }

  /** Notes of the account named `name` or aliased `alias`, at most `limit` of each. */
  async named(ownerId: string, name: string, alias: string, limit: number): Promise<string[]> {
    const rows = await this.sql.all<{ file_id: string }>(
      `SELECT file_id FROM (SELECT file_id FROM note_names WHERE owner_id = ? AND name_key = ? AND alias = 0 ORDER BY file_id LIMIT ${limit}) AS a
       UNION SELECT file_id FROM (SELECT file_id FROM note_names WHERE owner_id = ? AND name_key = ? AND alias = 1 ORDER BY file_id LIMIT ${limit}) AS b`,
      [ownerId, name, ownerId, alias],
    );
    return rows.map((r) => r.file_id);
  }

  /**
   * The tags set through the API, or undefined when the note has no row: then they are its `tags`
   * (it declares none, or it was saved before tags were read from text).
   */
  async setTags(fileId: string): Promise<string[] | undefined> {
    const row = await this.sql.get<{ tags: string }>("SELECT tags FROM note_set_tags WHERE file_id = ?", [
      fileId,
    ]);
    return row ? (JSON.parse(row.tags) as string[]) : undefined;
  }

  /** Stores the set tags; when not `needed` (they are all the note shows) the row goes instead. */
  async putSetTags(fileId: string, tags: readonly string[], needed = true) {
    if (!needed) {
      await this.sql.run("DELETE FROM note_set_tags WHERE file_id = ?", [fileId]);
      return;
    }
    await this.sql.run(
      "INSERT INTO note_set_tags (file_id, tags) VALUES (?, ?) ON CONFLICT (file_id) DO UPDATE SET tags = excluded.tags",
      [fileId, JSON.stringify(tags)],
    );
  }

  /**
   * Of the next `window` notes in id order after `afterId`, those never indexed (saved before links
   * were read: a note indexed has its name row), and the last id looked at (undefined: none left).
   * A window at a time, by key range: a store whose notes are all indexed is walked in short
   * transactions, not in one query holding the connection for the whole store at every start.
   */
  async unindexed(afterId: string, window: number): Promise<{ ids: string[]; last: string | undefined }> {
    const rows = await this.sql.all<{ id: string; indexed: number | boolean }>(
      `SELECT w.id AS id, EXISTS (SELECT 1 FROM note_names WHERE note_names.file_id = w.id) AS indexed
       FROM (SELECT id FROM files WHERE id > ? ORDER BY id LIMIT ${Math.floor(window)}) AS w ORDER BY w.id`,
      [afterId],
    );
    return { ids: rows.filter((r) => !Number(r.indexed)).map((r) => r.id), last: rows.at(-1)?.id };
  }

  /** Drops the note's own rows (links from it, names, set tags); links to it stay, to re-resolve. */
  async deleteNote(fileId: string) {
    await this.sql.run("DELETE FROM note_links WHERE source_id = ?", [fileId]);
    await this.sql.run("DELETE FROM note_names WHERE file_id = ?", [fileId]);
    await this.sql.run("DELETE FROM note_set_tags WHERE file_id = ?", [fileId]);
  }
}
