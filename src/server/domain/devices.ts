// Devices: a client registers once and records, per file or folder, the availability it wants on
// that device (OneDrive Files On-Demand): `online-only` (metadata only, content fetched on use),
// `available` (kept once read; may be evicted) or `pinned` (kept complete, never evicted). A
// folder's state applies to everything below it unless a file or subfolder sets its own.
import { newId } from "../../lib/ids.ts";
import { nowIso } from "../../lib/time.ts";
import type { Availability, DeviceRow, DeviceStateRow } from "../../store/repos/devices.ts";
import type { Tx } from "../../store/store.ts";
import { requireFile, requireFolder } from "./access.ts";
import type { Actor } from "./actor.ts";
import { requireAttachment } from "./attachments/access.ts";
import { invalid, ServiceError } from "./errors.ts";
import { checkMaxChars } from "./limits.ts";
import { flatIndex } from "./listing.ts";

export const PLATFORMS = ["macos", "windows", "linux", "ios", "android", "cli", "other"] as const;
export const AVAILABILITIES = ["online-only", "available", "pinned"] as const;
export const DEFAULT_AVAILABILITY: Availability = "online-only";

export interface DeviceInput {
  name: string;
  platform: (typeof PLATFORMS)[number];
  clientName?: string;
  clientVersion?: string;
}

export function toDevice(row: DeviceRow) {
  return {
    id: row.id,
    name: row.name,
    platform: row.platform,
    clientName: row.client_name,
    clientVersion: row.client_version,
    cursor: Number(row.cursor),
    createdAt: row.created_at,
    lastSeenAt: row.last_seen_at,
  };
}

export async function registerDevice(tx: Tx, actor: Actor, input: DeviceInput) {
  const name = input.name.trim();
  if (!name) throw invalid("name", "must not be empty");
  checkMaxChars("name", name, 100);
  const row: DeviceRow = {
    id: newId("dv"),
    owner_id: actor.userId,
    name,
    platform: input.platform,
    client_name: input.clientName ? checkMaxChars("clientName", input.clientName, 100) : null,
    client_version: input.clientVersion ? checkMaxChars("clientVersion", input.clientVersion, 64) : null,
    cursor: 0,
    created_at: nowIso(),
    last_seen_at: nowIso(),
  };
  await tx.devices.insert(row);
  return { device: toDevice(row) };
}

/** A device is visible only to the account that registered it (404 otherwise: no existence leak). */
export async function requireDevice(tx: Tx, actor: Actor, id: string): Promise<DeviceRow> {
  const row = await tx.devices.byId(id);
  if (!row || row.owner_id !== actor.userId) {
    throw new ServiceError(
      404,
      "not_found",
      `No device with id ${id} is registered to your account.`,
      "List your devices with GET /api/v1/devices, or register one with POST /api/v1/devices.",
    );
  }
  return row;
}

export async function listDevices(tx: Tx, actor: Actor) {
  return { devices: (await tx.devices.listFor(actor.userId)).map(toDevice) };
}

export async function removeDevice(tx: Tx, actor: Actor, id: string) {
  await requireDevice(tx, actor, id);
  await tx.devices.delete(id);
  return { id, deleted: true as const };
}

export interface StateItem {
  fileId?: string;
  folderId?: string;
  /** Additive: an attachment's own state (else its folder's applies, as for a note). */
  attachmentId?: string;
  state: Availability;
}

const KEY_OF_KIND = { file: "fileId", folder: "folderId", attachment: "attachmentId" } as const;
type ItemKind = keyof typeof KEY_OF_KIND;

const itemOf = (r: DeviceStateRow) => ({
  [KEY_OF_KIND[r.item_kind]]: r.item_id,
  state: r.state,
  updatedAt: r.updated_at,
});

/** Sets availabilities; every item is checked (visible, one id) before anything is written. */
export async function setDeviceState(tx: Tx, actor: Actor, deviceId: string, items: StateItem[]) {
  await requireDevice(tx, actor, deviceId);
  const rows: DeviceStateRow[] = [];
  const at = nowIso();
  for (const [i, item] of items.entries()) {
    const kinds = (Object.keys(KEY_OF_KIND) as ItemKind[]).filter((k) => item[KEY_OF_KIND[k]] !== undefined);
    if (kinds.length !== 1)
      throw invalid(`items[${i}]`, "needs exactly one of fileId, folderId and attachmentId");
    const kind = kinds[0]!;
    const id = item[KEY_OF_KIND[kind]] as string;
    if (kind === "file") await requireFile(tx, actor, id, "reader");
    else if (kind === "folder") await requireFolder(tx, actor, id, "reader");
    else await requireAttachment(tx, actor, id, "reader");
    rows.push({ device_id: deviceId, item_kind: kind, item_id: id, state: item.state, updated_at: at });
  }
  for (const row of rows) await tx.devices.setState(row);
  await tx.devices.touch(deviceId, at);
  return { deviceId, items: rows.map(itemOf) };
}

/**
 * The device's states: the explicit ones (`items`, for items still visible) and, per visible file
 * whose effective state is not the default, that state and where it comes from (the file itself or
 * a folder above it). A file not listed in `files` is `online-only`.
 */
export async function getDeviceState(tx: Tx, actor: Actor, deviceId: string) {
  await requireDevice(tx, actor, deviceId);
  const explicit = await tx.devices.states(deviceId);
  // Nothing set: every file has the default (a mount asks at every start; the whole index of an
  // account of 100,000 notes took 0.6 s to read, and held up the mount's first reads).
  if (explicit.length === 0) return { deviceId, default: DEFAULT_AVAILABILITY, items: [], files: [] };
  const index = await flatIndex(tx, actor);
  const visibleFiles = new Set(index.files.map((f) => f.id));
  const parents = new Map(index.folders.map((f) => [f.id, f.parentFolderId]));
  const own = new Map(explicit.map((r) => [r.item_id, r.state]));
  const visibleAttachments = new Set<string>();
  for (const r of explicit)
    if (r.item_kind === "attachment" && (await requireAttachment(tx, actor, r.item_id).catch(() => null)))
      visibleAttachments.add(r.item_id);
  const visible = (r: DeviceStateRow) =>
    r.item_kind === "file"
      ? visibleFiles.has(r.item_id)
      : r.item_kind === "attachment"
        ? visibleAttachments.has(r.item_id)
        : parents.has(r.item_id);
  const items = explicit.filter(visible).map(itemOf);
  const folderState = (id: string | null): { state: Availability; from: string } | null => {
    for (let f = id, hops = 0; f && hops < 10_000; f = parents.get(f) ?? null, hops++) {
      const s = own.get(f);
      if (s) return { state: s, from: f };
    }
    return null;
  };
  const files = index.files.flatMap((f) => {
    const s = own.get(f.id);
    const inherited = s ? null : folderState(f.folderId);
    const state = s ?? inherited?.state ?? DEFAULT_AVAILABILITY;
    if (state === DEFAULT_AVAILABILITY) return [];
    return [
      {
        fileId: f.id,
        state,
        source: s ? "file" : "folder",
        ...(inherited ? { inheritedFrom: inherited.from } : {}),
      },
    ];
  });
  return { deviceId, default: DEFAULT_AVAILABILITY, items, files };
}

export const tooManyItems = (count: number, max: number) =>
  new ServiceError(
    413,
    "payload_too_large",
    `The request sets ${count} items; the limit is ${max}.`,
    `Send at most ${max} items per request, or set the state of a folder (it applies to its contents).`,
  );
