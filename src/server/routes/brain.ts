// The context brain, /api/me family and /api/v1 verbs: ideation (ideate, grow), the workspace's
// context and its reviewable proposals, and the per-folder "exclude from AI" setting.
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { applyAnalysis, planAnalysis } from "../domain/brain/analysis.ts";
import { getWorkspaceContext } from "../domain/brain/coverage.ts";
import { folderAiSetting, setFolderAiExcluded } from "../domain/brain/exclusions.ts";
import { applyGrow, applyIdeation, fileIdeation, planGrow, planIdeation } from "../domain/brain/ideation.ts";
import { getProposal, listProposals, reviewMany, reviewProposal } from "../domain/brain/proposals.ts";
import { listIdeation } from "../domain/brain/status.ts";
import { fileEndpoint } from "../domain/records.ts";
import { parseIfMatch } from "../http/conditional.ts";
import { actorOf, mutate } from "../http/mutation.ts";
import { aiMutation, brainDeps, requireWrite } from "./brainHttp.ts";
import {
  AnalysisResult,
  FileIdeation,
  FolderAiBody,
  FolderAiSetting,
  IdeationCreated,
  IdeationGrown,
  IdeationList,
  PromptBody,
  Proposal,
  ProposalList,
  ProposalListQuery,
  ProposalParams,
  ReviewBody,
  ReviewManyResult,
  ReviewResult,
  responses,
  SeedBody,
  WorkspaceContext,
} from "./brainSchemas.ts";
import type { RouteDeps } from "./deps.ts";
import { IdParams } from "./schemas.ts";

const aiUse = { scope: "ai:use" as const };
const aiRead = { scope: "ai:read" as const };

export function brainRoutes(deps: RouteDeps): FastifyPluginAsyncTypebox {
  const { store } = deps;
  return async (app) => {
    app.get(
      "/api/me/ideation",
      { config: aiRead, schema: { response: responses(200, IdeationList) } },
      async (req) => store.read((tx) => listIdeation(tx, brainDeps(deps, req), actorOf(req))),
    );

    // ideate: /api/me answers 200 (the spec's table), /api/v1 201 with the note's Location.
    for (const [path, status] of [
      ["/api/me/ideation", 200],
      ["/api/v1/ideation", 201],
    ] as const) {
      app.post(
        path,
        {
          config: aiUse,
          schema: { body: SeedBody, response: responses(status, IdeationCreated, 402, 409, 429, 502) },
        },
        (req, reply) => {
          requireWrite(req);
          const bd = brainDeps(deps, req);
          return aiMutation(
            store,
            req,
            reply,
            () => planIdeation(bd, actorOf(req), req.body ?? {}),
            async (tx, actor, planned) => {
              const body = await applyIdeation(tx, bd, actor, planned);
              return {
                status,
                body,
                headers: { ETag: body.note.etag, Location: fileEndpoint(body.note.id) },
              };
            },
          );
        },
      );
    }

    for (const base of ["/api/me/files/:id", "/api/v1/files/:id"]) {
      app.get(
        `${base}/ideation`,
        { config: aiRead, schema: { params: IdParams, response: responses(200, FileIdeation, 404) } },
        async (req) => store.read((tx) => fileIdeation(tx, actorOf(req), req.params.id)),
      );
      app.post(
        `${base}/ideate`,
        {
          config: { ...aiUse, ifMatch: true },
          schema: {
            params: IdParams,
            body: SeedBody,
            response: responses(200, IdeationGrown, 402, 404, 409, 412, 429, 502),
          },
        },
        (req, reply) => {
          requireWrite(req);
          const bd = brainDeps(deps, req);
          const ifMatch = parseIfMatch(req.headers["if-match"]);
          return aiMutation(
            store,
            req,
            reply,
            () => planGrow(bd, actorOf(req), req.params.id, req.body ?? {}, ifMatch),
            async (tx, actor, planned) => {
              const body = await applyGrow(tx, bd, actor, req.params.id, planned);
              return { status: 200, body, headers: { ETag: body.note.etag } };
            },
          );
        },
      );
    }

    for (const base of ["/api/me/context", "/api/v1/context"]) {
      app.get(base, { config: aiRead, schema: { response: responses(200, WorkspaceContext) } }, async (req) =>
        store.read((tx) => getWorkspaceContext(tx, brainDeps(deps, req), actorOf(req))),
      );
      app.post(
        base,
        {
          config: aiUse,
          schema: { body: PromptBody, response: responses(200, AnalysisResult, 402, 409, 429, 502) },
        },
        (req, reply) => {
          const bd = brainDeps(deps, req);
          return aiMutation(
            store,
            req,
            reply,
            () => planAnalysis(bd, actorOf(req), req.body ?? {}),
            async (tx, actor, planned) => ({
              status: 200,
              body: await applyAnalysis(tx, bd, actor, planned),
            }),
          );
        },
      );
      app.get(
        `${base}/proposals`,
        {
          config: aiRead,
          schema: { querystring: ProposalListQuery, response: responses(200, ProposalList) },
        },
        async (req) =>
          store.read((tx) => listProposals(tx, actorOf(req), req.query.status, req.query.limit ?? 100)),
      );
      app.get(
        `${base}/proposals/:id`,
        { config: aiRead, schema: { params: ProposalParams, response: responses(200, Proposal, 404) } },
        async (req) => store.read((tx) => getProposal(tx, actorOf(req), req.params.id)),
      );
      for (const [verb, decision] of [
        ["accept", "accepted"],
        ["reject", "rejected"],
      ] as const) {
        app.post(
          `${base}/proposals/:id/${verb}`,
          {
            config: aiUse,
            schema: { params: ProposalParams, response: responses(200, ReviewResult, 404, 409) },
          },
          (req, reply) =>
            mutate(store, req, reply, async (tx, actor) => ({
              status: 200,
              body: await reviewProposal(tx, actor, req.params.id, decision),
            })),
        );
      }
      app.post(
        `${base}/proposals/review`,
        { config: aiUse, schema: { body: ReviewBody, response: responses(200, ReviewManyResult) } },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => ({
            status: 200,
            body: await reviewMany(tx, actor, req.body),
          })),
      );
    }

    for (const base of ["/api/me/folders/:id/ai", "/api/v1/folders/:id/ai"]) {
      app.get(
        base,
        {
          config: { scope: "folders:read" },
          schema: { params: IdParams, response: responses(200, FolderAiSetting, 404) },
        },
        async (req) => store.read((tx) => folderAiSetting(tx, actorOf(req), req.params.id)),
      );
      app.put(
        base,
        {
          config: { scope: "folders:write" },
          schema: { params: IdParams, body: FolderAiBody, response: responses(200, FolderAiSetting, 404) },
        },
        (req, reply) =>
          mutate(store, req, reply, async (tx, actor) => ({
            status: 200,
            body: await setFolderAiExcluded(tx, actor, req.params.id, req.body.excluded),
          })),
      );
    }
  };
}
