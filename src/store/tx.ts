import { AttachmentRepo } from "./repos/attachments.ts";
import { SqlBlobStore } from "./repos/blobs.ts";
import {
  AiUsageRepo,
  ArtifactRepo,
  EmbeddingRepo,
  IdeationRepo,
  ProposalRepo,
  TranscriptionRepo,
} from "./repos/brain.ts";
import { CommentRepo, SuggestionRepo } from "./repos/comments.ts";
import { ConnectionRepo } from "./repos/connections.ts";
import { DavLockRepo } from "./repos/davLocks.ts";
import { DavPropRepo } from "./repos/davProps.ts";
import { DavTombstoneRepo } from "./repos/davTombstones.ts";
import { DeviceRepo } from "./repos/devices.ts";
import { FeedRepo } from "./repos/feed.ts";
import { FileRepo } from "./repos/files.ts";
import { FolderRepo } from "./repos/folders.ts";
import { IdempotencyRepo } from "./repos/idempotency.ts";
import { IdentityRepo } from "./repos/identities.ts";
import { KeyRepo } from "./repos/keys.ts";
import { LinkRepo } from "./repos/links.ts";
import { RateLimitRepo } from "./repos/rateLimits.ts";
import { RelatedRepo } from "./repos/related.ts";
import { type Dialect, SearchRepo } from "./repos/search.ts";
import { SessionRepo } from "./repos/sessions.ts";
import { ShareRepo } from "./repos/shares.ts";
import { StatsRepo } from "./repos/stats.ts";
import { TempUrlRepo } from "./repos/tempUrls.ts";
import { ThemeRepo } from "./repos/themes.ts";
import { UsageRepo } from "./repos/usage.ts";
import { UserRepo } from "./repos/users.ts";
import { VaultRepo } from "./repos/vault.ts";
import { VersionRepo } from "./repos/versions.ts";
import { WebhookRepo } from "./repos/webhooks.ts";
import type { Sql, Tx } from "./store.ts";

/** Builds the repositories over one backend's executor; shared by every backend. */
export function createTx(
  sql: Sql,
  notify: (accountIds: Iterable<string>) => void,
  dialect: Dialect = "sqlite",
): Tx {
  let savepoints = 0;
  const users = new UserRepo(sql);
  const folders = new FolderRepo(sql);
  return {
    users,
    keys: new KeyRepo(sql),
    usage: new UsageRepo(sql),
    folders,
    files: new FileRepo(sql, dialect),
    versions: new VersionRepo(sql),
    connections: new ConnectionRepo(sql),
    shares: new ShareRepo(sql),
    feed: new FeedRepo(sql),
    idempotency: new IdempotencyRepo(sql),
    comments: new CommentRepo(sql),
    suggestions: new SuggestionRepo(sql),
    tempUrls: new TempUrlRepo(sql),
    themes: new ThemeRepo(sql),
    devices: new DeviceRepo(sql),
    webhooks: new WebhookRepo(sql),
    davLocks: new DavLockRepo(sql, dialect),
    davTombstones: new DavTombstoneRepo(sql),
    davProps: new DavPropRepo(sql),
    identities: new IdentityRepo(sql),
    sessions: new SessionRepo(sql),
    vault: new VaultRepo(sql),
    rateLimits: new RateLimitRepo(sql),
    aiUsage: new AiUsageRepo(sql),
    ideation: new IdeationRepo(sql),
    proposals: new ProposalRepo(sql),
    transcriptions: new TranscriptionRepo(sql),
    artifacts: new ArtifactRepo(sql),
    embeddings: new EmbeddingRepo(sql),
    search: new SearchRepo(sql, dialect),
    related: new RelatedRepo(sql),
    links: new LinkRepo(sql),
    stats: new StatsRepo(sql),
    attachments: new AttachmentRepo(sql),
    blobs: new SqlBlobStore(sql, dialect),
    notify,
    beforeCommit: () => users.flushSeqs(),
    // SAVEPOINT is standard SQL (SQLite and PostgreSQL): one item of a non-atomic batch or sync
    // rolls back alone, the transaction around it goes on.
    async savepoint<T>(fn: () => Promise<T>): Promise<T> {
      const name = `sp_${++savepoints}`;
      await sql.run(`SAVEPOINT ${name}`);
      const seqs = users.seqsSnapshot();
      try {
        const result = await fn();
        await sql.run(`RELEASE SAVEPOINT ${name}`);
        return result;
      } catch (err) {
        await sql.run(`ROLLBACK TO SAVEPOINT ${name}`);
        await sql.run(`RELEASE SAVEPOINT ${name}`);
        users.restoreSeqs(seqs);
        folders.forget(); // what it read may be what the savepoint wrote
        throw err;
      }
    },
  };
}
