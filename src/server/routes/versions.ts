// Version history of a file: list, read one, label (`commit`), restore.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
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
import type { RouteDeps } from "./deps.ts";
import { CommitBody, IdParams, VersionListQuery, VersionParams } from "./schemas.ts";

const read = { config: { scope: "files:read" as const } };
const write = { config: { scope: "files:write" as const } };

export function versionRoutes({ store }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const base of ["/api/me/files/:id/versions", "/api/v1/files/:id/versions"]) {
      app.get(base, { ...read, schema: { params: IdParams, querystring: VersionListQuery } }, async (req) =>
        store.read((tx) => listVersions(tx, actorOf(req), req.params.id, req.query)),
      );
      app.post(base, { ...write, schema: { params: IdParams, body: CommitBody } }, (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => ({
          status: 201,
          body: await commitVersion(tx, actor, req.params.id, req.body),
        })),
      );
      app.get(`${base}/:version`, { ...read, schema: { params: VersionParams } }, async (req) => {
        const n = parseVersionNumber(req.params.version);
        return store.read(async (tx) => ({ version: await getVersion(tx, actorOf(req), req.params.id, n) }));
      });
      app.post(
        `${base}/:version/restore`,
        { config: { ...write.config, ifMatch: true }, schema: { params: VersionParams } },
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
