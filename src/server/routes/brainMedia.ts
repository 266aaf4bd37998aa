// Scan (POST /api/v1/transcriptions), render and models (/api/v1/artifacts), and search
// (GET /api/v1/search, an extension of the spec).
import multipart from "@fastify/multipart";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyRequest } from "fastify";
import {
  type ArtifactKind,
  applyRender,
  artifactModels,
  getArtifact,
  listArtifacts,
  planRender,
} from "../domain/brain/artifacts.ts";
import { BRAIN_LIMITS } from "../domain/brain/config.ts";
import { searchNotes } from "../domain/brain/search.ts";
import {
  applyScan,
  getTranscription,
  listTranscriptions,
  planScan,
  type ScanInput,
  TRANSCRIPTION_TYPES,
} from "../domain/brain/transcription.ts";
import { ServiceError, tooLarge } from "../domain/errors.ts";
import { fileEndpoint } from "../domain/records.ts";
import { actorOf } from "../http/mutation.ts";
import { aiMutation, brainDeps, requireWrite } from "./brainHttp.ts";
import {
  ArtifactCreated,
  ArtifactList,
  ArtifactModels,
  ArtifactRecord,
  PageQuery,
  RenderBody,
  responses,
  SearchQuery,
  SearchResult,
  TranscriptionCreated,
  TranscriptionList,
  TranscriptionQuery,
  TranscriptionRecord,
} from "./brainSchemas.ts";
import type { RouteDeps } from "./deps.ts";
import { IdParams } from "./schemas.ts";

const aiUse = { scope: "ai:use" as const };
const aiRead = { scope: "ai:read" as const };
const splitTags = (s: string | undefined) =>
  s
    ?.split(",")
    .map((t) => t.trim())
    .filter(Boolean);

/** The upload as raw bytes (Content-Type audio/* or image/*) or as multipart with a `file` part. */
async function readUpload(req: FastifyRequest, query: { name?: string; folderId?: string; tags?: string }) {
  const opts: Omit<ScanInput, "data" | "mediaType"> = {
    name: query.name,
    folderId: query.folderId ?? null,
    tags: splitTags(query.tags),
  };
  if (Buffer.isBuffer(req.body)) {
    return { ...opts, data: req.body, mediaType: String(req.headers["content-type"] ?? "") };
  }
  if (req.isMultipart()) {
    let file: { data: Buffer; mediaType: string; fileName: string } | null = null;
    try {
      for await (const part of req.parts({
        limits: { fileSize: BRAIN_LIMITS.transcriptionBytes, files: 1 },
      })) {
        if (part.type === "file") {
          file = { data: await part.toBuffer(), mediaType: part.mimetype, fileName: part.filename };
        } else if (part.fieldname === "name") opts.name = String(part.value);
        else if (part.fieldname === "folderId") opts.folderId = String(part.value) || null;
        else if (part.fieldname === "tags") opts.tags = splitTags(String(part.value));
      }
    } catch (err) {
      if ((err as { code?: string }).code === "FST_REQ_FILE_TOO_LARGE")
        throw tooLarge("the upload", `${BRAIN_LIMITS.transcriptionBytes} bytes`);
      throw err;
    }
    if (!file) {
      throw new ServiceError(
        400,
        "validation_failed",
        "file: the multipart body has no file part.",
        "Send the recording or image as a part named file.",
        [{ field: "file", code: "required", message: "file is required" }],
      );
    }
    return { ...opts, ...file };
  }
  throw new ServiceError(
    415,
    "unsupported_media_type",
    `Content-Type ${req.headers["content-type"] ?? "(none)"} cannot be transcribed.`,
    `Send the bytes with Content-Type ${TRANSCRIPTION_TYPES.join(", ")}, or multipart/form-data with a file part.`,
  );
}

export function brainMediaRoutes(deps: RouteDeps): FastifyPluginAsyncTypebox {
  const { store } = deps;
  return async (app) => {
    // Recordings and images arrive raw or as multipart; both only here (the plugin is encapsulated).
    const bodyLimit = BRAIN_LIMITS.transcriptionBytes + 1024 * 1024;
    app.addContentTypeParser(/^(audio|image)\//, { parseAs: "buffer", bodyLimit }, (_req, body, done) =>
      done(null, body),
    );
    await app.register(multipart);

    app.post(
      "/api/v1/transcriptions",
      {
        config: aiUse,
        bodyLimit,
        schema: {
          querystring: TranscriptionQuery,
          consumes: [...TRANSCRIPTION_TYPES, "multipart/form-data"],
          response: responses(201, TranscriptionCreated, 402, 404, 409, 413, 415, 429, 502),
        },
      },
      async (req, reply) => {
        requireWrite(req);
        const bd = brainDeps(deps, req);
        const upload = await readUpload(req, req.query);
        return aiMutation(
          store,
          req,
          reply,
          () => planScan(bd, actorOf(req), upload),
          async (tx, actor, planned) => {
            const body = await applyScan(tx, bd, actor, planned);
            return {
              status: 201,
              body,
              headers: {
                Location: `/api/v1/transcriptions/${body.transcription.id}`,
                "Content-Location": fileEndpoint(body.file.id),
              },
            };
          },
        );
      },
    );
    app.get(
      "/api/v1/transcriptions",
      { config: aiRead, schema: { querystring: PageQuery, response: responses(200, TranscriptionList) } },
      async (req) => store.read((tx) => listTranscriptions(tx, actorOf(req), req.query.limit ?? 100)),
    );
    app.get(
      "/api/v1/transcriptions/:id",
      { config: aiRead, schema: { params: IdParams, response: responses(200, TranscriptionRecord, 404) } },
      async (req) => store.read((tx) => getTranscription(tx, actorOf(req), req.params.id)),
    );

    app.get(
      "/api/v1/artifacts/models",
      { config: aiRead, schema: { response: responses(200, ArtifactModels) } },
      async (req) => artifactModels(brainDeps(deps, req), actorOf(req)),
    );
    app.post(
      "/api/v1/artifacts",
      {
        config: aiUse,
        schema: { body: RenderBody, response: responses(201, ArtifactCreated, 402, 404, 409, 429, 502) },
      },
      (req, reply) => {
        if (req.body.save) requireWrite(req);
        const bd = brainDeps(deps, req);
        const input = { ...req.body, kind: req.body.kind as ArtifactKind };
        return aiMutation(
          store,
          req,
          reply,
          () => planRender(bd, actorOf(req), input),
          async (tx, actor, planned) => {
            const body = await applyRender(tx, bd, actor, planned, Boolean(req.body.save));
            return { status: 201, body, headers: { Location: `/api/v1/artifacts/${body.artifact.id}` } };
          },
        );
      },
    );
    app.get(
      "/api/v1/artifacts",
      { config: aiRead, schema: { querystring: PageQuery, response: responses(200, ArtifactList) } },
      async (req) => store.read((tx) => listArtifacts(tx, actorOf(req), req.query.limit ?? 100)),
    );
    app.get(
      "/api/v1/artifacts/:id",
      { config: aiRead, schema: { params: IdParams, response: responses(200, ArtifactRecord, 404) } },
      async (req) => store.read((tx) => getArtifact(tx, actorOf(req), req.params.id)),
    );

    app.get(
      "/api/v1/search",
      {
        config: { scope: "files:read" },
        schema: { querystring: SearchQuery, response: responses(200, SearchResult, 503) },
      },
      async (req) => store.read((tx) => searchNotes(tx, actorOf(req), req.query)),
    );
  };
}
