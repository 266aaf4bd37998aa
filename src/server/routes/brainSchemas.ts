// Request and response schemas of the context brain's routes (ideation, workspace context and
// proposals, transcriptions, artifacts, search). Responses are declared whole: they are what the
// OpenAPI document says, and Fastify serializes exactly these fields.
import { type TSchema, Type } from "typebox";
import { PROPOSAL_KINDS } from "../domain/brain/outputs.ts";

const Nullable = (t: TSchema) => Type.Union([t, Type.Null()]);
const Str = Type.String();
const Int = Type.Integer();
const DateTime = Type.String({ format: "date-time" });
const Role = Type.Union([Type.Literal("owner"), Type.Literal("writer"), Type.Literal("reader")]);
const Access = Type.Union([Type.Literal("owner"), Type.Literal("shared")]);
const FileType = Type.Union([Type.Literal("txt"), Type.Literal("md")]);
const Availability = Type.Union([Type.Literal("cloud"), Type.Literal("cloud+local")]);
const OpenObject = Type.Object({}, { additionalProperties: true });

// --- requests ---

export const SeedBody = Type.Object(
  { seed: Type.Optional(Type.String({ description: "What to grow (at most 2000 characters)." })) },
  { additionalProperties: false },
);

export const PromptBody = Type.Object(
  { prompt: Type.Optional(Type.String({ description: "What to focus on (at most 2000 characters)." })) },
  { additionalProperties: false },
);

export const ProposalParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const ProposalListQuery = Type.Object({
  status: Type.Optional(
    Type.Union([Type.Literal("pending"), Type.Literal("accepted"), Type.Literal("rejected")]),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
});

export const ReviewBody = Type.Object(
  {
    accept: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 100 })),
    reject: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 100 })),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const FolderAiBody = Type.Object({ excluded: Type.Boolean() }, { additionalProperties: false });

export const SearchQuery = Type.Object({
  q: Type.String({ minLength: 1, description: "Words to find (all must occur; the last may be a prefix)." }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  folderId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
});

export const TranscriptionQuery = Type.Object({
  name: Type.Optional(Type.String({ description: "The note's name (default: from the transcript)." })),
  folderId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  tags: Type.Optional(Type.String({ description: "comma-separated" })),
});

export const ARTIFACT_KIND = Type.Union(
  ["summary", "outline", "slides", "mermaid", "html"].map((k) => Type.Literal(k)),
);

export const RenderBody = Type.Object(
  {
    kind: ARTIFACT_KIND,
    fileIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 50 })),
    folderId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    title: Type.Optional(Type.String({ maxLength: 200 })),
    save: Type.Optional(
      Type.Boolean({ description: "Also save the artifact as a note beside the sources." }),
    ),
  },
  { additionalProperties: false },
);

export const PageQuery = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) });

// --- records ---

export const TxtFileSchema = Type.Object({
  id: Str,
  name: Str,
  context: Str,
  tags: Type.Array(Str),
  type: FileType,
  availability: Availability,
  size: Int,
  folderId: Nullable(Str),
  createdAt: DateTime,
  updatedAt: DateTime,
  endpoint: Str,
  raw: Str,
  access: Access,
  role: Role,
  etag: Str,
  contentHash: Str,
  ownerId: Type.Optional(Str),
});

export const TxtFileDetailSchema = Type.Object({
  id: Str,
  name: Str,
  content: Str,
  context: Str,
  tags: Type.Array(Str),
  type: FileType,
  availability: Availability,
  folderId: Nullable(Str),
  createdAt: DateTime,
  updatedAt: DateTime,
  access: Access,
  role: Role,
  size: Int,
  etag: Str,
  contentHash: Str,
  ownerId: Type.Optional(Str),
  endpoint: Str,
  raw: Str,
});

export const TxtFolderSchema = Type.Object({
  id: Str,
  name: Str,
  context: Str,
  tags: Type.Array(Str),
  parentFolderId: Nullable(Str),
  fileCount: Int,
  createdAt: DateTime,
  updatedAt: DateTime,
  endpoint: Str,
  access: Access,
  role: Role,
  ownerId: Type.Optional(Str),
});

const ProviderReport = Type.Object(
  {
    host: Type.String({ description: "The provider's host (never its key)." }),
    source: Type.Union([Type.Literal("user"), Type.Literal("operator")]),
    model: Str,
  },
  { description: "Who answered: the account's own key (user) or the server's provider (operator)." },
);

const Quota = Type.Object({
  requestsLimit: Int,
  requestsLeft: Int,
  tokensLimit: Int,
  tokensLeft: Int,
  resetSeconds: Type.Integer({ description: "Seconds until the daily quota resets (00:00 UTC)." }),
});

const SentNote = Type.Object(
  { id: Str, name: Str },
  { description: "A note whose text was sent to the provider." },
);
const SentNotes = Type.Array(SentNote, { description: "Every note sent to the provider." });
const Usage = Type.Object({ tokens: Int });

const IdeationEvent = Type.Object({
  kind: Type.Union([Type.Literal("create"), Type.Literal("grow")]),
  at: DateTime,
  by: Str,
  seed: Nullable(Str),
  model: Str,
  providerHost: Str,
  providerSource: Type.Union([Type.Literal("user"), Type.Literal("operator")]),
  sources: Type.Array(SentNote),
});

export const IdeationRecord = Type.Object({
  fileId: Str,
  seed: Nullable(Str),
  model: Nullable(Str),
  providerHost: Nullable(Str),
  createdAt: DateTime,
  createdBy: Str,
  grownAt: Nullable(DateTime),
  growCount: Int,
  sources: Type.Array(SentNote),
  history: Type.Array(IdeationEvent),
});

const Connection = Type.Object({ fileId: Str, file: TxtFileSchema, reason: Str });

const BrainStatus = {
  canExplore: Type.Boolean(),
  reason: Nullable(Type.String({ description: "Why the brain cannot explore (null when it can)." })),
  canAnalyze: Type.Boolean({ description: "Workspace analysis needs the account's own key." }),
  plan: Str,
  hasUserKey: Type.Boolean(),
  operatorProvider: Type.Boolean({ description: "The server has a provider of its own (serves pro)." }),
  provider: Nullable(
    Type.Object({
      source: Nullable(Type.Union([Type.Literal("user"), Type.Literal("operator")])),
      host: Str,
      chatModel: Str,
      embeddingModel: Nullable(Str),
      transcriptionModel: Nullable(Str),
    }),
  ),
  quota: Quota,
  relatedNotes: Type.Union([Type.Literal("lexical"), Type.Literal("lexical+semantic")]),
};

export const BrainStatusSchema = Type.Object(BrainStatus);

export const IdeationList = Type.Object({
  ...BrainStatus,
  notes: Type.Array(Type.Object({ file: TxtFileSchema, ideation: IdeationRecord })),
});

export const IdeationCreated = Type.Object({
  note: TxtFileDetailSchema,
  folder: Nullable(TxtFolderSchema),
  folderCreated: Type.Boolean(),
  tags: Type.Array(Str),
  connections: Type.Array(Connection),
  ideation: IdeationRecord,
  provider: ProviderReport,
  sentNotes: SentNotes,
  droppedIds: Type.Array(Str, { description: "Ids the model named that the caller may not use (dropped)." }),
  usage: Usage,
  quota: Quota,
});

export const IdeationGrown = Type.Object({
  note: TxtFileDetailSchema,
  added: Str,
  newTags: Type.Array(Str),
  connections: Type.Array(Connection),
  ideation: IdeationRecord,
  provider: ProviderReport,
  sentNotes: SentNotes,
  droppedIds: Type.Array(Str),
  usage: Usage,
  quota: Quota,
});

export const FileIdeation = Type.Object({ fileId: Str, ideation: Nullable(IdeationRecord) });

const Share = Type.Object({ count: Int, share: Type.Number({ description: "0..1" }) });

export const WorkspaceContext = Type.Object({
  workspace: Type.Object({
    notes: Int,
    folders: Int,
    bytes: Int,
    tags: Int,
    connections: Int,
    excludedFolders: Type.Array(Str),
    notesExcludedFromAi: Int,
  }),
  coverage: Type.Object({
    notes: Type.Object({ withContext: Share, withTags: Share, inFolders: Share, connected: Share }),
    folders: Type.Object({ withContext: Share, withTags: Share }),
  }),
  tagVocabulary: Type.Array(Type.Object({ tag: Str, count: Int })),
  leastOrganised: Type.Array(
    Type.Object({
      file: TxtFileSchema,
      organisation: Type.Integer({ minimum: 0, maximum: 4 }),
      missing: Type.Array(Str),
    }),
  ),
  brain: BrainStatusSchema,
  pendingProposals: Int,
});

export const Proposal = Type.Object({
  id: Str,
  analysisId: Str,
  kind: Type.Union(PROPOSAL_KINDS.map((k) => Type.Literal(k))),
  target: Type.Object({
    type: Type.Union([Type.Literal("file"), Type.Literal("folder"), Type.Literal("workspace")]),
    id: Nullable(Str),
  }),
  proposed: OpenObject,
  current: OpenObject,
  reason: Str,
  status: Type.Union([Type.Literal("pending"), Type.Literal("accepted"), Type.Literal("rejected")]),
  baseEtag: Nullable(
    Type.String({ description: "The entity tag (or folder revision) the proposal was made from." }),
  ),
  createdAt: DateTime,
  reviewedAt: Nullable(DateTime),
  reviewedBy: Nullable(Str),
});

export const AnalysisResult = Type.Object({
  analysisId: Str,
  summary: Str,
  proposals: Type.Array(Proposal),
  droppedProposals: Type.Integer({
    description: "Model proposals dropped (outside the schema or naming what you may not change).",
  }),
  provider: ProviderReport,
  sentNotes: SentNotes,
  usage: Usage,
  quota: Quota,
});

export const ProposalList = Type.Object({ proposals: Type.Array(Proposal) });

const Applied = Nullable(OpenObject);

export const ReviewResult = Type.Object({ proposal: Proposal, applied: Applied });

export const ReviewManyResult = Type.Object({
  results: Type.Array(
    Type.Object({
      id: Str,
      status: Type.Union([Type.Literal("accepted"), Type.Literal("rejected"), Type.Literal("failed")]),
      proposal: Nullable(Proposal),
      applied: Applied,
      error: Nullable(Type.Object({ code: Str, message: Str, resolution: Str, status: Int })),
    }),
  ),
  summary: Type.Object({ accepted: Int, rejected: Int, failed: Int }),
});

export const FolderAiSetting = Type.Object({
  folderId: Str,
  excluded: Type.Boolean({ description: "The folder's own setting." }),
  effective: Type.Boolean({ description: "Excluded by itself or by a folder above it." }),
});

export const SearchResult = Type.Object({
  query: Str,
  terms: Type.Array(Str),
  results: Type.Array(
    Type.Object({
      file: TxtFileSchema,
      score: Type.Number({ description: "Relevance, higher is better (bm25 / ts_rank)." }),
      snippet: Type.String({ description: "A passage with matches in [brackets]." }),
    }),
  ),
});

export const TranscriptionRecord = Type.Object({
  id: Str,
  status: Type.Union([Type.Literal("completed"), Type.Literal("failed")]),
  sourceType: Type.Union([Type.Literal("audio"), Type.Literal("image")]),
  mediaType: Str,
  size: Int,
  model: Nullable(Str),
  fileId: Nullable(Str),
  createdAt: DateTime,
  completedAt: Nullable(DateTime),
});

export const TranscriptionCreated = Type.Object({
  transcription: TranscriptionRecord,
  file: TxtFileDetailSchema,
  provider: ProviderReport,
  sentNotes: SentNotes,
  usage: Usage,
  quota: Quota,
});

export const TranscriptionList = Type.Object({ transcriptions: Type.Array(TranscriptionRecord) });

const ArtifactFields = {
  id: Str,
  kind: ARTIFACT_KIND,
  title: Str,
  mediaType: Str,
  model: Nullable(Str),
  sourceIds: Type.Array(Str),
  fileId: Nullable(Str),
  createdAt: DateTime,
};

export const ArtifactRecord = Type.Object({ ...ArtifactFields, content: Str });
export const ArtifactList = Type.Object({ artifacts: Type.Array(Type.Object(ArtifactFields)) });

export const ArtifactCreated = Type.Object({
  artifact: ArtifactRecord,
  file: Nullable(TxtFileDetailSchema),
  provider: Nullable(ProviderReport),
  sentNotes: SentNotes,
  usage: Usage,
  quota: Nullable(Quota),
});

export const ArtifactModels = Type.Object({
  kinds: Type.Array(
    Type.Object({
      kind: ARTIFACT_KIND,
      mediaType: Str,
      description: Str,
      needsModel: Type.Boolean(),
      available: Type.Boolean(),
    }),
  ),
  canRender: Type.Boolean(),
  reason: Nullable(Str),
  provider: Nullable(
    Type.Object({
      source: Nullable(Type.Union([Type.Literal("user"), Type.Literal("operator")])),
      host: Str,
      chatModel: Str,
    }),
  ),
  models: Type.Array(
    Type.Object({ id: Str, ownedBy: Nullable(Str), kinds: Type.Array(Str), default: Type.Boolean() }),
  ),
  modelsError: Nullable(Str),
});

/** The spec's error body, for the statuses each route documents. */
export const ErrorBody = Type.Object({
  error: Type.Object({
    code: Str,
    message: Str,
    resolution: Str,
    requestId: Str,
    details: Type.Optional(Type.Unknown()),
  }),
});

/** `responses(200, Schema, 402, 429)` -> a Fastify response map with the error body for each status. */
export function responses(ok: number, schema: TSchema, ...errors: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = { [ok]: schema };
  for (const s of [400, 401, 403, ...errors]) out[s] = ErrorBody;
  return out;
}
