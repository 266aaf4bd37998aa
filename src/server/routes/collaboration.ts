// Comments (`comment`) and suggestions (`suggest`) on a file, in both path families.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { createComment, deleteComment, getComment, listComments, updateComment } from "../domain/comments.ts";
import { toTxtFileDetail } from "../domain/records.ts";
import {
  acceptSuggestion,
  createSuggestion,
  getSuggestion,
  listSuggestions,
  rejectSuggestion,
} from "../domain/suggestions.ts";
import { parseIfMatch } from "../http/conditional.ts";
import { actorOf, mutate } from "../http/mutation.ts";
import type { RouteDeps } from "./deps.ts";
import {
  CommentCreateBody,
  CommentListQuery,
  CommentUpdateBody,
  IdParams,
  ItemParams,
  SuggestionCreateBody,
  SuggestionListQuery,
  SuggestionUpdateBody,
} from "./schemas.ts";

const read = { config: { scope: "collaboration:read" as const } };
const write = { config: { scope: "collaboration:write" as const } };

export function collaborationRoutes({ store }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const prefix of ["/api/me/files/:id", "/api/v1/files/:id"]) {
      const comments = `${prefix}/comments`;
      app.get(
        comments,
        { ...read, schema: { params: IdParams, querystring: CommentListQuery } },
        async (req) =>
          store.read((tx) =>
            listComments(tx, actorOf(req), req.params.id, {
              resolved: req.query.resolved === undefined ? undefined : req.query.resolved === "true",
            }),
          ),
      );
      app.post(comments, { ...write, schema: { params: IdParams, body: CommentCreateBody } }, (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => {
          const out = await createComment(tx, actor, req.params.id, req.body);
          return { status: 201, body: out, headers: { Location: out.comment.endpoint } };
        }),
      );
      app.get(`${comments}/:itemId`, { ...read, schema: { params: ItemParams } }, async (req) =>
        store.read(async (tx) => ({
          comment: await getComment(tx, actorOf(req), req.params.id, req.params.itemId),
        })),
      );
      app.patch(
        `${comments}/:itemId`,
        { ...write, schema: { params: ItemParams, body: CommentUpdateBody } },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => ({
            status: 200,
            body: await updateComment(tx, actor, req.params.id, req.params.itemId, req.body),
          })),
      );
      // resolve / reopen: the same change as PATCH {resolved}, as verbs.
      for (const [verb, resolved] of [
        ["resolve", true],
        ["reopen", false],
      ] as const) {
        app.post(`${comments}/:itemId/${verb}`, { ...write, schema: { params: ItemParams } }, (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => ({
            status: 200,
            body: await updateComment(tx, actor, req.params.id, req.params.itemId, { resolved }),
          })),
        );
      }
      app.delete(`${comments}/:itemId`, { ...write, schema: { params: ItemParams } }, (req, reply) =>
        mutate(store, req, reply, async (tx, actor) => ({
          status: 200,
          body: await deleteComment(tx, actor, req.params.id, req.params.itemId),
        })),
      );

      const suggestions = `${prefix}/suggestions`;
      app.get(
        suggestions,
        { ...read, schema: { params: IdParams, querystring: SuggestionListQuery } },
        async (req) => store.read((tx) => listSuggestions(tx, actorOf(req), req.params.id, req.query.status)),
      );
      app.post(
        suggestions,
        { ...write, schema: { params: IdParams, body: SuggestionCreateBody } },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => {
            const out = await createSuggestion(tx, actor, req.params.id, req.body);
            return { status: 201, body: out, headers: { Location: out.suggestion.endpoint } };
          }),
      );
      app.get(`${suggestions}/:itemId`, { ...read, schema: { params: ItemParams } }, async (req) =>
        store.read(async (tx) => ({
          suggestion: await getSuggestion(tx, actorOf(req), req.params.id, req.params.itemId),
        })),
      );
      const review = (
        req: FastifyRequest,
        reply: FastifyReply,
        p: { id: string; itemId: string },
        status: "accepted" | "rejected",
      ) =>
        mutate(store, req, reply, async (tx, actor) => {
          if (status === "rejected") {
            return { status: 200, body: await rejectSuggestion(tx, actor, p.id, p.itemId) };
          }
          const out = await acceptSuggestion(
            tx,
            actor,
            p.id,
            p.itemId,
            parseIfMatch(req.headers["if-match"]),
          );
          return {
            status: 200,
            body: { suggestion: out.suggestion, file: toTxtFileDetail(out.file, out.role), seq: out.seq },
            headers: { ETag: out.file.etag },
          };
        });
      app.post(
        `${suggestions}/:itemId/accept`,
        { config: { ...write.config, ifMatch: true }, schema: { params: ItemParams } },
        (req, reply) => review(req, reply, req.params, "accepted"),
      );
      app.post(`${suggestions}/:itemId/reject`, { ...write, schema: { params: ItemParams } }, (req, reply) =>
        review(req, reply, req.params, "rejected"),
      );
      app.patch(
        `${suggestions}/:itemId`,
        {
          config: { ...write.config, ifMatch: true },
          schema: { params: ItemParams, body: SuggestionUpdateBody },
        },
        (req, reply) => review(req, reply, req.params, req.body.status),
      );
    }
  };
}
