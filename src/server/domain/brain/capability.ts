// Who serves an account's AI calls: the user's own vaulted key (always first), else the operator's
// provider for `pro` accounts. The answer also says why not, for `canExplore: false`.
import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import type { Tx } from "../../../store/store.ts";
import type { Sealer } from "../identities.ts";
import { openVaultSecret } from "../vault.ts";
import type { BrainConfig } from "./config.ts";
import type { OpenAiProvider } from "./openaiProvider.ts";
import type { AiProvider } from "./provider.ts";

export interface Capability {
  provider: AiProvider | null;
  /** `user`: the account's own key; `operator`: the server's provider (pro plan, or a personal service). */
  source: "user" | "operator" | null;
  plan: string;
  hasUserKey: boolean;
  operatorConfigured: boolean;
  /** Why there is no provider (null when there is one). */
  reason: string | null;
}

// The `openai` client is loaded on first use: commands that never call a model (admin, mount) do not
// pay for importing it.
let providerModule: Promise<typeof import("./openaiProvider.ts")> | undefined;
const loadProviderModule = () => {
  providerModule ??= import("./openaiProvider.ts");
  return providerModule;
};

export class ProviderPool {
  readonly config: BrainConfig;
  private operator: OpenAiProvider | null = null;
  // One client (and connection pool) per user key and server, so repeated calls reuse connections.
  private readonly users = new LRUCache<string, OpenAiProvider>({
    max: 200,
    dispose: (p) => void p.close(),
  });

  constructor(config: BrainConfig) {
    this.config = config;
  }

  private async operatorProvider(): Promise<OpenAiProvider | null> {
    const op = this.config.operator;
    if (!op) return null;
    const { OpenAiProvider } = await loadProviderModule();
    this.operator ??= new OpenAiProvider({
      baseUrl: op.baseUrl,
      apiKey: op.apiKey,
      chatModel: op.chatModel,
      embeddingModel: op.embeddingModel,
      transcriptionModel: op.transcriptionModel,
      deadlineMs: this.config.deadlineMs,
      // The operator chose this server: it may be on the operator's own network.
      policy: { allowPrivate: true, maxResponseBytes: this.config.maxResponseBytes },
    });
    return this.operator;
  }

  async capability(tx: Tx, userId: string, sealer: Sealer): Promise<Capability> {
    const user = await tx.users.byId(userId);
    const plan = user?.plan ?? "free";
    const vaulted = await openVaultSecret(tx, userId, "ai-key", sealer);
    const operator = await this.operatorProvider();
    const base = { plan, hasUserKey: Boolean(vaulted), operatorConfigured: Boolean(operator) };
    if (vaulted)
      return {
        ...base,
        provider: await this.userProvider(vaulted.secret, vaulted.options),
        source: "user",
        reason: null,
      };
    if (operator && (plan === "pro" || this.config.operatorServesEveryPlan))
      return { ...base, provider: operator, source: "operator", reason: null };
    const reason = operator
      ? `the ${plan} plan does not include the server's AI provider and no AI key of your own is saved`
      : "this server has no AI provider configured and no AI key of your own is saved";
    return { ...base, provider: null, source: null, reason };
  }

  private async userProvider(
    secret: string,
    options: { baseUrl?: string; model?: string },
  ): Promise<OpenAiProvider> {
    const op = this.config.operator;
    const baseUrl = options.baseUrl ?? op?.baseUrl ?? this.config.userDefaultBaseUrl;
    // On the operator's server the operator's model names apply; elsewhere the user's or the default.
    const sameServer = op && baseUrl === op.baseUrl;
    const chatModel = options.model ?? (sameServer ? op.chatModel : this.config.userDefaultModel);
    const id = createHash("sha256").update(`${secret}\n${baseUrl}\n${chatModel}`).digest("hex");
    let p = this.users.get(id);
    if (!p) {
      const { OpenAiProvider } = await loadProviderModule();
      p = new OpenAiProvider({
        baseUrl,
        apiKey: secret,
        chatModel,
        embeddingModel: sameServer ? op.embeddingModel : null,
        transcriptionModel: sameServer ? op.transcriptionModel : "whisper-1",
        deadlineMs: this.config.deadlineMs,
        // A user's URL is a request made on their behalf: never to metadata or link-local addresses,
        // to private ones only where the operator allows it.
        policy: {
          allowPrivate: options.baseUrl ? this.config.allowPrivateUserUrls : true,
          maxResponseBytes: this.config.maxResponseBytes,
        },
      });
      this.users.set(id, p);
    }
    return p;
  }

  async close(): Promise<void> {
    this.users.clear();
    await this.operator?.close();
  }
}
