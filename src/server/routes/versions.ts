// Version history of a file: list, read one, label (`commit`), restore.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { toTxtFileDetail } from "../domain/records.ts";
import {
  commitVersion,
  getVersion,
  listVersions,
  parseVersionNumber,
  restoreVersion,
} from "../domain/versions.ts";
import { parseIfMatch } from "../http/conditional.ts";
import { actorOf, mutate } from "../http/mutation.ts";
import { named, op } from "../openapi/describe.ts";
import { TxtFileDetail, TxtVersion, VersionEnvelope } from "../openapi/records.ts";
import type { RouteDeps } from "./deps.ts";
import { CommitBody, IdParams, VersionListQuery, VersionParams } from "./schemas.ts";

const read = { config: { scope: "files:read" as const } };
const write = { config: { scope: "files:write" as const } };

export function versionRoutes({ store }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const base of ["/api/me/files/:id/versions", "/api/v1/files/:id/versions"]) {
      const listDoc = op({
        ...named(base, "listVersions", "versions"),
        area: "collaboration",
        summary: "Version history, newest first, without bodies; `before` pages back.",
        ok: {
          200: Type.Object({
            fileId: Type.String(),
            currentVersion: Type.Integer(),
            versions: Type.Array(TxtVersion),
            nextBefore: Type.Union([Type.Integer(), Type.Null()]),
            hasMore: Type.Boolean(),
          }),
        },
      });
      const commitDoc = op({
        ...named(base, "commitVersion", "commit"),
        area: "collaboration",
        summary: "Label a version (the current one unless `versionNumber`).",
        ok: { 201: VersionEnvelope },
        headers: ["Idempotency-Key"],
      });
      const getDoc = op({
        ...named(base, "getVersion", "version"),
        area: "collaboration",
        summary: "One version with its content.",
        ok: { 200: VersionEnvelope },
      });
      const restoreDoc = op({
        ...named(base, "restoreVersion", "restore"),
        area: "collaboration",
        summary: "Restore a version as a new current version (writer). If-Match guards the file.",
        ok: {
          200: Type.Object({
            file: TxtFileDetail,
            restored: Type.Boolean(),
            restoredFrom: Type.Integer(),
            seq: Type.Optional(Type.Integer()),
          }),
        },
        headers: ["If-Match", "Idempotency-Key"],
        etag: true,
      });
      app.get(
        base,
        { ...read, schema: { params: IdParams, querystring: VersionListQuery, ...listDoc } },
        async (req) => store.read((tx) => listVersions(tx, actorOf(req), req.params.id, req.query)),
      );
      app.post(
        base,
        { ...write, schema: { params: IdParams, body: CommitBody, ...commitDoc } },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => ({
            status: 201,
            body: await commitVersion(tx, actor, req.params.id, req.body),
          })),
      );
      app.get(`${base}/:version`, { ...read, schema: { params: VersionParams, ...getDoc } }, async (req) => {
        const n = parseVersionNumber(req.params.version);
        return store.read(async (tx) => ({ version: await getVersion(tx, actorOf(req), req.params.id, n) }));
      });
      app.post(
        `${base}/:version/restore`,
        { config: { ...write.config, ifMatch: true }, schema: { params: VersionParams, ...restoreDoc } },
        (req, reply) => {
          const n = parseVersionNumber(req.params.version);
          return mutate(store, req, reply, async (tx, actor) => {
            const out = await restoreVersion(
              tx,
              actor,
              req.params.id,
              n,
              parseIfMatch(req.headers["if-match"]),
            );
            return {
              status: 200,
              body: {
                file: toTxtFileDetail(out.file, out.role),
                restored: out.restored,
                restoredFrom: out.restoredFrom,
                ...(out.seq !== undefined ? { seq: out.seq } : {}),
              },
              headers: { ETag: out.file.etag },
            };
          });
        },
      );
    }
  };
}
