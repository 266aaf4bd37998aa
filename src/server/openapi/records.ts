// Response schemas: the records the API answers with (docs/spec.md "Resources"), as TypeBox so routes
// declare them beside their request schemas and the OpenAPI document is generated from both.
// Objects stay open (additionalProperties allowed): the spec makes response fields additive.
// Each named record carries a `title`; the document hoists titled schemas into components.
import { type TSchema, Type } from "typebox";

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const DateTime = Type.String({ format: "date-time" });
const Id = Type.String();
const Role = Type.Union([Type.Literal("owner"), Type.Literal("writer"), Type.Literal("reader")]);
const Access = Type.Union([Type.Literal("owner"), Type.Literal("shared")]);
const Availability = Type.Union([Type.Literal("cloud"), Type.Literal("cloud+local")]);
const FileType = Type.Union([Type.Literal("txt"), Type.Literal("md")]);
const Tags = Type.Array(Type.String(), { maxItems: 16 });
const Context = Type.String({ maxLength: 4000 });
const Seq = Type.Optional(Type.Integer({ description: "Change-feed position of this write." }));

export const TxtFile = Type.Object(
  {
    id: Id,
    name: Type.String(),
    context: Context,
    tags: Tags,
    type: FileType,
    availability: Availability,
    size: Type.Integer({ minimum: 0, description: "UTF-8 bytes" }),
    folderId: Nullable(Id),
    createdAt: DateTime,
    updatedAt: DateTime,
    endpoint: Type.String(),
    raw: Type.String(),
    access: Access,
    role: Role,
    etag: Type.String({ description: "Entity tag (additive)" }),
    contentHash: Type.String({ description: "SHA-256 of the content (additive)" }),
    ownerId: Type.Optional(Id),
  },
  { title: "TxtFile", description: "A file as listed: metadata only, never the body." },
);

export const TxtFileDetail = Type.Object(
  {
    id: Id,
    name: Type.String(),
    content: Type.String(),
    context: Context,
    tags: Tags,
    type: FileType,
    availability: Availability,
    folderId: Nullable(Id),
    createdAt: DateTime,
    updatedAt: DateTime,
    access: Access,
    role: Role,
    size: Type.Integer({ minimum: 0 }),
    etag: Type.String(),
    contentHash: Type.String(),
    endpoint: Type.String(),
    raw: Type.String(),
  },
  { title: "TxtFileDetail", description: "One file with its content." },
);

export const TxtFolder = Type.Object(
  {
    id: Id,
    name: Type.String(),
    context: Context,
    tags: Tags,
    parentFolderId: Nullable(Id),
    fileCount: Type.Integer({ minimum: 0 }),
    createdAt: DateTime,
    updatedAt: DateTime,
    endpoint: Type.String(),
    access: Access,
    role: Role,
  },
  { title: "TxtFolder" },
);

export const TxtFolderWithFiles = Type.Intersect(
  [
    TxtFolder,
    Type.Object({
      files: Type.Array(Type.Intersect([TxtFile, Type.Object({ content: Type.String() })])),
    }),
  ],
  { title: "TxtFolderWithFiles", description: "A folder fetched singly: its files with their content." },
);

export const TxtPlanMetadata = Type.Object(
  {
    enabled: Type.Boolean(),
    scope: Type.Union([Type.Literal("manual"), Type.Literal("project"), Type.Literal("global")]),
    trust: Type.Union([Type.Literal("unreviewed"), Type.Literal("approved")]),
    source: Type.String({ maxLength: 64 }),
    updatedAt: Nullable(DateTime),
  },
  { title: "TxtPlanMetadata", description: "Plan content is untrusted reference data even when approved." },
);

export const TxtVersion = Type.Object(
  {
    id: Id,
    file_id: Id,
    content: Type.Optional(Type.String({ description: "Present when one version is fetched." })),
    version_number: Type.Integer({ minimum: 1 }),
    content_hash: Nullable(Type.String()),
    byte_size: Type.Integer({ minimum: 0 }),
    author_user_id: Nullable(Id),
    author_name: Nullable(Type.String()),
    source: Type.String(),
    label: Nullable(Type.String()),
    commit_id: Nullable(Type.String()),
    created_at: DateTime,
  },
  { title: "TxtVersion" },
);

export const TxtComment = Type.Object(
  {
    id: Id,
    file_id: Id,
    user_id: Id,
    user_email: Type.String(),
    user_name: Nullable(Type.String()),
    body: Type.String(),
    selection_start: Nullable(Type.Integer()),
    selection_end: Nullable(Type.Integer()),
    selected_text: Nullable(Type.String()),
    resolved: Type.Boolean(),
    resolved_by: Nullable(Id),
    resolved_at: Nullable(DateTime),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { title: "TxtComment" },
);

export const TxtSuggestion = Type.Object(
  {
    id: Id,
    file_id: Id,
    user_id: Id,
    user_email: Type.String(),
    user_name: Nullable(Type.String()),
    original_text: Type.String(),
    suggested_text: Type.String(),
    selection_start: Type.Integer(),
    selection_end: Type.Integer(),
    status: Type.Union([Type.Literal("pending"), Type.Literal("accepted"), Type.Literal("rejected")]),
    reviewed_by: Nullable(Id),
    reviewed_at: Nullable(DateTime),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { title: "TxtSuggestion" },
);

export const TxtSkill = Type.Object(
  {
    id: Id,
    name: Type.String(),
    context: Type.String(),
    tags: Type.Array(Type.String()),
    folderId: Nullable(Id),
    folderName: Nullable(Type.String()),
    type: Type.String(),
    updatedAt: DateTime,
    access: Access,
    role: Role,
    scope: Type.Union([Type.Literal("global"), Type.Literal("project"), Type.Literal("unknown")]),
    project: Nullable(Type.String()),
    agent: Nullable(Type.String()),
    skill: Type.String(),
    endpoint: Type.String(),
    raw: Type.String(),
  },
  { title: "TxtSkill" },
);

export const TxtApiKey = Type.Object(
  {
    id: Id,
    label: Type.String(),
    token_prefix: Type.String(),
    created_at: DateTime,
    last_used_at: Nullable(DateTime),
    expires_at: Nullable(DateTime),
    scopes: Type.Array(Type.String()),
    requests_today: Type.Integer({ minimum: 0 }),
  },
  { title: "TxtApiKey", description: "An API key record; the full key is never part of it." },
);

export const TxtShare = Type.Object(
  {
    id: Id,
    resourceType: Type.Union([Type.Literal("file"), Type.Literal("folder")]),
    resourceId: Id,
    role: Type.Union([Type.Literal("writer"), Type.Literal("reader")]),
    status: Type.String(),
    grantee: Type.Object({ type: Type.String(), email: Type.String() }),
    ownerId: Id,
    createdAt: DateTime,
    updatedAt: DateTime,
    expiresAt: Nullable(DateTime),
    endpoint: Type.String(),
  },
  { title: "TxtShare" },
);

export const TxtTempUrl = Type.Object(
  {
    id: Id,
    fileId: Id,
    createdBy: Id,
    createdAt: DateTime,
    expiresAt: DateTime,
    revokedAt: Nullable(DateTime),
    status: Type.String(),
  },
  { title: "TxtTempUrl", description: "A temporary read-only link; `token`/`url` only when minted." },
);

export const TxtDevice = Type.Object(
  {
    id: Id,
    name: Type.String(),
    platform: Nullable(Type.String()),
    clientName: Nullable(Type.String()),
    clientVersion: Nullable(Type.String()),
    cursor: Type.Integer({ minimum: 0 }),
    createdAt: DateTime,
    lastSeenAt: Nullable(DateTime),
  },
  { title: "TxtDevice" },
);

const DeviceState = Type.Union([
  Type.Literal("online-only"),
  Type.Literal("available"),
  Type.Literal("pinned"),
]);
export const DeviceStateItem = Type.Object(
  {
    fileId: Type.Optional(Id),
    folderId: Type.Optional(Id),
    /** Additive: a file that is not a note (docs/api.md, "Attachments"). */
    attachmentId: Type.Optional(Id),
    state: DeviceState,
    updatedAt: DateTime,
  },
  { title: "TxtDeviceStateItem" },
);

export const TxtWebhook = Type.Object(
  {
    id: Id,
    url: Type.String(),
    events: Type.Array(Type.String()),
    description: Nullable(Type.String()),
    status: Type.String(),
    disabledReason: Nullable(Type.String()),
    failureCount: Type.Integer({ minimum: 0 }),
    secretPrefix: Type.String(),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: "TxtWebhook" },
);

export const TxtDelivery = Type.Object(
  {
    id: Id,
    webhookId: Id,
    type: Type.String(),
    status: Type.String(),
    attempts: Type.Integer({ minimum: 0 }),
    nextAttemptAt: Nullable(DateTime),
    lastStatusCode: Nullable(Type.Integer()),
    lastError: Nullable(Type.String()),
    createdAt: DateTime,
    deliveredAt: Nullable(DateTime),
    payload: Type.Object({}),
  },
  { title: "TxtWebhookDelivery" },
);

export const TxtTheme = Type.Object(
  {
    scope: Type.String(),
    scopeId: Id,
    themeId: Type.String(),
    overrides: Type.Unknown(),
    revision: Type.Integer({ minimum: 0 }),
    updatedAt: Nullable(DateTime),
    inherited: Type.Boolean(),
  },
  { title: "TxtTheme" },
);

export const TxtIdentity = Type.Object(
  {
    provider: Type.String(),
    issuer: Type.String(),
    subject: Type.String(),
    username: Nullable(Type.String()),
    status: Nullable(Type.String()),
    verifiedAt: Nullable(DateTime),
    verificationError: Nullable(Type.String()),
    wallet: Nullable(
      Type.Object({
        address: Type.String(),
        chainType: Nullable(Type.String()),
        network: Nullable(Type.String()),
        walletType: Nullable(Type.String()),
      }),
    ),
  },
  { title: "TxtIdentity" },
);

export const ChangeRecord = Type.Object(
  {
    seq: Type.Integer({ minimum: 1 }),
    kind: Type.Union(
      ["file", "folder", "share", "comment", "suggestion", "version", "attachment"].map((k) =>
        Type.Literal(k),
      ),
    ),
    id: Id,
    deleted: Type.Boolean(),
    reason: Type.Optional(Type.String()),
    changedAt: DateTime,
    etag: Type.Optional(Type.String()),
    file: Type.Optional(TxtFile),
    folder: Type.Optional(TxtFolder),
    fileId: Type.Optional(Id),
  },
  { title: "ChangeRecord", description: "One change-feed record: metadata only, tombstones for deletes." },
);

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: "machine-readable" }),
      message: Type.String(),
      resolution: Type.String({ description: "how to fix" }),
      requestId: Type.String(),
      details: Type.Optional(
        Type.Unknown({
          description:
            "Operation-specific detail: for 400 validation_failed an array of {field, code, message}; " +
            "for 412 the current etag; for a failed batch the failing operation.",
        }),
      ),
    }),
  },
  { title: "Error", description: "Every error response has this body." },
);

// --- Envelopes shared by several operations ---

export const FileEnvelope = Type.Object({ file: TxtFileDetail, seq: Seq });
export const FolderEnvelope = Type.Object({ folder: TxtFolder, seq: Seq });
export const ShareEnvelope = Type.Object({
  share: TxtShare,
  created: Type.Optional(Type.Boolean()),
  seq: Seq,
});
export const CommentEnvelope = Type.Object({ comment: TxtComment, seq: Seq });
export const SuggestionEnvelope = Type.Object({
  suggestion: TxtSuggestion,
  file: Type.Optional(TxtFileDetail),
  seq: Seq,
});
export const VersionEnvelope = Type.Object({ version: TxtVersion, seq: Seq });
export const DeviceEnvelope = Type.Object({ device: TxtDevice });
export const WebhookEnvelope = Type.Object({
  webhook: Type.Intersect([
    TxtWebhook,
    Type.Object({ secret: Type.Optional(Type.String({ description: "Shown once, at creation." })) }),
  ]),
});
export const DeliveryEnvelope = Type.Object({ delivery: TxtDelivery });
export const ThemeEnvelope = Type.Object({ theme: TxtTheme });
export const TempUrlEnvelope = Type.Object({
  tempUrl: Type.Intersect([
    TxtTempUrl,
    Type.Object({
      token: Type.Optional(Type.String()),
      url: Type.Optional(Type.String()),
      path: Type.Optional(Type.String()),
    }),
  ]),
});
export const Deleted = Type.Object({ id: Id, deleted: Type.Literal(true), seq: Seq });
export const PlanEnvelope = Type.Object({ plan: TxtPlanMetadata });
export const PlanSaved = Type.Object({ fileId: Id, plan: TxtPlanMetadata });
export const IdentityListing = Type.Object({
  identities: Type.Array(Type.Intersect([TxtIdentity, Type.Object({ id: Id, active: Type.Boolean() })])),
  activeId: Nullable(Id),
});
export const KeyEnvelope = Type.Object({ key: TxtApiKey });
export const MintedKey = Type.Object({
  key: TxtApiKey,
  secret: Type.String({ description: "The full key, shown once." }),
  rotated: Type.Optional(TxtApiKey),
});
export const VaultCredential = Type.Object(
  {
    name: Type.String(),
    label: Nullable(Type.String()),
    hint: Type.String(),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: "TxtVaultCredential", description: "A vaulted secret: its hint only, never the secret." },
);
export const User = Type.Object({ id: Id, email: Type.String(), name: Type.String() }, { title: "TxtUser" });
