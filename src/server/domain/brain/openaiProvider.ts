// The AI provider over the OpenAI-compatible HTTP API (OpenAI, Ollama, llama.cpp's server, vLLM,
// LM Studio, LiteLLM): chat completions with JSON-schema output and image input, embeddings, audio
// transcriptions and the model list, through the maintained `openai` client with a base URL.
import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  toFile,
} from "openai";
import { type GuardedFetch, guardedFetch, OutboundBlocked, type OutboundPolicy } from "./outbound.ts";
import {
  type AiProvider,
  type ChatAnswer,
  type ChatRequest,
  type EmbeddingAnswer,
  type ModelInfo,
  ProviderError,
  type TranscriptionAnswer,
} from "./provider.ts";

export interface OpenAiProviderConfig {
  baseUrl: string;
  apiKey: string;
  chatModel: string;
  embeddingModel?: string | null;
  transcriptionModel?: string | null;
  /** Whole-call deadline in ms, retries included. */
  deadlineMs: number;
  policy: OutboundPolicy;
}

/** Retry-After of a provider's 429: `retry-after-ms`, `retry-after` seconds or an HTTP date. */
function retryAfterOf(headers: Headers | undefined): number | null {
  const ms = Number(headers?.get("retry-after-ms"));
  if (Number.isFinite(ms) && ms > 0) return Math.ceil(ms / 1000);
  const raw = headers?.get("retry-after");
  if (!raw) return null;
  const s = Number(raw);
  if (Number.isFinite(s)) return Math.max(1, Math.ceil(s));
  const at = Date.parse(raw);
  return Number.isNaN(at) ? null : Math.max(1, Math.ceil((at - Date.now()) / 1000));
}

function causeChain(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e = err; e && out.length < 6; e = (e as { cause?: unknown }).cause) out.push(e);
  return out;
}

export class OpenAiProvider implements AiProvider {
  readonly host: string;
  readonly chatModel: string;
  readonly embeddingModel: string | null;
  readonly transcriptionModel: string | null;
  private readonly client: OpenAI;
  private readonly transport: GuardedFetch;
  private readonly deadlineMs: number;

  constructor(cfg: OpenAiProviderConfig) {
    this.host = new URL(cfg.baseUrl).host;
    this.chatModel = cfg.chatModel;
    this.embeddingModel = cfg.embeddingModel ?? null;
    this.transcriptionModel = cfg.transcriptionModel ?? null;
    this.deadlineMs = cfg.deadlineMs;
    this.transport = guardedFetch(cfg.policy);
    this.client = new OpenAI({
      baseURL: cfg.baseUrl,
      apiKey: cfg.apiKey,
      timeout: cfg.deadlineMs,
      maxRetries: 2,
      fetch: this.transport.fetch,
      // Never reads OPENAI_* environment variables behind the operator's back: everything is given.
      organization: null,
      project: null,
      // The client's own console logging stays off: failures are logged here, by host and status.
      logLevel: "off",
    });
  }

  /** Runs one call under the whole-call deadline and turns every failure into a ProviderError. */
  private async call<T>(what: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const signal = AbortSignal.timeout(this.deadlineMs);
    try {
      return await fn(signal);
    } catch (err) {
      throw this.translate(what, err, signal.aborted);
    }
  }

  private translate(what: string, err: unknown, deadlinePassed: boolean): ProviderError {
    if (err instanceof ProviderError) return err;
    const blocked = causeChain(err).find((e) => e instanceof OutboundBlocked) as OutboundBlocked | undefined;
    if (blocked)
      return new ProviderError("blocked", this.host, `refused to call ${this.host}: ${blocked.message}`);
    if (err instanceof APIConnectionTimeoutError || err instanceof APIUserAbortError || deadlinePassed) {
      return new ProviderError(
        "timeout",
        this.host,
        `${what} at ${this.host} did not answer within ${this.deadlineMs} ms`,
      );
    }
    if (err instanceof APIError && err.status === 429) {
      return new ProviderError("rate_limited", this.host, `${this.host} is rate limiting ${what}`, {
        status: 429,
        retryAfterSeconds: retryAfterOf(err.headers),
      });
    }
    if (err instanceof APIError && typeof err.status === "number") {
      return new ProviderError(
        "failed",
        this.host,
        `${what} at ${this.host} failed with HTTP ${err.status}`,
        {
          status: err.status,
        },
      );
    }
    if (err instanceof APIConnectionError) {
      return new ProviderError("failed", this.host, `${this.host} could not be reached for ${what}`);
    }
    return new ProviderError(
      "failed",
      this.host,
      `${what} at ${this.host} failed: ${(err as Error)?.message ?? err}`,
    );
  }

  async chat(req: ChatRequest): Promise<ChatAnswer> {
    const model = req.model ?? this.chatModel;
    const completion = await this.call("chat completion", (signal) =>
      this.client.chat.completions.create(
        {
          model,
          messages: [
            { role: "system", content: req.system },
            {
              role: "user",
              content: [
                { type: "text", text: req.user },
                ...(req.images ?? []).map((img) => ({
                  type: "image_url" as const,
                  image_url: { url: `data:${img.mediaType};base64,${img.data.toString("base64")}` },
                })),
              ],
            },
          ],
          response_format: {
            type: "json_schema",
            json_schema: { name: req.output.name, schema: req.output.schema, strict: true },
          },
        },
        { signal },
      ),
    );
    const text = completion.choices?.[0]?.message?.content;
    if (typeof text !== "string") {
      throw new ProviderError("invalid_output", this.host, `${this.host} answered without content`);
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new ProviderError(
        "invalid_output",
        this.host,
        `${this.host} answered with text that is not JSON`,
      );
    }
    return {
      value,
      model: completion.model || model,
      usage: { tokens: completion.usage?.total_tokens ?? 0 },
    };
  }

  async embed(texts: readonly string[]): Promise<EmbeddingAnswer> {
    const model = this.embeddingModel;
    if (!model) throw new ProviderError("failed", this.host, "no embedding model is configured");
    const res = await this.call("embeddings", (signal) =>
      this.client.embeddings.create({ model, input: [...texts], encoding_format: "float" }, { signal }),
    );
    const vectors = [...res.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
    if (vectors.length !== texts.length || vectors.some((v) => !Array.isArray(v) || v.length === 0)) {
      throw new ProviderError("invalid_output", this.host, `${this.host} answered with malformed embeddings`);
    }
    return { vectors, model: res.model || model, usage: { tokens: res.usage?.total_tokens ?? 0 } };
  }

  async transcribe(audio: {
    data: Buffer;
    mediaType: string;
    fileName: string;
  }): Promise<TranscriptionAnswer> {
    const model = this.transcriptionModel;
    if (!model) throw new ProviderError("failed", this.host, "no transcription model is configured");
    const file = await toFile(audio.data, audio.fileName, { type: audio.mediaType });
    const res = await this.call("audio transcription", (signal) =>
      this.client.audio.transcriptions.create({ file, model, response_format: "json" }, { signal }),
    );
    const text = (res as { text?: unknown }).text;
    if (typeof text !== "string") {
      throw new ProviderError("invalid_output", this.host, `${this.host} answered without a transcript`);
    }
    return { text, model };
  }

  async models(): Promise<ModelInfo[]> {
    return this.call("the model list", async (signal) => {
      const out: ModelInfo[] = [];
      for await (const m of this.client.models.list({ signal })) {
        out.push({ id: m.id, ownedBy: m.owned_by ?? null });
        if (out.length >= 500) break;
      }
      return out;
    });
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}
