import type { Sql } from "../store.ts";
import type { UserRow } from "./rows.ts";

export class UserRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  insert(row: Pick<UserRow, "id" | "email" | "name" | "created_at">): Promise<unknown> {
    return this.sql.run("INSERT INTO users (id, email, name, created_at) VALUES (?, ?, ?, ?)", [
      row.id,
      row.email,
      row.name,
      row.created_at,
    ]);
  }

  byId(id: string): Promise<UserRow | undefined> {
    return this.sql.get("SELECT * FROM users WHERE id = ?", [id]);
  }

  byEmail(email: string): Promise<UserRow | undefined> {
    return this.sql.get("SELECT * FROM users WHERE email = ?", [email.toLowerCase()]);
  }

  list(): Promise<UserRow[]> {
    return this.sql.all("SELECT * FROM users ORDER BY created_at, id");
  }

  /**
   * Allocates the account's next change-feed position inside the writing transaction. The row
   * update serialises writers per account, so commit order equals seq order (never a bare sequence).
   */
  async nextSeq(id: string): Promise<number> {
    const row = await this.sql.get<{ feed_seq: number }>(
      "UPDATE users SET feed_seq = feed_seq + 1 WHERE id = ? RETURNING feed_seq",
      [id],
    );
    if (!row) throw new Error(`no account ${id}`);
    return Number(row.feed_seq);
  }

  setPlan(id: string, plan: string) {
    return this.sql.run("UPDATE users SET plan = ? WHERE id = ?", [plan, id]);
  }

  setFeedFloor(id: string, floor: number): Promise<unknown> {
    return this.sql.run("UPDATE users SET feed_floor = ? WHERE id = ? AND feed_floor < ?", [
      floor,
      id,
      floor,
    ]);
  }
}
