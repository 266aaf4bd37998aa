// Schemas of batch and sync operations. Each operation's body is checked against the schema of its
// `op` (compiled once), so an error names the operation's field: `operations[2].body.name`.
import { type TSchema, Type } from "typebox";
import { Compile } from "typebox/compile";
import { BASE64_PATTERN } from "../domain/attachments/operations.ts";
import type { BatchOpName } from "../domain/batch.ts";
import { LIMITS } from "../domain/limits.ts";
import { toServiceError } from "../http/errors.ts";
import { Availability, FileType, MAX_INTEGER } from "./schemas.ts";

/** An attachment's bytes in JSON. */
const Base64 = Type.String({ contentEncoding: "base64", pattern: BASE64_PATTERN });

/** An id, or `{"ref": "<operation id>"}`: the item an earlier operation of the same request created. */
const IdOrRef = Type.Union([
  Type.String({ minLength: 1, maxLength: 64 }),
  Type.Object({ ref: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
]);
const FolderRef = Type.Union([IdOrRef, Type.Null()]);
const Tags = Type.Array(Type.String());
const Empty = Type.Object({}, { additionalProperties: false });

const fileFields = {
  content: Type.Optional(Type.String()),
  context: Type.Optional(Type.String()),
  tags: Type.Optional(Tags),
  fileType: Type.Optional(FileType),
  availability: Type.Optional(Availability),
  folderId: Type.Optional(FolderRef),
};
const folderFields = {
  context: Type.Optional(Type.String()),
  tags: Type.Optional(Tags),
  parentFolderId: Type.Optional(FolderRef),
};

export const OP_BODIES: Record<BatchOpName, TSchema> = {
  "file.create": Type.Object({ name: Type.String(), ...fileFields }, { additionalProperties: false }),
  "file.update": Type.Object(
    { name: Type.Optional(Type.String()), ...fileFields },
    { additionalProperties: false },
  ),
  // An extension of the spec: the bytes to add at the end of the file's current version.
  "file.append": Type.Object({ content: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
  "file.delete": Empty,
  "folder.create": Type.Object({ name: Type.String(), ...folderFields }, { additionalProperties: false }),
  "folder.update": Type.Object(
    { name: Type.Optional(Type.String()), ...folderFields },
    { additionalProperties: false },
  ),
  "folder.delete": Empty,
  "connection.create": Type.Object(
    { targetFileId: IdOrRef, reason: Type.Optional(Type.String()) },
    { additionalProperties: false },
  ),
  "connection.delete": Type.Object({ targetFileId: IdOrRef }, { additionalProperties: false }),
  // Attachments (an extension of the spec): their bytes as base64 in JSON.
  "attachment.create": Type.Object(
    {
      name: Type.String(),
      folderId: Type.Optional(FolderRef),
      contentBase64: Base64,
      onExisting: Type.Optional(Type.Union([Type.Literal("fail"), Type.Literal("replace")])),
    },
    { additionalProperties: false },
  ),
  "attachment.update": Type.Object(
    {
      name: Type.Optional(Type.String()),
      folderId: Type.Optional(FolderRef),
      contentBase64: Type.Optional(Base64),
    },
    { additionalProperties: false },
  ),
  "attachment.delete": Empty,
};

const OpName = Type.Union(Object.keys(OP_BODIES).map((k) => Type.Literal(k)));

export const BatchOperation = Type.Object(
  {
    id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    op: OpName,
    target: Type.Optional(IdOrRef),
    ifMatch: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    body: Type.Optional(Type.Object({})),
  },
  { additionalProperties: false },
);

export const BatchBody = Type.Object(
  {
    atomic: Type.Optional(Type.Boolean()),
    // The count limit is checked by the route (413, not 400), so the array is unbounded here.
    operations: Type.Array(BatchOperation, { minItems: 1 }),
  },
  { additionalProperties: false },
);

export const SyncPushItem = Type.Object(
  {
    id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    op: OpName,
    target: Type.Optional(IdOrRef),
    baseEtag: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    body: Type.Optional(Type.Object({})),
    onConflict: Type.Optional(Type.Union([Type.Literal("fail"), Type.Literal("copy")])),
  },
  { additionalProperties: false },
);

export const SyncBody = Type.Object(
  {
    deviceId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    cursor: Type.Union([
      Type.Integer({ minimum: 0, maximum: MAX_INTEGER }),
      Type.String({ minLength: 1, maxLength: 20 }),
    ]),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.pageMax })),
    push: Type.Optional(Type.Array(SyncPushItem)),
    include: Type.Optional(
      Type.Literal("attachments", { description: "Pull attachment records too (an extension of the spec)." }),
    ),
  },
  { additionalProperties: false },
);

const validators = Object.fromEntries(
  Object.entries(OP_BODIES).map(([op, schema]) => [op, Compile(schema)]),
) as Record<BatchOpName, ReturnType<typeof Compile>>;

/** Checks each operation's body against its op's schema; 400 naming `list[i].body.field` otherwise. */
export function checkOperationBodies(list: string, ops: readonly { op: BatchOpName; body?: object }[]) {
  const issues = ops.flatMap((o, i) => {
    const validator = validators[o.op];
    const body = o.body ?? {};
    if (validator.Check(body)) return [];
    return validator.Errors(body).map((e) => ({ ...e, instancePath: `/${list}/${i}/body${e.instancePath}` }));
  });
  if (issues.length === 0) return;
  throw toServiceError(
    Object.assign(new Error("invalid operation"), { validation: issues, validationContext: "body" }),
  );
}
