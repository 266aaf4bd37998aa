// Comments (`comment`) and suggestions (`suggest`) on a file, in both path families.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
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
import { named, op } from "../openapi/describe.ts";
import { CommentEnvelope, SuggestionEnvelope, TxtComment, TxtSuggestion } from "../openapi/records.ts";
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

const Conflict = { 409: "The selection no longer matches the text, or the item's state forbids it." };
const writeHeaders = ["Idempotency-Key"] as const;

const read = { config: { scope: "collaboration:read" as const } };
const write = { config: { scope: "collaboration:write" as const } };

export function collaborationRoutes({ store }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const prefix of ["/api/me/files/:id", "/api/v1/files/:id"]) {
      const comments = `${prefix}/comments`;
      const doc = (
        me: string,
        v1: string,
        verb: string,
        summary: string,
        ok: Record<number, unknown>,
        extra = {},
      ) => op({ ...named(prefix, me, v1, verb), area: "collaboration", summary, ok, ...extra });
      const w = { headers: writeHeaders };
      app.get(
        comments,
        {
          ...read,
          schema: {
            params: IdParams,
            querystring: CommentListQuery,
            ...doc("listComments", "comments", "comments", "A file's comments (`resolved=true|false`).", {
              200: Type.Object({ fileId: Type.String(), comments: Type.Array(TxtComment) }),
            }),
          },
        },
        async (req) =>
          store.read((tx) =>
            listComments(tx, actorOf(req), req.params.id, {
              resolved: req.query.resolved === undefined ? undefined : req.query.resolved === "true",
            }),
          ),
      );
      const createCommentDoc = doc(
        "createComment",
        "comment",
        "comment",
        "Comment on a file, optionally on a selection of its text (readers may comment).",
        { 201: CommentEnvelope },
        { ...w, errors: Conflict },
      );
      app.post(
        comments,
        { ...write, schema: { params: IdParams, body: CommentCreateBody, ...createCommentDoc } },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => {
            const out = await createComment(tx, actor, req.params.id, req.body);
            return { status: 201, body: out, headers: { Location: out.comment.endpoint } };
          }),
      );
      const getCommentDoc = doc("getComment", "commentGet", "comment-get", "One comment.", {
        200: Type.Object({ comment: TxtComment }),
      });
      app.get(
        `${comments}/:itemId`,
        { ...read, schema: { params: ItemParams, ...getCommentDoc } },
        async (req) =>
          store.read(async (tx) => ({
            comment: await getComment(tx, actorOf(req), req.params.id, req.params.itemId),
          })),
      );
      app.patch(
        `${comments}/:itemId`,
        {
          ...write,
          schema: {
            params: ItemParams,
            body: CommentUpdateBody,
            ...doc(
              "updateComment",
              "commentUpdate",
              "comment-update",
              "Edit the body (author), or resolve/reopen.",
              { 200: CommentEnvelope },
              w,
            ),
          },
        },
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
        const verbDoc = doc(
          `${verb}Comment`,
          verb,
          verb,
          resolved ? "Resolve a comment." : "Reopen a resolved comment.",
          { 200: CommentEnvelope },
          w,
        );
        app.post(
          `${comments}/:itemId/${verb}`,
          { ...write, schema: { params: ItemParams, ...verbDoc } },
          (req, reply) =>
            mutate(store, req, reply, async (tx, actor) => ({
              status: 200,
              body: await updateComment(tx, actor, req.params.id, req.params.itemId, { resolved }),
            })),
        );
      }
      const deleteCommentDoc = doc(
        "deleteComment",
        "commentDelete",
        "comment-delete",
        "Delete a comment (its author or the file's owner).",
        {
          200: Type.Object({
            id: Type.String(),
            deleted: Type.Literal(true),
            seq: Type.Optional(Type.Integer()),
          }),
        },
        w,
      );
      app.delete(
        `${comments}/:itemId`,
        { ...write, schema: { params: ItemParams, ...deleteCommentDoc } },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => ({
            status: 200,
            body: await deleteComment(tx, actor, req.params.id, req.params.itemId),
          })),
      );

      const suggestions = `${prefix}/suggestions`;
      app.get(
        suggestions,
        {
          ...read,
          schema: {
            params: IdParams,
            querystring: SuggestionListQuery,
            ...doc("listSuggestions", "suggestions", "suggestions", "A file's suggestions (`status=`).", {
              200: Type.Object({ fileId: Type.String(), suggestions: Type.Array(TxtSuggestion) }),
            }),
          },
        },
        async (req) => store.read((tx) => listSuggestions(tx, actorOf(req), req.params.id, req.query.status)),
      );
      app.post(
        suggestions,
        {
          ...write,
          schema: {
            params: IdParams,
            body: SuggestionCreateBody,
            ...doc(
              "createSuggestion",
              "suggest",
              "suggest",
              "Suggest replacing a selection of the text (readers may suggest).",
              { 201: SuggestionEnvelope },
              { ...w, errors: Conflict },
            ),
          },
        },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => {
            const out = await createSuggestion(tx, actor, req.params.id, req.body);
            return { status: 201, body: out, headers: { Location: out.suggestion.endpoint } };
          }),
      );
      const getSuggestionDoc = doc("getSuggestion", "suggestionGet", "suggestion-get", "One suggestion.", {
        200: Type.Object({ suggestion: TxtSuggestion }),
      });
      app.get(
        `${suggestions}/:itemId`,
        { ...read, schema: { params: ItemParams, ...getSuggestionDoc } },
        async (req) =>
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
          const ifMatch = parseIfMatch(req.headers["if-match"]);
          if (status === "rejected") {
            return { status: 200, body: await rejectSuggestion(tx, actor, p.id, p.itemId, ifMatch) };
          }
          const out = await acceptSuggestion(tx, actor, p.id, p.itemId, ifMatch);
          return {
            status: 200,
            body: { suggestion: out.suggestion, file: toTxtFileDetail(out.file, out.role), seq: out.seq },
            headers: { ETag: out.file.etag },
          };
        });
      const reviewDoc = (me: string, v1: string, summary: string) =>
        doc(
          me,
          v1,
          v1,
          summary,
          { 200: SuggestionEnvelope },
          {
            headers: ["If-Match", "Idempotency-Key"],
            errors: Conflict,
          },
        );
      const acceptDoc = reviewDoc(
        "acceptSuggestion",
        "accept",
        "Accept: the file's text changes (writer). If-Match guards the file.",
      );
      const rejectDoc = reviewDoc(
        "rejectSuggestion",
        "reject",
        "Reject a suggestion (writer). If-Match guards the file, as on accept.",
      );
      const patchDoc = reviewDoc("reviewSuggestion", "review", "Accept or reject with `{status}`.");
      app.post(
        `${suggestions}/:itemId/accept`,
        { config: { ...write.config, ifMatch: true }, schema: { params: ItemParams, ...acceptDoc } },
        (req, reply) => review(req, reply, req.params, "accepted"),
      );
      app.post(
        `${suggestions}/:itemId/reject`,
        { config: { ...write.config, ifMatch: true }, schema: { params: ItemParams, ...rejectDoc } },
        (req, reply) => review(req, reply, req.params, "rejected"),
      );
      app.patch(
        `${suggestions}/:itemId`,
        {
          config: { ...write.config, ifMatch: true },
          schema: { params: ItemParams, body: SuggestionUpdateBody, ...patchDoc },
        },
        (req, reply) => review(req, reply, req.params, req.body.status),
      );
    }
  };
}
