// skills: GET /api/me/skills and GET /api/v1/skills.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { listSkills } from "../domain/skills.ts";
import { actorOf } from "../http/mutation.ts";
import type { RouteDeps } from "./deps.ts";

export function skillRoutes({ store }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const path of ["/api/me/skills", "/api/v1/skills"]) {
      app.get(path, { config: { scope: "files:read" } }, async (req) =>
        store.read((tx) => listSkills(tx, actorOf(req))),
      );
    }
  };
}
