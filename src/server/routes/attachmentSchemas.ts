// Request and response shapes of the attachment routes (an extension of the spec).
import { Type } from "typebox";
import { CONTENT_TYPES } from "../domain/attachments/contentTypes.ts";
import { Limit } from "./schemas.ts";

const Id = Type.String({ minLength: 1, maxLength: 64 });

export const TxtAttachment = Type.Object(
  {
    id: Id,
    name: Type.String(),
    folderId: Type.Union([Id, Type.Null()]),
    contentType: Type.String({
      description: "From the name's extension; application/octet-stream otherwise.",
    }),
    size: Type.Integer({ minimum: 0 }),
    contentHash: Type.String({ description: "SHA-256 of the bytes, hex." }),
    etag: Type.String(),
    revision: Type.Integer({ minimum: 1 }),
    versionNumber: Type.Integer({ minimum: 1 }),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
    endpoint: Type.String(),
    raw: Type.String(),
    access: Type.Union([Type.Literal("owner"), Type.Literal("shared")]),
    role: Type.Union([Type.Literal("owner"), Type.Literal("writer"), Type.Literal("reader")]),
    ownerId: Type.String(),
  },
  {
    title: "TxtAttachment",
    description: "A file that is not a note (an extension of the spec): metadata only.",
  },
);

export const AttachmentEnvelope = Type.Object({
  attachment: TxtAttachment,
  seq: Type.Optional(Type.Integer()),
});

export const AttachmentPage = Type.Object({
  attachments: Type.Array(TxtAttachment),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
  hasMore: Type.Boolean(),
});

export const AttachmentDeleted = Type.Object({
  id: Type.String(),
  deleted: Type.Literal(true),
  seq: Type.Optional(Type.Integer()),
});

export const AttachmentVersions = Type.Object({
  attachmentId: Type.String(),
  currentVersion: Type.Integer(),
  versions: Type.Array(
    Type.Object({
      id: Type.String(),
      attachmentId: Type.String(),
      versionNumber: Type.Integer(),
      contentHash: Type.String(),
      byteSize: Type.Integer(),
      authorUserId: Type.Union([Type.String(), Type.Null()]),
      authorName: Type.Union([Type.String(), Type.Null()]),
      source: Type.String(),
      createdAt: Type.String({ format: "date-time" }),
      current: Type.Boolean(),
      raw: Type.String(),
    }),
  ),
});

export const AttachmentCreateQuery = Type.Object({
  name: Type.String({
    description: "The file's name (any extension; .md/.txt only for bytes that are not UTF-8).",
    example: "diagram.png",
  }),
  folderId: Type.Optional(Type.String({ minLength: 1 })),
  onExisting: Type.Optional(
    Type.Union([Type.Literal("fail"), Type.Literal("replace")], {
      description: "When the name is taken by an attachment: `fail` (409, default) or `replace` its content.",
    }),
  ),
});

export const AttachmentListQuery = Type.Object({
  limit: Type.Optional(Limit),
  cursor: Type.Optional(Type.String()),
  folderId: Type.Optional(Type.String({ minLength: 1, description: "A folder's id, or `root`." })),
});

export const AttachmentPatchBody = Type.Object(
  {
    name: Type.Optional(Type.String()),
    folderId: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Null()])),
  },
  { additionalProperties: false },
);

/** The bytes of an attachment as a response, in every type it may be served as. */
export const Bytes = (description: string) => ({
  description,
  content: Object.fromEntries(
    CONTENT_TYPES.map((t) => [t, { schema: { type: "string", format: "binary" } }]),
  ),
});
