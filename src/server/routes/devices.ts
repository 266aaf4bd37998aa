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
    app.post("/api/v1/devices", { config: { scope }, schema: { body: DeviceBody } }, (req, reply) =>
      mutate(store, req, reply, async (tx, actor) => {
        const body = await registerDevice(tx, actor, req.body);
        return { status: 201, body, headers: { Location: `/api/v1/devices/${body.device.id}` } };
      }),
    );
    app.get("/api/v1/devices", { config: { scope } }, async (req) =>
      store.read((tx) => listDevices(tx, actorOf(req))),
    );
    app.get("/api/v1/devices/:id", { config: { scope }, schema: { params: IdParams } }, async (req) =>
      store.read(async (tx) => ({ device: toDevice(await requireDevice(tx, actorOf(req), req.params.id)) })),
    );
    app.delete("/api/v1/devices/:id", { config: { scope }, schema: { params: IdParams } }, (req, reply) =>
      mutate(store, req, reply, async (tx, actor) => ({
        status: 200,
        body: await removeDevice(tx, actor, req.params.id),
      })),
    );
    app.put(
      "/api/v1/devices/:id/state",
      { config: { scope }, schema: { params: IdParams, body: StateBody } },
      (req, reply) => {
        const items = "items" in req.body ? req.body.items : [req.body];
        if (items.length > LIMITS.deviceStateItems) throw tooManyItems(items.length, LIMITS.deviceStateItems);
        return mutate(store, req, reply, async (tx, actor) => ({
          status: 200,
          body: await setDeviceState(tx, actor, req.params.id, items),
        }));
      },
    );
    app.get("/api/v1/devices/:id/state", { config: { scope }, schema: { params: IdParams } }, async (req) =>
      store.read((tx) => getDeviceState(tx, actorOf(req), req.params.id)),
    );
  };
}
