// The persistence boundary. Domain code talks only to these interfaces; the SQLite and PostgreSQL
// backends differ in their executor, locking and migrations, not in the repositories above it.

import type { AttachmentRepo } from "./repos/attachments.ts";
import type { BlobStore } from "./repos/blobs.ts";
import type {
  AiUsageRepo,
  ArtifactRepo,
  EmbeddingRepo,
  IdeationRepo,
  ProposalRepo,
  TranscriptionRepo,
} from "./repos/brain.ts";
import type { CommentRepo, SuggestionRepo } from "./repos/comments.ts";
import type { ConnectionRepo } from "./repos/connections.ts";
import type { DavLockRepo } from "./repos/davLocks.ts";
import type { DavPropRepo } from "./repos/davProps.ts";
import type { DavTombstoneRepo } from "./repos/davTombstones.ts";
import type { DeviceRepo } from "./repos/devices.ts";
import type { FeedRepo } from "./repos/feed.ts";
import type { FileRepo } from "./repos/files.ts";
import type { FolderRepo } from "./repos/folders.ts";
import type { IdempotencyRepo } from "./repos/idempotency.ts";
import type { IdentityRepo } from "./repos/identities.ts";
import type { KeyRepo } from "./repos/keys.ts";
import type { LinkRepo } from "./repos/links.ts";
import type { RateLimitRepo } from "./repos/rateLimits.ts";
import type { RelatedRepo } from "./repos/related.ts";
import type { SearchRepo } from "./repos/search.ts";
import type { SessionRepo } from "./repos/sessions.ts";
import type { ShareRepo } from "./repos/shares.ts";
import type { StatsRepo } from "./repos/stats.ts";
import type { TempUrlRepo } from "./repos/tempUrls.ts";
import type { ThemeRepo } from "./repos/themes.ts";
import type { UsageRepo } from "./repos/usage.ts";
import type { UserRepo } from "./repos/users.ts";
import type { VaultRepo } from "./repos/vault.ts";
import type { VersionRepo } from "./repos/versions.ts";
import type { WebhookRepo } from "./repos/webhooks.ts";

/** Minimal SQL executor. Statements use `?` placeholders; backends translate as needed. */
export interface Sql {
  all<R>(sql: string, params?: readonly unknown[]): Promise<R[]>;
  get<R>(sql: string, params?: readonly unknown[]): Promise<R | undefined>;
  run(sql: string, params?: readonly unknown[]): Promise<{ changes: number }>;
}

/** Everything a unit of work can touch. One Tx = one database transaction. */
export interface Tx {
  readonly users: UserRepo;
  readonly keys: KeyRepo;
  readonly usage: UsageRepo;
  readonly folders: FolderRepo;
  readonly files: FileRepo;
  readonly versions: VersionRepo;
  readonly connections: ConnectionRepo;
  readonly shares: ShareRepo;
  readonly feed: FeedRepo;
  readonly idempotency: IdempotencyRepo;
  readonly comments: CommentRepo;
  readonly suggestions: SuggestionRepo;
  readonly tempUrls: TempUrlRepo;
  readonly themes: ThemeRepo;
  readonly devices: DeviceRepo;
  readonly webhooks: WebhookRepo;
  readonly davLocks: DavLockRepo;
  readonly davTombstones: DavTombstoneRepo;
  readonly davProps: DavPropRepo;
  readonly identities: IdentityRepo;
  readonly sessions: SessionRepo;
  readonly vault: VaultRepo;
  readonly rateLimits: RateLimitRepo;
  readonly aiUsage: AiUsageRepo;
  readonly ideation: IdeationRepo;
  readonly proposals: ProposalRepo;
  readonly transcriptions: TranscriptionRepo;
  readonly artifacts: ArtifactRepo;
  readonly embeddings: EmbeddingRepo;
  readonly search: SearchRepo;
  readonly related: RelatedRepo;
  readonly links: LinkRepo;
  readonly stats: StatsRepo;
  readonly attachments: AttachmentRepo;
  /** Bytes of attachments, once per content (an object store could take them later). */
  readonly blobs: BlobStore;
  /** Wake change-feed long-polls of these accounts once this transaction commits. */
  notify(accountIds: Iterable<string>): void;
  /** Runs `fn` inside a savepoint: if it throws, only its own writes are rolled back. */
  savepoint<T>(fn: () => Promise<T>): Promise<T>;
  /** Writes what the unit of work kept back (the feed counters): the store calls it right before COMMIT. */
  beforeCommit(): Promise<void>;
}

export interface TransactionOptions {
  /**
   * Units of work sharing a key run one at a time, on every server (e.g. the acting account: its
   * writers would otherwise collide on its feed counter and be rerun). A backend with a single
   * writer ignores it.
   */
  serializeOn?: readonly string[];
}

export interface Store {
  readonly kind: "sqlite" | "postgres";
  /** Runs `fn` in one read-write transaction; rolled back if it throws. */
  transaction<T>(fn: (tx: Tx) => Promise<T>, opts?: TransactionOptions): Promise<T>;
  /** Runs `fn` against a consistent read-only snapshot. */
  read<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Read-through cache for the hot path (key lookups, ETags): `load` runs in a read snapshot and its
   * result is kept until the database changes — a commit here, or by another process. Only for
   * small values.
   */
  memoized<T>(key: string, load: (tx: Tx) => Promise<T>): Promise<T>;
  /** Calls `listener` after any commit that changed the account's feed. Returns an unsubscribe. */
  subscribe(accountId: string, listener: () => void): () => void;
  /** The schema this store is at and the one this txtfs expects (readiness: they must match). */
  schema(): Promise<{ current: number; expected: number }>;
  close(): Promise<void>;
}
