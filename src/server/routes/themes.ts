// theme (read/save): GET and PUT /api/v1/theme, scoped by at most one of fileId, folderId, groupId.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { getTheme, saveTheme, themeEtag, themeScopeOf } from "../domain/themes.ts";
import { parseIfMatch } from "../http/conditional.ts";
import { actorOf, mutate } from "../http/mutation.ts";
import { named, op } from "../openapi/describe.ts";
import { ThemeEnvelope } from "../openapi/records.ts";
import type { RouteDeps } from "./deps.ts";
import { ThemeBody, ThemeQuery } from "./schemas.ts";

export function themeRoutes({ store }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const path of ["/api/me/theme", "/api/v1/theme"]) {
      app.get(
        path,
        {
          config: { scope: "files:read" },
          schema: {
            querystring: ThemeQuery,
            ...op({
              ...named(path, "getTheme", "theme"),
              area: "sync",
              summary:
                "The account theme, or a file's/folder's/group's (at most one of `fileId`, `folderId`, `groupId`).",
              ok: { 200: ThemeEnvelope },
              errors: { 404: "The file, folder or group does not exist or is not visible." },
              etag: true,
            }),
          },
        },
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
          schema: {
            querystring: ThemeQuery,
            body: ThemeBody,
            ...op({
              ...named(path, "saveTheme", "themeSave", "theme-save"),
              area: "sync",
              summary:
                "Save `themeId` and `overrides` with the current `revision` (folder/group: owner only).",
              ok: { 200: ThemeEnvelope },
              errors: {
                404: "The file, folder or group does not exist or is not visible.",
                409: "`revision` is not the current one: read the theme again.",
              },
              headers: ["If-Match", "Idempotency-Key"],
              etag: true,
            }),
          },
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
