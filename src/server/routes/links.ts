// The link graph's loose ends: every unresolved link of the caller's notes (an extension of the spec).
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { linksFrom, linksTo, listUnresolved } from "../domain/links/linkListing.ts";
import { actorOf } from "../http/mutation.ts";
import { op } from "../openapi/describe.ts";
import type { RouteDeps } from "./deps.ts";
import { IdParams } from "./schemas.ts";

const read = { config: { scope: "files:read" as const } };

const Query = Type.Object({
  cursor: Type.Optional(Type.String({ description: "The `nextCursor` of the previous page." })),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 1000, description: "Links per page (default 100)." }),
  ),
});

const Page = Type.Object({
  links: Type.Array(
    Type.Object({
      fileId: Type.String({ description: "The note whose text holds the link." }),
      name: Type.String(),
      folderId: Type.Union([Type.String(), Type.Null()]),
      text: Type.String({ description: "The link as written, e.g. `[[Old name]]`." }),
      path: Type.String({ description: "The path it names, decoded, without `#heading` or `|alias`." }),
      embed: Type.Boolean(),
    }),
  ),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
  hasMore: Type.Boolean(),
});

const NoteLinks = Type.Object({
  fileId: Type.String(),
  links: Type.Array(
    Type.Object({
      text: Type.String({ description: "The link as written, e.g. `[[Note#Heading|shown]]`." }),
      path: Type.String({ description: "The path it names, decoded, without `#heading` or `|alias`." }),
      embed: Type.Boolean({ description: "`![[…]]`: shows the target inside the note." }),
      resolved: Type.Boolean({ description: "It names a note." }),
      targetFileId: Type.Union([Type.String(), Type.Null()], {
        description: "The note it names; null when none, or one you cannot see.",
      }),
    }),
  ),
});

const Backlinks = Type.Object({
  fileId: Type.String(),
  backlinks: Type.Array(
    Type.Object({
      fileId: Type.String({ description: "The note whose text holds the link." }),
      text: Type.String({ description: "The link as written, e.g. `[[Note#Heading|shown]]`." }),
      path: Type.String({ description: "The path it names, decoded, without `#heading` or `|alias`." }),
      embed: Type.Boolean(),
    }),
  ),
  hasMore: Type.Boolean({ description: "More than 1000 links name the note: the first 1000 are listed." }),
});

export function linkRoutes({ store }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    const doc = op({
      id: "listUnresolvedLinks",
      area: "metadata",
      summary: "The links in your notes that name no note (after a rename, or not written yet), paged.",
      ok: { 200: Page },
    });
    const linksDoc = op({
      id: "getFileLinks",
      area: "metadata",
      summary: "The note's links and embeds in the order written, each with the note it names.",
      ok: { 200: NoteLinks },
      errors: [404],
    });
    const backlinksDoc = op({
      id: "getFileBacklinks",
      area: "metadata",
      summary: "The links in your notes that name this note, by linking note then position (up to 1000).",
      ok: { 200: Backlinks },
      errors: [404],
    });
    app.get(
      "/api/me/files/:id/backlinks",
      { ...read, schema: { params: IdParams, ...backlinksDoc } },
      async (req) => store.read((tx) => linksTo(tx, actorOf(req), req.params.id)),
    );
    app.get("/api/me/files/:id/links", { ...read, schema: { params: IdParams, ...linksDoc } }, async (req) =>
      store.read((tx) => linksFrom(tx, actorOf(req), req.params.id)),
    );
    app.get("/api/me/links/unresolved", { ...read, schema: { querystring: Query, ...doc } }, async (req) =>
      store.read((tx) => listUnresolved(tx, actorOf(req), req.query)),
    );
  };
}
