// The one interface the context brain talks to a model through. Its only implementation speaks the
// OpenAI-compatible HTTP API (openaiProvider.ts) that hosted and local servers share; nothing else in
// the brain knows about HTTP, keys or base URLs.

/** A JSON Schema the model's answer must satisfy (sent as structured output, checked again here). */
export interface OutputSchema {
  name: string;
  schema: Record<string, unknown>;
}

export interface ChatRequest {
  /** The task, and the rule that everything in the data part is quoted, untrusted data. */
  system: string;
  /** The data (notes as JSON) and the user's request. */
  user: string;
  /** Images sent with the request (image input), as data URLs. */
  images?: readonly { mediaType: string; data: Buffer }[];
  output: OutputSchema;
  /** Overrides the provider's chat model (image input may use another). */
  model?: string;
}

export interface Usage {
  /** Prompt plus completion tokens, as the provider reports them (0 when it does not). */
  tokens: number;
}

export interface ChatAnswer {
  /** The parsed JSON answer: not yet validated (the caller checks it against its schema). */
  value: unknown;
  model: string;
  usage: Usage;
}

export interface EmbeddingAnswer {
  vectors: number[][];
  model: string;
  usage: Usage;
}

export interface TranscriptionAnswer {
  text: string;
  model: string;
}

export interface ModelInfo {
  id: string;
  ownedBy: string | null;
}

export interface AiProvider {
  /** The provider's host (for messages: never its key). */
  readonly host: string;
  readonly chatModel: string;
  readonly embeddingModel: string | null;
  readonly transcriptionModel: string | null;
  chat(req: ChatRequest): Promise<ChatAnswer>;
  embed(texts: readonly string[]): Promise<EmbeddingAnswer>;
  transcribe(audio: { data: Buffer; mediaType: string; fileName: string }): Promise<TranscriptionAnswer>;
  models(): Promise<ModelInfo[]>;
}

/** A provider call that failed: rate limited by the provider, or it failed, timed out, or was refused. */
export class ProviderError extends Error {
  readonly kind: "rate_limited" | "failed" | "timeout" | "blocked" | "invalid_output";
  readonly host: string;
  readonly status: number | null;
  readonly retryAfterSeconds: number | null;

  constructor(
    kind: ProviderError["kind"],
    host: string,
    message: string,
    opts: { status?: number | null; retryAfterSeconds?: number | null } = {},
  ) {
    super(message);
    this.name = "ProviderError";
    this.kind = kind;
    this.host = host;
    this.status = opts.status ?? null;
    this.retryAfterSeconds = opts.retryAfterSeconds ?? null;
  }
}
