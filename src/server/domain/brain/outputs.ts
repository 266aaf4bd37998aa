// The JSON schemas the model must answer in (sent as structured output) and the check of every
// answer against them: a provider that ignores the schema gets a 502, never a half-read answer.
import { type TSchema, Type } from "typebox";
import { Value } from "typebox/value";
import type { OutputSchema } from "./provider.ts";
import { ProviderError } from "./provider.ts";

const Str = Type.String();
const Nullable = (t: TSchema) => Type.Union([t, Type.Null()]);
const obj = (props: Record<string, TSchema>) => Type.Object(props, { additionalProperties: false });

export const ConnectionOut = obj({ fileId: Str, reason: Str });

export const IdeaOut = obj({
  title: Str,
  content: Str,
  context: Str,
  tags: Type.Array(Str),
  folder: obj({ existingFolderId: Nullable(Str), newFolderName: Nullable(Str) }),
  connections: Type.Array(ConnectionOut),
});

export const GrowOut = obj({ addition: Str, tags: Type.Array(Str), connections: Type.Array(ConnectionOut) });

export const PROPOSAL_KINDS = [
  "file_context",
  "file_tags",
  "folder_context",
  "move_file",
  "new_folder",
  "connect",
] as const;

export const ProposalOut = obj({
  kind: Type.Union(PROPOSAL_KINDS.map((k) => Type.Literal(k))),
  fileId: Nullable(Str),
  folderId: Nullable(Str),
  targetFileId: Nullable(Str),
  text: Nullable(Str),
  tags: Nullable(Type.Array(Str)),
  folderName: Nullable(Str),
  reason: Str,
});

/** The envelope is checked whole; each proposal alone, so one bad item drops only itself. */
export const AnalysisOut = obj({ summary: Str, proposals: Type.Array(ProposalOut) });
const AnalysisEnvelope = obj({ summary: Str, proposals: Type.Array(Type.Unknown()) });

export const TranscriptOut = obj({ title: Str, text: Str });

export const ArtifactOut = obj({
  title: Str,
  summary: Str,
  sections: Type.Array(obj({ heading: Str, points: Type.Array(Str) })),
});

export const outputSchema = (name: string, schema: TSchema): OutputSchema => ({
  name,
  schema: JSON.parse(JSON.stringify(schema)) as Record<string, unknown>,
});

export function checkOutput<T>(schema: TSchema, value: unknown, host: string): T {
  const envelope = schema === AnalysisOut ? AnalysisEnvelope : schema;
  if (!Value.Check(envelope, value)) {
    const first = [...Value.Errors(envelope, value)][0];
    throw new ProviderError(
      "invalid_output",
      host,
      `${host} answered outside the requested schema${first ? ` (${first.instancePath || "/"} ${first.message})` : ""}`,
    );
  }
  return value as T;
}

export const isProposalOut = (v: unknown): boolean => Value.Check(ProposalOut, v);
