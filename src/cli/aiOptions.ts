// The --ai-* options: the OpenAI-compatible provider the service's brain calls. `txtfs serve` takes
// them for its operator's provider; `txtfs mount --serve` for the service it runs in-process.
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import type { BrainConfig } from "../server/domain/brain/config.ts";
import { parsePositiveInt, UsageError } from "./options.ts";

export interface AiFlags {
  aiBaseUrl?: string;
  aiModel?: string;
  aiEmbeddingModel?: string;
  aiTranscriptionModel?: string;
  aiKeyFile?: string;
  aiRequestsPerDay?: number;
  aiTokensPerDay?: number;
  aiTimeout?: number;
  aiAllowPrivate?: boolean;
}

/** The provider's options (defaults from TXTFS_AI_*); `quotas` adds the operator's limits. */
export function addAiOptions(command: Command, opts: { quotas: boolean }): Command {
  command
    .option(
      "--ai-base-url <url>",
      "the OpenAI-compatible AI server the brain calls (OpenAI, Ollama, llama.cpp, vLLM, LM Studio, LiteLLM), e.g. http://127.0.0.1:11434/v1",
      process.env.TXTFS_AI_BASE_URL,
    )
    .option("--ai-model <name>", "its chat model (structured output)", process.env.TXTFS_AI_MODEL)
    .option(
      "--ai-embedding-model <name>",
      "its embedding model (semantic related notes)",
      process.env.TXTFS_AI_EMBEDDING_MODEL,
    )
    .option(
      "--ai-transcription-model <name>",
      "its audio transcription model (voice memos)",
      process.env.TXTFS_AI_TRANSCRIPTION_MODEL,
    )
    .option(
      "--ai-key-file <file>",
      "file holding its API key (or TXTFS_AI_API_KEY)",
      process.env.TXTFS_AI_KEY_FILE,
    );
  if (!opts.quotas) return command;
  return command
    .option(
      "--ai-requests-per-day <n>",
      "AI requests per account and UTC day",
      parsePositiveInt,
      process.env.TXTFS_AI_REQUESTS_PER_DAY ? Number(process.env.TXTFS_AI_REQUESTS_PER_DAY) : undefined,
    )
    .option(
      "--ai-tokens-per-day <n>",
      "AI tokens per account and UTC day",
      parsePositiveInt,
      process.env.TXTFS_AI_TOKENS_PER_DAY ? Number(process.env.TXTFS_AI_TOKENS_PER_DAY) : undefined,
    )
    .option("--ai-timeout <seconds>", "deadline of one AI provider call, retries included", parsePositiveInt)
    .option(
      "--ai-allow-private",
      "let users' own AI servers be on private addresses although serving beyond loopback",
    );
}

/** Whether a provider option was typed (a TXTFS_AI_* variable alone is no request for it). */
export function aiOptionsTyped(command: Command): boolean {
  return ["aiBaseUrl", "aiModel", "aiEmbeddingModel", "aiTranscriptionModel", "aiKeyFile"].some(
    (name) => command.getOptionValueSource(name) === "cli",
  );
}

/** The brain's settings from the options; the key from a file or TXTFS_AI_API_KEY. Checked first. */
export function brainOptions(opts: AiFlags): Partial<BrainConfig> {
  const out: Partial<BrainConfig> = {};
  if (opts.aiBaseUrl && !opts.aiModel) throw new UsageError("--ai-base-url needs --ai-model");
  if (opts.aiBaseUrl) {
    try {
      new URL(opts.aiBaseUrl);
    } catch {
      throw new UsageError(`--ai-base-url ${opts.aiBaseUrl} is not a URL`);
    }
    let key = process.env.TXTFS_AI_API_KEY ?? "";
    if (opts.aiKeyFile) {
      try {
        key = readFileSync(opts.aiKeyFile, "utf8").trim();
      } catch (err) {
        throw new UsageError(
          `--ai-key-file ${opts.aiKeyFile}: ${(err as NodeJS.ErrnoException).code ?? "unreadable"}`,
        );
      }
    }
    out.operator = {
      baseUrl: opts.aiBaseUrl.replace(/\/$/, ""),
      // Local servers (Ollama, llama.cpp) take any key; the client needs one to send.
      apiKey: key || "none",
      chatModel: opts.aiModel!,
      embeddingModel: opts.aiEmbeddingModel ?? null,
      transcriptionModel: opts.aiTranscriptionModel ?? null,
    };
  }
  if (opts.aiRequestsPerDay) out.requestsPerDay = opts.aiRequestsPerDay;
  if (opts.aiTokensPerDay) out.tokensPerDay = opts.aiTokensPerDay;
  if (opts.aiTimeout) out.deadlineMs = opts.aiTimeout * 1000;
  if (opts.aiAllowPrivate) out.allowPrivateUserUrls = true;
  return out;
}
