// theme (read/save): GET and PUT /api/v1/theme, scoped by at most one of fileId, folderId, groupId.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { getTheme, saveTheme, themeEtag, themeScopeOf } from "../domain/themes.ts";
import { parseIfMatch } from "../http/conditional.ts";
import { actorOf, mutate } from "../http/mutation.ts";
import type { RouteDeps } from "./deps.ts";
import { ThemeBody, ThemeQuery } from "./schemas.ts";

export function themeRoutes({ store }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const path of ["/api/me/theme", "/api/v1/theme"]) {
      app.get(
        path,
        { config: { scope: "files:read" }, schema: { querystring: ThemeQuery } },
        async (req, reply) => {
          const actor = actorOf(req);
          const scope = themeScopeOf(actor, req.query);
          const theme = await store.read((tx) => getTheme(tx, actor, scope));
          reply.header("ETag", themeEtag(scope, theme.revision)).header("Cache-Control", "private, no-cache");
          return { theme };
        },
      );
      app.put(
        path,
        {
          config: { scope: "files:write", ifMatch: true },
          schema: { querystring: ThemeQuery, body: ThemeBody },
        },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => {
            const scope = themeScopeOf(actor, req.query);
            const theme = await saveTheme(tx, actor, scope, req.body, parseIfMatch(req.headers["if-match"]));
            return { status: 200, body: { theme }, headers: { ETag: themeEtag(scope, theme.revision) } };
          }),
      );
    }
  };
}
