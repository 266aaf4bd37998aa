// Request schemas (TypeBox): types, required fields, enumerations, no unknown fields. Limits
// (lengths, counts, name rules) live in domain/limits.ts so batch and import apply them too.
import { Type } from "typebox";

/**
 * Every integer a request carries fits the stores' 64-bit integer columns and stays exact in
 * JavaScript: `1e308` or `99999999999999999999` is a 400 naming the field, never a store error.
 */
export const MAX_INTEGER = Number.MAX_SAFE_INTEGER;

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const FileType = Type.Union([Type.Literal("txt"), Type.Literal("md")]);
export const Availability = Type.Union([Type.Literal("cloud"), Type.Literal("cloud+local")]);
const Tags = Type.Array(Type.String());
/** A folder id, or null for the root. An empty string is neither: it is rejected, not read as the root. */
const FolderRef = Nullable(Type.String({ minLength: 1 }));

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const FileCreateBody = Type.Object(
  {
    name: Type.String(),
    content: Type.Optional(Type.String()),
    context: Type.Optional(Type.String()),
    tags: Type.Optional(Tags),
    fileType: Type.Optional(FileType),
    availability: Type.Optional(Availability),
    folderId: Type.Optional(FolderRef),
  },
  { additionalProperties: false },
);

export const FileUpdateBody = Type.Object(
  {
    content: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    context: Type.Optional(Type.String()),
    tags: Type.Optional(Tags),
    fileType: Type.Optional(FileType),
    availability: Type.Optional(Availability),
    folderId: Type.Optional(FolderRef),
  },
  { additionalProperties: false },
);

export const PlanBody = Type.Object(
  {
    enabled: Type.Boolean(),
    scope: Type.Union([Type.Literal("manual"), Type.Literal("project"), Type.Literal("global")]),
    trust: Type.Union([Type.Literal("unreviewed"), Type.Literal("approved")]),
    source: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const ConnectBody = Type.Object(
  { targetFileId: Type.String({ minLength: 1 }), reason: Type.Optional(Type.String()) },
  { additionalProperties: false },
);

export const DisconnectQuery = Type.Object({ targetFileId: Type.String({ minLength: 1 }) });

export const FolderCreateBody = Type.Object(
  {
    name: Type.String(),
    context: Type.Optional(Type.String()),
    tags: Type.Optional(Tags),
    parentFolderId: Type.Optional(FolderRef),
  },
  { additionalProperties: false },
);

export const FolderUpdateBody = Type.Object(
  {
    name: Type.Optional(Type.String()),
    context: Type.Optional(Type.String()),
    tags: Type.Optional(Tags),
    parentFolderId: Type.Optional(FolderRef),
  },
  { additionalProperties: false },
);

export const Limit = Type.Integer({ minimum: 1, maximum: 1000 });

export const ListQuery = Type.Object({
  limit: Type.Optional(Limit),
  cursor: Type.Optional(Type.String()),
  folderId: Type.Optional(Type.String({ minLength: 1 })),
});

export const UploadQuery = Type.Object({
  name: Type.String(),
  folderId: Type.Optional(Type.String({ minLength: 1 })),
  context: Type.Optional(Type.String()),
  tags: Type.Optional(Type.String({ description: "comma-separated" })),
});

export const ImportBody = Type.Object(
  {
    files: Type.Array(
      Type.Object(
        {
          path: Type.String(),
          content: Type.Optional(Type.String()),
          context: Type.Optional(Type.String()),
          tags: Type.Optional(Tags),
          fileType: Type.Optional(FileType),
        },
        { additionalProperties: false },
      ),
    ),
    folderId: Type.Optional(FolderRef),
    onExisting: Type.Optional(
      Type.Union([Type.Literal("update"), Type.Literal("skip"), Type.Literal("copy"), Type.Literal("fail")]),
    ),
  },
  { additionalProperties: false },
);

export const ChangesQuery = Type.Object({
  cursor: Type.Optional(Type.String()),
  limit: Type.Optional(Limit),
  wait: Type.Optional(Type.Integer({ minimum: 0, maximum: 60 })),
  include: Type.Optional(
    Type.Literal("attachments", {
      description: "Also the `attachment` records (an extension of the spec; left out unless asked).",
    }),
  ),
});

const ShareRole = Type.Union([Type.Literal("writer"), Type.Literal("reader")]);
const Expiry = Type.Optional(Nullable(Type.String()));

export const ShareCreateBody = Type.Object(
  {
    fileId: Type.Optional(Type.String({ minLength: 1 })),
    folderId: Type.Optional(Type.String({ minLength: 1 })),
    email: Type.String(),
    role: ShareRole,
    expiresAt: Expiry,
  },
  { additionalProperties: false },
);

export const FolderShareBody = Type.Object(
  { email: Type.String(), role: ShareRole, expiresAt: Expiry },
  { additionalProperties: false },
);

export const ShareUpdateBody = Type.Object(
  { role: Type.Optional(ShareRole), expiresAt: Expiry },
  { additionalProperties: false, minProperties: 1 },
);

export const ShareListQuery = Type.Object({
  fileId: Type.Optional(Type.String({ minLength: 1 })),
  folderId: Type.Optional(Type.String({ minLength: 1 })),
  direction: Type.Optional(Type.Union([Type.Literal("granted"), Type.Literal("received")])),
});

export const VersionParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  version: Type.String({ minLength: 1, maxLength: 12 }),
});

export const VersionListQuery = Type.Object({
  limit: Type.Optional(Limit),
  before: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_INTEGER })),
});

export const CommitBody = Type.Object(
  { label: Type.String(), versionNumber: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_INTEGER })) },
  { additionalProperties: false },
);

export const ItemParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  itemId: Type.String({ minLength: 1, maxLength: 64 }),
});

const Offset = Type.Integer({ minimum: 0, maximum: MAX_INTEGER });

export const CommentCreateBody = Type.Object(
  {
    body: Type.String(),
    selection_start: Type.Optional(Nullable(Offset)),
    selection_end: Type.Optional(Nullable(Offset)),
    selected_text: Type.Optional(Nullable(Type.String())),
  },
  { additionalProperties: false },
);

export const CommentUpdateBody = Type.Object(
  { body: Type.Optional(Type.String()), resolved: Type.Optional(Type.Boolean()) },
  { additionalProperties: false, minProperties: 1 },
);

export const CommentListQuery = Type.Object({
  resolved: Type.Optional(Type.Union([Type.Literal("true"), Type.Literal("false")])),
});

export const SuggestionCreateBody = Type.Object(
  {
    selection_start: Offset,
    selection_end: Offset,
    suggested_text: Type.String(),
    original_text: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const SuggestionListQuery = Type.Object({
  status: Type.Optional(
    Type.Union([Type.Literal("pending"), Type.Literal("accepted"), Type.Literal("rejected")]),
  ),
});

export const SuggestionUpdateBody = Type.Object(
  { status: Type.Union([Type.Literal("accepted"), Type.Literal("rejected")]) },
  { additionalProperties: false },
);

export const TempUrlBody = Type.Object(
  { expiresIn: Type.Optional(Type.Integer({ minimum: -MAX_INTEGER, maximum: MAX_INTEGER })) },
  { additionalProperties: false },
);

export const TokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 128 }) });

export const ThemeQuery = Type.Object({
  fileId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  folderId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  groupId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
});

export const ThemeBody = Type.Object(
  {
    themeId: Type.String(),
    overrides: Type.Optional(Type.Unknown()),
    revision: Type.Integer({ minimum: 0, maximum: MAX_INTEGER }),
  },
  { additionalProperties: false },
);
