import type { Sql } from "../store.ts";

export type Availability = "online-only" | "available" | "pinned";

export interface DeviceRow {
  id: string;
  owner_id: string;
  name: string;
  platform: string;
  client_name: string | null;
  client_version: string | null;
  cursor: number;
  created_at: string;
  last_seen_at: string | null;
}

export interface DeviceStateRow {
  device_id: string;
  item_kind: "file" | "folder" | "attachment";
  item_id: string;
  state: Availability;
  updated_at: string;
}

/** Registered devices and the availability each one wants for files and folders. */
export class DeviceRepo {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  insert(row: DeviceRow) {
    return this.sql.run(
      `INSERT INTO devices (id, owner_id, name, platform, client_name, client_version, cursor, created_at, last_seen_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.id,
        row.owner_id,
        row.name,
        row.platform,
        row.client_name,
        row.client_version,
        row.cursor,
        row.created_at,
        row.last_seen_at,
      ],
    );
  }

  byId(id: string): Promise<DeviceRow | undefined> {
    return this.sql.get("SELECT * FROM devices WHERE id = ?", [id]);
  }

  listFor(ownerId: string): Promise<DeviceRow[]> {
    return this.sql.all("SELECT * FROM devices WHERE owner_id = ? ORDER BY id", [ownerId]);
  }

  /** Records that the device was seen and, when given, the feed position it has applied. */
  touch(id: string, at: string, cursor?: number) {
    return cursor === undefined
      ? this.sql.run("UPDATE devices SET last_seen_at = ? WHERE id = ?", [at, id])
      : this.sql.run("UPDATE devices SET last_seen_at = ?, cursor = ? WHERE id = ?", [at, cursor, id]);
  }

  async delete(id: string) {
    await this.sql.run("DELETE FROM device_states WHERE device_id = ?", [id]);
    return this.sql.run("DELETE FROM devices WHERE id = ?", [id]);
  }

  setState(row: DeviceStateRow) {
    return this.sql.run(
      `INSERT INTO device_states (device_id, item_kind, item_id, state, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (device_id, item_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
      [row.device_id, row.item_kind, row.item_id, row.state, row.updated_at],
    );
  }

  states(deviceId: string): Promise<DeviceStateRow[]> {
    return this.sql.all("SELECT * FROM device_states WHERE device_id = ? ORDER BY item_kind, item_id", [
      deviceId,
    ]);
  }
}
