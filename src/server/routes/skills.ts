// skills: GET /api/me/skills and GET /api/v1/skills.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { listSkills } from "../domain/skills.ts";
import { actorOf } from "../http/mutation.ts";
import { named, op } from "../openapi/describe.ts";
import { TxtSkill } from "../openapi/records.ts";
import type { RouteDeps } from "./deps.ts";

export function skillRoutes({ store }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const path of ["/api/me/skills", "/api/v1/skills"]) {
      const doc = op({
        ...named(path, "listSkills", "skills"),
        area: "collaboration",
        summary: "Every SKILL.md you can read, as TxtSkill records (scope, project, agent from the path).",
        ok: { 200: Type.Object({ skills: Type.Array(TxtSkill) }) },
      });
      app.get(path, { config: { scope: "files:read" }, schema: doc }, async (req) =>
        store.read((tx) => listSkills(tx, actorOf(req))),
      );
    }
  };
}
