// The service's hot queries as the repositories send them, for the query-plan tests of both stores
// (test/store/repos/hotQueryPlans.test.ts, test/postgres/queryPlans.test.ts): each is one call of the
// repo, captured without running it. `fillPlanData` gives a store enough rows (the same on both)
// that a planner with statistics would scan a table no index fits.
import { FeedRepo } from "../../src/store/repos/feed.ts";
import { FileRepo } from "../../src/store/repos/files.ts";
import { FolderRepo } from "../../src/store/repos/folders.ts";
import { RelatedRepo } from "../../src/store/repos/related.ts";
import { type Dialect, SearchRepo } from "../../src/store/repos/search.ts";
import { ShareRepo } from "../../src/store/repos/shares.ts";
import type { Sql } from "../../src/store/store.ts";

export interface Statement {
  sql: string;
  params: unknown[];
}

/** Every statement a repo call sends, answered with nothing. */
export async function sqlOf(call: (sql: Sql) => Promise<unknown>): Promise<Statement[]> {
  const sent: Statement[] = [];
  const capture = async (sql: string, params: unknown[] = []) => {
    sent.push({ sql, params: [...params] });
    return [] as never;
  };
  await call({ all: capture, get: capture, run: capture } as Sql);
  return sent;
}

export const USERS = 40;
export const FOLDERS = 4000;
export const FILES = 40_000;
const own = { ownerId: "u_1" };
const shared = { ownerId: "u_1", sharedFolderIds: ["d_100002", "d_100003"], sharedFileIds: ["f_100009"] };

/** name -> the calls of one hot query (the last statement each sends is the query itself). */
export function hotQueries(dialect: Dialect): [string, (sql: Sql) => Promise<unknown>][] {
  return [
    [
      "listing page after a cursor",
      (sql) => new FileRepo(sql, dialect).list({ ...own, afterId: "f_100400", limit: 101 }),
    ],
    [
      "listing page as JSON",
      (sql) => new FileRepo(sql, dialect).listJson({ ...own, afterId: "f_100400", limit: 101 }),
    ],
    ["read by id", (sql) => new FileRepo(sql, dialect).byId("f_100041")],
    [
      "read by path (a folder's notes)",
      (sql) => new FileRepo(sql, dialect).list({ ...own, folderId: "d_100040" }),
    ],
    ["the root's notes (GET /api/me)", (sql) => new FileRepo(sql, dialect).list({ ...own, folderId: null })],
    [
      "an import's names in a folder",
      (sql) => new FileRepo(sql, dialect).named("u_1", "d_100040", ["n40.md", "n4040.md", "new.md"]),
    ],
    [
      "an import's names at the top level",
      (sql) => new FileRepo(sql, dialect).named("u_1", null, ["n7.md", "new.md"]),
    ],
    ["changes feed", (sql) => new FeedRepo(sql).since("u_1", 100, 100, false)],
    ["changes feed with tombstones", (sql) => new FeedRepo(sql).since("u_1", 100, 100, true)],
    [
      "search, the caller's and shared notes",
      (sql) =>
        new SearchRepo(sql, dialect).search(shared, { terms: ["common", "text"], match: "all", limit: 20 }),
    ],
    [
      "search as typed, two common words (the last a prefix)",
      (sql) =>
        new SearchRepo(sql, dialect).search(own, {
          terms: ["common", "tex"],
          match: "all",
          prefixLast: true,
          limit: 20,
        }),
    ],
    [
      "search, a rare word",
      (sql) => new SearchRepo(sql, dialect).search(own, { terms: ["w7"], match: "all", limit: 20 }),
    ],
    ["related: notes with a tag", (sql) => new RelatedRepo(sql).withTag(own, "t3", 25)],
    ["related: shared notes with a tag", (sql) => new RelatedRepo(sql).withTag(shared, "t3", 25)],
    ["related: tag count", (sql) => new RelatedRepo(sql).tagCount(own, "t3", 1000)],
    ["related: notes in a folder", (sql) => new RelatedRepo(sql).inFolder(shared, "d_100040", 25)],
    ["related: their words", (sql) => new RelatedRepo(sql).texts(["f_100001", "f_100041"], 20_000)],
    [
      "related: notes holding a word",
      (sql) => new SearchRepo(sql, dialect).withWords(own, ["w7"], { limit: 16, within: 500 }),
    ],
    ["folder counts of an account", (sql) => new FolderRepo(sql).fileCountsOwned("u_1")],
    ["folder counts of some folders", (sql) => new FolderRepo(sql).fileCounts(["d_100040", "d_100080"])],
    [
      "share check: shares on a note and its folders",
      (sql) => new ShareRepo(sql).activeOn(["f_100041", "d_100040"], "t"),
    ],
    ["share check: a grantee's shares", (sql) => new ShareRepo(sql).activeForGrantee("u_2", "t")],
    ["share check: a folder's ancestry", (sql) => new FolderRepo(sql).ancestry("d_100040")],
  ];
}

/**
 * The rows (as one SQL script each, portable: recursive CTEs, no generate_series): 40 accounts,
 * 4,000 folders (100 each, nested in chains of 5), 40,000 notes of 3 tags each (1 in 20 at
 * its account's top level), a feed row per note, 4,000 shares.
 */
export function fillPlanData(): string[] {
  const n = (count: number) =>
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${count - 1})`;
  return [
    `${n(USERS)} INSERT INTO users (id, email, name, created_at) SELECT 'u_' || (i + 1), 'u' || i || '@x.io', '', 't' FROM n`,
    `${n(FOLDERS)} INSERT INTO folders (id, owner_id, parent_id, name, created_at, updated_at)
       SELECT 'd_' || (100000 + i), 'u_' || (i % ${USERS} + 1),
         CASE WHEN i >= ${USERS} AND (i / ${USERS}) % 5 <> 0 THEN 'd_' || (100000 + i - ${USERS}) END,
         'folder' || i, 't', 't' FROM n`,
    `${n(FILES)} INSERT INTO files (id, owner_id, folder_id, name, type, availability, tags, size, content_hash,
         revision, version_number, etag, created_at, updated_at, content)
       SELECT 'f_' || (100000 + i), 'u_' || (i % ${USERS} + 1),
         CASE WHEN i % 20 <> 7 THEN 'd_' || (100000 + i % ${FOLDERS}) END, 'n' || i || '.md',
         'md', 'cloud', '["t' || (i % 30) || '","u' || (i % 70) || '","v' || (i % 110) || '"]', 100, 'h', 1, 1, 'e', 't', 't',
         'common text w' || (i % 500) || ' and more words of note ' || i FROM n`,
    `${n(FILES)} INSERT INTO feed (account_id, seq, kind, item_id, changed_at, record)
       SELECT 'u_' || (i % ${USERS} + 1), i + 1, 'file', 'f_' || (100000 + i), 't', '{}' FROM n`,
    `${n(4000)} INSERT INTO shares (id, resource_type, resource_id, owner_id, grantee_id, grantee_email, role,
         status, created_by, created_at, updated_at)
       SELECT 's_' || i, 'folder', 'd_' || (100000 + i % ${FOLDERS}), 'u_' || (i % ${USERS} + 1),
         'u_' || ((i / 7) % ${USERS} + 1), 'g' || i || '@x.io', 'reader', 'active', 'u_1', 't', 't' FROM n`,
  ];
}
