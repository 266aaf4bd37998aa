import { ConnectionRepo } from "./repos/connections.ts";
import { FeedRepo } from "./repos/feed.ts";
import { FileRepo } from "./repos/files.ts";
import { FolderRepo } from "./repos/folders.ts";
import { IdempotencyRepo } from "./repos/idempotency.ts";
import { KeyRepo } from "./repos/keys.ts";
import { RateLimitRepo } from "./repos/rateLimits.ts";
import { ShareRepo } from "./repos/shares.ts";
import { UserRepo } from "./repos/users.ts";
import { VersionRepo } from "./repos/versions.ts";
import type { Sql, Tx } from "./store.ts";

/** Builds the repositories over one backend's executor; shared by every backend. */
export function createTx(sql: Sql, notify: (accountIds: Iterable<string>) => void): Tx {
  return {
    users: new UserRepo(sql),
    keys: new KeyRepo(sql),
    folders: new FolderRepo(sql),
    files: new FileRepo(sql),
    versions: new VersionRepo(sql),
    connections: new ConnectionRepo(sql),
    shares: new ShareRepo(sql),
    feed: new FeedRepo(sql),
    idempotency: new IdempotencyRepo(sql),
    rateLimits: new RateLimitRepo(sql),
    notify,
  };
}
