// What the operator configures for the context brain (txtfs serve --ai-*, TXTFS_AI_*).

export interface OperatorProvider {
  baseUrl: string;
  apiKey: string;
  chatModel: string;
  embeddingModel: string | null;
  transcriptionModel: string | null;
}

export interface BrainConfig {
  /** The operator's provider: serves `pro` accounts. Null: only users' own keys. */
  operator: OperatorProvider | null;
  /**
   * The operator's provider serves every account whatever its plan: a personal service
   * (`txtfs mount --serve`), whose one user is its operator.
   */
  operatorServesEveryPlan: boolean;
  /** Per-account daily quota of AI calls, counted in the store (several servers share it). */
  requestsPerDay: number;
  tokensPerDay: number;
  /** Whole-call deadline of one provider call (retries included). */
  deadlineMs: number;
  /** Users' own base URLs may point at loopback and private ranges (default: when serving on loopback). */
  allowPrivateUserUrls: boolean;
  /** Cap on a provider's answer. */
  maxResponseBytes: number;
  /** Where a user's key goes when the vault record names no server, and its default chat model. */
  userDefaultBaseUrl: string;
  userDefaultModel: string;
}

export const DEFAULT_BRAIN_CONFIG: BrainConfig = {
  operator: null,
  operatorServesEveryPlan: false,
  requestsPerDay: 200,
  tokensPerDay: 500_000,
  deadlineMs: 60_000,
  allowPrivateUserUrls: false,
  maxResponseBytes: 8 * 1024 * 1024,
  userDefaultBaseUrl: "https://api.openai.com/v1",
  userDefaultModel: "gpt-4o-mini",
};

export const PLANS = ["free", "pro"] as const;
export type Plan = (typeof PLANS)[number];

/** The spec's limits on the brain's inputs. */
export const BRAIN_LIMITS = {
  seedChars: 2000,
  promptChars: 2000,
  /** Notes sent as context to one ideation or analysis. */
  contextNotes: 12,
  /** Characters of each note's body sent as context. */
  excerptChars: 1500,
  /** Notes one artifact may render. */
  artifactSources: 50,
  /** Transcription uploads (the OpenAI audio endpoint's own limit is 25 MB). */
  transcriptionBytes: 25 * 1024 * 1024,
  searchDefault: 20,
  searchMax: 100,
  queryChars: 500,
} as const;
