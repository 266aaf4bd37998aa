// Devices and their per-file availability (see domain/devices.ts).
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import {
  AVAILABILITIES,
  getDeviceState,
  listDevices,
  PLATFORMS,
  registerDevice,
  removeDevice,
  requireDevice,
  setDeviceState,
  toDevice,
  tooManyItems,
} from "../domain/devices.ts";
import { LIMITS } from "../domain/limits.ts";
import { actorOf, mutate } from "../http/mutation.ts";
import { op } from "../openapi/describe.ts";
import { Deleted, DeviceEnvelope, DeviceStateItem, TxtDevice } from "../openapi/records.ts";
import type { RouteDeps } from "./deps.ts";
import { IdParams } from "./schemas.ts";

const DeviceBody = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    platform: Type.Union(PLATFORMS.map((p) => Type.Literal(p))),
    clientName: Type.Optional(Type.String()),
    clientVersion: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const State = Type.Union(AVAILABILITIES.map((a) => Type.Literal(a)));
const StateItem = Type.Object(
  {
    fileId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    folderId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    attachmentId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    state: State,
  },
  { additionalProperties: false },
);
// `{items: [...]}`, or one item on its own (`{fileId, state}`).
const StateBody = Type.Union([
  Type.Object({ items: Type.Array(StateItem, { minItems: 1 }) }, { additionalProperties: false }),
  StateItem,
]);

// Devices are client bookkeeping about readable items: files:read is enough (api-decisions §14).
const scope = "files:read" as const;

export function deviceRoutes({ store }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    const d = (id: string, verb: string, summary: string, ok: Record<number, unknown>, write = false) =>
      op({
        id,
        verb,
        area: "sync",
        summary,
        ok,
        ...(write ? { headers: ["Idempotency-Key"] as const } : {}),
      });
    const StateItems = Type.Object({ deviceId: Type.String(), items: Type.Array(DeviceStateItem) });
    app.post(
      "/api/v1/devices",
      {
        config: { scope },
        schema: {
          body: DeviceBody,
          ...d("device", "device", "Register a device (name, platform).", { 201: DeviceEnvelope }, true),
        },
      },
      (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => {
          const body = await registerDevice(tx, actor, req.body);
          return { status: 201, body, headers: { Location: `/api/v1/devices/${body.device.id}` } };
        }),
    );
    const listDoc = d("devices", "devices", "List your devices.", {
      200: Type.Object({ devices: Type.Array(TxtDevice) }),
    });
    app.get("/api/v1/devices", { config: { scope }, schema: listDoc }, async (req) =>
      store.read((tx) => listDevices(tx, actorOf(req))),
    );
    const getDoc = d("deviceGet", "device-get", "One device.", { 200: DeviceEnvelope });
    app.get(
      "/api/v1/devices/:id",
      { config: { scope }, schema: { params: IdParams, ...getDoc } },
      async (req) =>
        store.read(async (tx) => ({
          device: toDevice(await requireDevice(tx, actorOf(req), req.params.id)),
        })),
    );
    const removeDoc = d(
      "deviceRemove",
      "device-remove",
      "Remove a device and its states.",
      { 200: Deleted },
      true,
    );
    app.delete(
      "/api/v1/devices/:id",
      { config: { scope }, schema: { params: IdParams, ...removeDoc } },
      (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => ({
          status: 200,
          body: await removeDevice(tx, actor, req.params.id),
        })),
    );
    app.put(
      "/api/v1/devices/:id/state",
      {
        config: { scope },
        schema: {
          params: IdParams,
          body: StateBody,
          ...d(
            "pin",
            "pin",
            "Set availability (online-only, available, pinned) of files, folders and attachments on this device.",
            { 200: StateItems },
            true,
          ),
        },
      },
      (req, reply) => {
        const items = "items" in req.body ? req.body.items : [req.body];
        if (items.length > LIMITS.deviceStateItems) throw tooManyItems(items.length, LIMITS.deviceStateItems);
        return mutate(store, req, reply, async (tx, actor) => ({
          status: 200,
          body: await setDeviceState(tx, actor, req.params.id, items),
        }));
      },
    );
    const stateDoc = d(
      "deviceState",
      "device-state",
      "The device's states: explicit items and the effective state per file.",
      {
        200: Type.Object({
          deviceId: Type.String(),
          default: Type.String(),
          items: Type.Array(DeviceStateItem),
          files: Type.Array(
            Type.Object({ fileId: Type.String(), state: Type.String(), source: Type.String() }),
          ),
        }),
      },
    );
    app.get(
      "/api/v1/devices/:id/state",
      { config: { scope }, schema: { params: IdParams, ...stateDoc } },
      async (req) => store.read((tx) => getDeviceState(tx, actorOf(req), req.params.id)),
    );
  };
}
