// The rules the service enforces, stated in the OpenAPI document so a client (or a fuzzer driven by
// the document) that follows it is never refused: lengths, patterns and counts of the fields the
// domain checks (domain/limits.ts: the request schemas keep only types, so batch and import share
// one set of checks), header formats, and — where JSON Schema cannot say it — `x-` extensions.
import { LIMITS } from "../domain/limits.ts";
import { TEMP_URL } from "../domain/tempUrls.ts";
import { THEME_LIMITS } from "../domain/themes.ts";
import { LABEL_MAX_CHARS } from "../domain/versions.ts";
import { EVENT_TYPES } from "../domain/webhooks.ts";
import { OP_BODIES } from "../routes/batchSchemas.ts";

// biome-ignore lint/suspicious/noExplicitAny: JSON Schema nodes are walked generically
type Json = Record<string, any>;

/** No NUL: every string but a note's content (NUL bytes are kept exactly in content). */
const NO_NUL = "^[^\\u0000]*$";
/** A path component: not empty, not `.` or `..`, no `/`, no NUL. */
const NAME = "^(?!\\.\\.?$)[^/\\u0000]+$";
/** A tag: no comma (the mount lists tags comma-separated), no control character, not only spaces. */
const TAG = "^[^,\\u0000-\\u001f\\u007f]*[^,\\s\\u0000-\\u001f\\u007f][^,\\u0000-\\u001f\\u007f]*$";

const CONTENT_FIELDS = new Set(["content", "file_text", "text", "suggested_text", "original_text"]);

/** Constraints by field name, for string fields (and `tags` arrays). */
const STRING_RULES: Record<string, Json> = {
  name: { minLength: 1, maxLength: LIMITS.nameBytes, pattern: NAME, "x-max-utf8-bytes": LIMITS.nameBytes },
  context: { maxLength: LIMITS.contextChars, pattern: NO_NUL },
  reason: { maxLength: LIMITS.reasonChars, pattern: NO_NUL },
  source: { maxLength: LIMITS.planSourceChars, pattern: NO_NUL },
  content: { "x-max-utf8-bytes": LIMITS.contentBytes },
  body: { minLength: 1, maxLength: 10_000, pattern: "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$" },
  targetFileId: { minLength: 1, pattern: NO_NUL, "x-not-self": "not the file in the path (400 otherwise)" },
  path: {
    minLength: 1,
    pattern: "^(?:(?!\\.\\.?/)[^/\\u0000]+/)*(?!\\.\\.?$)[^/\\u0000]+$",
    "x-max-utf8-bytes-per-segment": LIMITS.nameBytes,
  },
  label: { minLength: 1, maxLength: LABEL_MAX_CHARS, pattern: "^[^\\u0000]*\\S[^\\u0000]*$" },
  email: { format: "email", maxLength: 254 },
  themeId: { pattern: `^[A-Za-z0-9][A-Za-z0-9._-]{0,${THEME_LIMITS.idChars - 1}}$` },
  expiresAt: { format: "date-time", "x-within": "in the future, at most 366 days ahead" },
  url: {
    format: "uri",
    maxLength: 2000,
    pattern: "^https?://[^/@\\s]+(/\\S*)?$",
    "x-allowed-hosts":
      "loopback (localhost, 127.0.0.0/8, ::1) and the hosts the operator allows (--webhook-allow-host); another host is 400 webhook_destination_not_allowed",
  },
};

/** Bounds by field name, for integer fields the domain bounds. */
const INTEGER_RULES: Record<string, Json> = {
  expiresIn: { minimum: TEMP_URL.minSeconds, maximum: TEMP_URL.maxSeconds },
};

function constrainString(schema: Json, field: string): void {
  if (schema.enum || schema.const !== undefined || schema.pattern) return;
  const rule = STRING_RULES[field];
  if (rule) Object.assign(schema, rule);
  else if (!CONTENT_FIELDS.has(field)) schema.pattern = NO_NUL;
}

function isType(schema: Json, type: string): boolean {
  return schema.type === type || (Array.isArray(schema.type) && schema.type.includes(type));
}

/** Batch and sync operations that create, and so act on no `target`. */
const CREATES = new Set(["file.create", "folder.create"]);

/**
 * A batch or sync operation (`{op, body, ...}`): one variant per op, each with that op's body schema
 * and its own rules (a `target` unless it creates, `ifMatch`/`baseEtag` on file operations only).
 */
function perOperation(schema: Json): void {
  const tagField = schema.properties.ifMatch
    ? "ifMatch"
    : schema.properties.baseEtag
      ? "baseEtag"
      : undefined;
  schema.oneOf = Object.entries(OP_BODIES as Record<string, Json>).map(([op, body]) => {
    const variant: Json = {
      properties: { op: { const: op }, body: structuredClone(body) },
      required: ["op", ...(CREATES.has(op) ? [] : ["target"]), ...(body.required?.length ? ["body"] : [])],
    };
    if (tagField && (!op.startsWith("file.") || CREATES.has(op))) variant.not = { required: [tagField] };
    constrain(variant.properties.body);
    return variant;
  });
}

/** Walks a request schema, constraining each string by the name of the field that holds it. */
export function constrain(schema: Json | undefined, field = ""): void {
  if (!schema || typeof schema !== "object") return;
  if (field === "overrides" && Object.keys(schema).length === 0) {
    Object.assign(schema, {
      type: "object",
      maxProperties: THEME_LIMITS.overrideKeys,
      propertyNames: { minLength: 1, maxLength: THEME_LIMITS.keyChars },
      additionalProperties: {
        anyOf: [
          { type: "string", maxLength: THEME_LIMITS.valueChars },
          { type: "number" },
          { type: "boolean" },
          { type: "null" },
        ],
      },
      "x-max-json-bytes": THEME_LIMITS.overridesBytes,
    });
    return;
  }
  if (schema.properties?.ref && Object.keys(schema.properties).length === 1) {
    schema["x-ref"] = "the `id` of an earlier operation of the same request (400 otherwise)";
  }
  if (field === "selection_start" || field === "selection_end") {
    schema["x-range"] =
      "UTF-16 offsets into the note's current content: start <= end <= its length, both or neither, not inside a surrogate pair (400 invalid_range otherwise)";
  }
  if (field === "suggested_text") schema["x-differs"] = "from the selected text (400 otherwise)";
  if (field === "cursor") {
    // A position this server issued (nextCursor, cursor); 0 is the change feed's beginning.
    schema["x-opaque"] = true;
    schema.description ??=
      "An opaque cursor this server issued; never construct one (0 = the feed's beginning).";
  }
  if (schema.properties?.op?.anyOf && schema.properties?.body && !schema.oneOf) perOperation(schema);
  for (const key of ["anyOf", "oneOf", "allOf"]) for (const s of schema[key] ?? []) constrain(s, field);
  if (isType(schema, "string")) constrainString(schema, field);
  // A route whose schema bounds the field tighter than "any safe integer" (a sign-in link's
  // expiresIn, 1-60 s) keeps its own bounds; the rest get the domain's.
  const ownBound = schema.maximum !== undefined && schema.maximum < Number.MAX_SAFE_INTEGER;
  if (isType(schema, "integer") && INTEGER_RULES[field] && !ownBound)
    Object.assign(schema, INTEGER_RULES[field]);
  if (isType(schema, "array")) {
    // Lists the domain refuses empty: an import of no files, a webhook for no events.
    if ((field === "files" || field === "events") && !schema.minItems) schema.minItems = 1;
    if (field === "events" && schema.items && isType(schema.items, "string"))
      schema.items.enum = [...EVENT_TYPES, "file.*", "folder.*", "attachment.*", "*"];
    if (field === "tags") {
      schema.maxItems = LIMITS.tags;
      if (schema.items && isType(schema.items, "string"))
        Object.assign(schema.items, { minLength: 1, maxLength: LIMITS.tagChars, pattern: TAG });
    } else constrain(schema.items, field);
  }
  for (const [name, inner] of Object.entries<Json>(schema.properties ?? {})) constrain(inner, name);
  const props = schema.properties ?? {};
  // A selection has both ends or neither.
  if (props.selection_start && props.selection_end && !schema.required?.includes("selection_start"))
    schema.dependentRequired = {
      selection_start: ["selection_end"],
      selection_end: ["selection_start"],
      ...(props.selected_text ? { selected_text: ["selection_start", "selection_end"] } : {}),
    };
  // A share or a device state is of a file or of a folder: exactly one of the two.
  if (props.fileId && props.folderId && !schema.oneOf) {
    schema.oneOf = ["fileId", "folderId"].map((field) => ({
      required: [field],
      not: { required: [field === "fileId" ? "folderId" : "fileId"] },
    }));
  }
}

/** Query parameters of which at most one may be given, by operation (400 when several are). */
const EXCLUSIVE_QUERY: Record<string, string[]> = {
  getTheme: ["fileId", "folderId", "groupId"],
  theme: ["fileId", "folderId", "groupId"],
  saveTheme: ["fileId", "folderId", "groupId"],
  themeSave: ["fileId", "folderId", "groupId"],
  listShares: ["fileId", "folderId"],
  shares: ["fileId", "folderId"],
};

/** What the document says of one operation beyond its schemas. */
/** Operations whose body is a note's text, not JSON (the route parses it itself). */
const TEXT_BODY = new Set(["upload"]);

export function documentRules(op: Json): void {
  if (TEXT_BODY.has(op.operationId) && !op.requestBody) {
    const text = { schema: { type: "string", "x-max-utf8-bytes": LIMITS.contentBytes } };
    op.requestBody = {
      required: true,
      description: "The note's text (UTF-8).",
      content: {
        "text/plain": { ...text, example: "# Notes\n" },
        "text/markdown": { ...text, example: "# Notes\n" },
      },
    };
  }
  if (op["x-binary-body"] && !op.requestBody) {
    // An attachment's bytes: any Content-Type, taken as bytes (never parsed or decoded).
    op.requestBody = {
      required: false,
      description: "The file's bytes, exactly (an empty body is an empty file); any Content-Type.",
      content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } },
    };
  }
  const json = op.requestBody?.content?.["application/json"];
  if (json?.schema) {
    constrain(json.schema);
    json.example ??= exampleOf(json.schema);
  }
  for (const param of op.parameters ?? []) {
    param.schema ??= {};
    const schema: Json = param.schema;
    if (param.in === "header" && param.name === "Idempotency-Key") {
      Object.assign(schema, { minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]{1,255}$" });
    } else if (param.in === "path" && param.name === "version") {
      schema.pattern = "^[1-9][0-9]{0,9}$";
    } else if (param.in === "query" && param.name === "tags") {
      Object.assign(schema, { pattern: "^[^\\u0000-\\u001f\\u007f]*$" });
    } else if (param.in !== "header") {
      constrain(schema, param.name);
    }
  }
  for (const param of op.parameters ?? []) {
    if (param.required && param.example === undefined) param.example = exampleOf(param.schema, param.name);
  }
  const exclusive = EXCLUSIVE_QUERY[op.operationId];
  if (exclusive) op["x-mutually-exclusive-query"] = exclusive;
}

/** Rules of every request, stated once at the top of the document. */
export const REQUEST_RULES = {
  "text-fields":
    "Strings are UTF-8 text: no NUL character (except in a note's content, kept exactly) and no unpaired UTF-16 surrogate, in the body, the query and the path (400 validation_failed naming the field).",
  "json-depth": `A JSON body nests at most ${LIMITS.jsonDepth} levels of arrays/objects (400 json_too_deep).`,
  "unknown-query-parameters":
    "Ignored: a query parameter an operation does not list is accepted and has no effect (unknown body fields are refused).",
  "path-segments":
    "Ids in paths are 1-64 characters (400 beyond); a path segment longer than 100 characters is 414 uri_too_long.",
  cursors:
    "Cursors (list, changes) are opaque values this server issued; the change feed also accepts 0 (the beginning).",
  "mutually-exclusive-query":
    "x-mutually-exclusive-query on an operation names query parameters of which at most one may be given.",
  "x-max-utf8-bytes": "The most UTF-8 bytes a string may take (names 255, content 5 MiB: 413 beyond).",
};

/** A valid value for a field, by its name and schema: what the examples of the document hold. */
const SAMPLES: Record<string, unknown> = {
  name: "notes.md",
  path: "projects/notes.md",
  content: "# Notes\nFirst line.\n",
  context: "Research notes for the project.",
  tags: ["project"],
  reason: "same topic",
  source: "agent",
  label: "milestone",
  body: "Looks good.",
  suggested_text: "Hi",
  email: "friend@example.com",
  url: "http://127.0.0.1:9/hook",
  seed: "an idea to grow",
  prompt: "What is missing?",
  q: "notes",
  query: "notes",
  platform: "linux",
  role: "reader",
};

export function exampleOf(schema: Json | undefined, field = ""): unknown {
  if (!schema || typeof schema !== "object") return null;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.oneOf && schema.properties) {
    // Per-variant rules (a batch/sync operation, exactly one of two fields): the first variant's.
    const variant = schema.oneOf[0] as Json;
    return exampleOf(
      {
        type: "object",
        properties: { ...schema.properties, ...variant.properties },
        required: [...new Set([...(schema.required ?? []), ...(variant.required ?? [])])],
      },
      field,
    );
  }
  const options = schema.anyOf ?? schema.oneOf;
  if (options) {
    const pick = options.find((o: Json) => o.type === "null") ?? options[0];
    return exampleOf(pick, field);
  }
  if (field in SAMPLES && !isType(schema, "object") && !isType(schema, "integer")) return SAMPLES[field];
  if (isType(schema, "string")) return schema.format === "date-time" ? "2030-01-01T00:00:00.000Z" : "example";
  if (isType(schema, "integer") || isType(schema, "number")) return schema.minimum ?? 1;
  if (isType(schema, "boolean")) return true;
  if (isType(schema, "array")) return schema.minItems ? [exampleOf(schema.items, field)] : [];
  if (isType(schema, "object")) {
    const out: Json = {};
    for (const key of schema.required ?? []) out[key] = exampleOf(schema.properties?.[key], key);
    // A patch needs one field at least: its first.
    const first = Object.keys(schema.properties ?? {})[0];
    if (Object.keys(out).length < (schema.minProperties ?? 0) && first)
      out[first] = exampleOf(schema.properties[first], first);
    return out;
  }
  return null;
}
