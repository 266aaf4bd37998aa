// Schema history of the embedded store. Append new migrations; never edit an applied one.
// Columns holding bodies come last in their table, so reading metadata never walks overflow pages.
// A migration is portable DDL (PostgreSQL translates it), or one text per dialect where they differ
// (full-text search: FTS5 in SQLite, tsvector in PostgreSQL).
export type Migration = string | { readonly sqlite: string; readonly postgres: string };

/** The SQLite text of a migration. */
export const sqliteDdl = (m: Migration) => (typeof m === "string" ? m : m.sqlite);

export const SQLITE_MIGRATIONS: readonly Migration[] = [
  `
  CREATE TABLE users (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    feed_seq INTEGER NOT NULL DEFAULT 0,
    feed_floor INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    label TEXT NOT NULL DEFAULT '',
    token_prefix TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    scopes TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT,
    revoked_at TEXT,
    last_used_at TEXT,
    requests_today INTEGER NOT NULL DEFAULT 0,
    requests_day TEXT
  );
  CREATE INDEX api_keys_user ON api_keys(user_id);
  CREATE TABLE folders (
    id TEXT PRIMARY KEY,
    owner_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    parent_id TEXT REFERENCES folders(id),
    name TEXT NOT NULL,
    context TEXT NOT NULL DEFAULT '',
    tags TEXT NOT NULL DEFAULT '[]',
    revision INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE INDEX folders_owner ON folders(owner_id, id);
  CREATE INDEX folders_parent ON folders(parent_id);
  CREATE TABLE files (
    id TEXT PRIMARY KEY,
    owner_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    folder_id TEXT REFERENCES folders(id),
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    availability TEXT NOT NULL,
    context TEXT NOT NULL DEFAULT '',
    tags TEXT NOT NULL DEFAULT '[]',
    size INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    revision INTEGER NOT NULL,
    version_number INTEGER NOT NULL,
    etag TEXT NOT NULL,
    plan_enabled INTEGER NOT NULL DEFAULT 0,
    plan_scope TEXT NOT NULL DEFAULT 'manual',
    plan_trust TEXT NOT NULL DEFAULT 'unreviewed',
    plan_source TEXT NOT NULL DEFAULT '',
    plan_updated_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    content TEXT NOT NULL DEFAULT ''
  );
  CREATE INDEX files_owner ON files(owner_id, id);
  CREATE INDEX files_folder ON files(folder_id, id);
  CREATE TABLE file_versions (
    id TEXT PRIMARY KEY,
    file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    version_number INTEGER NOT NULL,
    content_hash TEXT,
    byte_size INTEGER NOT NULL,
    author_user_id TEXT,
    source TEXT NOT NULL,
    label TEXT,
    commit_id TEXT,
    created_at TEXT NOT NULL,
    content TEXT NOT NULL,
    UNIQUE (file_id, version_number)
  );
  CREATE TABLE connections (
    file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    target_file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    reason TEXT NOT NULL DEFAULT '',
    created_by TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (file_id, target_file_id)
  );
  CREATE INDEX connections_target ON connections(target_file_id);
  CREATE TABLE shares (
    id TEXT PRIMARY KEY,
    resource_type TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    owner_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    grantee_id TEXT REFERENCES users(id) ON DELETE CASCADE,
    grantee_email TEXT NOT NULL,
    role TEXT NOT NULL,
    status TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    expires_at TEXT
  );
  CREATE INDEX shares_grantee ON shares(grantee_id, status);
  CREATE INDEX shares_resource ON shares(resource_id);
  CREATE TABLE feed (
    account_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    item_id TEXT NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0,
    reason TEXT,
    changed_at TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (account_id, seq),
    UNIQUE (account_id, kind, item_id)
  );
  CREATE INDEX feed_tombstones ON feed(deleted, changed_at);
  CREATE TABLE idempotency_keys (
    principal TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status INTEGER NOT NULL,
    headers TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (principal, key)
  );
  `,
  // 2: collaboration (comments, suggestions), temporary URLs, themes, and share lookups by email.
  `
  CREATE TABLE comments (
    id TEXT PRIMARY KEY,
    file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    selection_start INTEGER,
    selection_end INTEGER,
    selected_text TEXT,
    anchor_state TEXT NOT NULL DEFAULT 'current',
    version_number INTEGER NOT NULL,
    resolved INTEGER NOT NULL DEFAULT 0,
    resolved_by TEXT,
    resolved_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    body TEXT NOT NULL
  );
  CREATE INDEX comments_file ON comments(file_id, created_at);
  CREATE TABLE suggestions (
    id TEXT PRIMARY KEY,
    file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    selection_start INTEGER NOT NULL,
    selection_end INTEGER NOT NULL,
    anchor_state TEXT NOT NULL DEFAULT 'current',
    version_number INTEGER NOT NULL,
    status TEXT NOT NULL,
    reviewed_by TEXT,
    reviewed_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    original_text TEXT NOT NULL,
    suggested_text TEXT NOT NULL
  );
  CREATE INDEX suggestions_file ON suggestions(file_id, status);
  CREATE TABLE temp_urls (
    id TEXT PRIMARY KEY,
    file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    revoked_at TEXT
  );
  CREATE INDEX temp_urls_file ON temp_urls(file_id);
  CREATE TABLE themes (
    scope_type TEXT NOT NULL,
    scope_id TEXT NOT NULL,
    theme_id TEXT NOT NULL,
    overrides TEXT NOT NULL,
    revision INTEGER NOT NULL,
    updated_by TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (scope_type, scope_id)
  );
  CREATE INDEX shares_email ON shares(grantee_email, status);
  CREATE INDEX shares_owner ON shares(owner_id);
  `,
  // 3: devices and their per-file availability; webhooks with a durable delivery outbox.
  `
  CREATE TABLE devices (
    id TEXT PRIMARY KEY,
    owner_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    platform TEXT NOT NULL,
    client_name TEXT,
    client_version TEXT,
    cursor BIGINT NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    last_seen_at TEXT
  );
  CREATE INDEX devices_owner ON devices(owner_id, id);
  CREATE TABLE device_states (
    device_id TEXT NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
    item_kind TEXT NOT NULL,
    item_id TEXT NOT NULL,
    state TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (device_id, item_id)
  );
  CREATE TABLE webhooks (
    id TEXT PRIMARY KEY,
    owner_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    secret TEXT NOT NULL,
    status TEXT NOT NULL,
    disabled_reason TEXT,
    failure_count INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    last_delivery_at TEXT,
    last_delivery_status TEXT
  );
  CREATE INDEX webhooks_owner ON webhooks(owner_id, status);
  CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY,
    webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    feed_seq BIGINT NOT NULL,
    event_type TEXT NOT NULL,
    order_key TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    locked_until TEXT,
    last_status_code INTEGER,
    last_error TEXT,
    created_at TEXT NOT NULL,
    delivered_at TEXT,
    payload TEXT NOT NULL
  );
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_at);
  CREATE INDEX webhook_deliveries_order ON webhook_deliveries(webhook_id, order_key, status, feed_seq);
  `,
  // 4: sign-in (issue 6): identities linked to accounts (keyed by issuer + subject, never by email),
  // the tokens the server holds for them (encrypted), key-page sessions and vaulted credentials.
  `
  CREATE TABLE identities (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    provider TEXT NOT NULL,
    issuer TEXT NOT NULL,
    subject TEXT NOT NULL,
    username TEXT,
    email TEXT,
    status TEXT,
    verified_at TEXT,
    verification_error TEXT,
    wallet TEXT,
    active INTEGER NOT NULL DEFAULT 0,
    token_expires_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    held_tokens TEXT,
    UNIQUE (issuer, subject)
  );
  CREATE INDEX identities_user ON identities(user_id);
  CREATE TABLE sessions (
    id_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    identity_id TEXT REFERENCES identities(id) ON DELETE CASCADE,
    csrf_token TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
  );
  CREATE INDEX sessions_user ON sessions(user_id);
  CREATE TABLE vault_secrets (
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    hint TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    ciphertext TEXT NOT NULL,
    PRIMARY KEY (user_id, name)
  );
  `,
  // 5: rate-limit windows shared by every server on one database (PostgreSQL); one row per principal
  // (`key_...`, or `ip:ADDR` for unauthenticated callers), its window start in epoch milliseconds.
  `
  CREATE TABLE rate_limits (
    rate_key TEXT PRIMARY KEY,
    window_start INTEGER NOT NULL,
    used INTEGER NOT NULL
  );
  `,
  // 6: the context brain (issue 16): plans, AI quotas, folders kept away from the model, ideation
  // records, reviewable proposals, transcriptions, artifacts, embeddings per note version, and the
  // user's own provider settings beside the vaulted key.
  `
  ALTER TABLE users ADD COLUMN plan TEXT NOT NULL DEFAULT 'free';
  ALTER TABLE folders ADD COLUMN ai_excluded INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE vault_secrets ADD COLUMN options TEXT NOT NULL DEFAULT '{}';
  CREATE TABLE ai_usage (
    account_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    requests INTEGER NOT NULL DEFAULT 0,
    tokens INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, day)
  );
  CREATE TABLE ideation_records (
    file_id TEXT PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
    owner_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    grown_at TEXT,
    grow_count INTEGER NOT NULL DEFAULT 0,
    history TEXT NOT NULL
  );
  CREATE INDEX ideation_records_owner ON ideation_records(owner_id, created_at);
  CREATE TABLE ai_proposals (
    id TEXT PRIMARY KEY,
    owner_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    analysis_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    target_type TEXT NOT NULL,
    target_id TEXT,
    base_etag TEXT,
    status TEXT NOT NULL,
    reason TEXT NOT NULL,
    created_at TEXT NOT NULL,
    reviewed_at TEXT,
    reviewed_by TEXT,
    proposed TEXT NOT NULL,
    current TEXT NOT NULL
  );
  CREATE INDEX ai_proposals_owner ON ai_proposals(owner_id, status, created_at);
  CREATE TABLE transcriptions (
    id TEXT PRIMARY KEY,
    owner_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    status TEXT NOT NULL,
    source_type TEXT NOT NULL,
    media_type TEXT NOT NULL,
    byte_size INTEGER NOT NULL,
    model TEXT,
    file_id TEXT,
    created_at TEXT NOT NULL,
    completed_at TEXT
  );
  CREATE INDEX transcriptions_owner ON transcriptions(owner_id, created_at);
  CREATE TABLE artifacts (
    id TEXT PRIMARY KEY,
    owner_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    title TEXT NOT NULL,
    media_type TEXT NOT NULL,
    model TEXT,
    source_ids TEXT NOT NULL,
    file_id TEXT,
    created_at TEXT NOT NULL,
    content TEXT NOT NULL
  );
  CREATE INDEX artifacts_owner ON artifacts(owner_id, created_at);
  CREATE TABLE note_embeddings (
    file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    version_number INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    vector TEXT NOT NULL,
    PRIMARY KEY (file_id, model)
  );
  `,
  // 7: full-text search over notes (name, context, tags, body), kept in step with every write by the
  // database itself. SQLite: an FTS5 index (bm25) keyed through a rowid table, because a table
  // without an INTEGER PRIMARY KEY may renumber its rowids on VACUUM. PostgreSQL: a generated
  // tsvector column with a GIN index (ts_rank); the body is indexed up to 200,000 characters
  // (a tsvector holds at most 1 MB).
  {
    sqlite: `
  CREATE TABLE file_search_ids (
    rowid INTEGER PRIMARY KEY,
    file_id TEXT NOT NULL UNIQUE
  );
  CREATE VIRTUAL TABLE file_search USING fts5(
    name, context, tags, content, tokenize = 'unicode61 remove_diacritics 2'
  );
  INSERT INTO file_search_ids (file_id) SELECT id FROM files;
  INSERT INTO file_search (rowid, name, context, tags, content)
    SELECT s.rowid, f.name, f.context, f.tags, f.content FROM files f JOIN file_search_ids s ON s.file_id = f.id;
  CREATE TRIGGER file_search_insert AFTER INSERT ON files BEGIN
    INSERT INTO file_search_ids (file_id) VALUES (new.id);
    INSERT INTO file_search (rowid, name, context, tags, content)
      VALUES ((SELECT rowid FROM file_search_ids WHERE file_id = new.id), new.name, new.context, new.tags, new.content);
  END;
  CREATE TRIGGER file_search_update AFTER UPDATE OF name, context, tags, content ON files
  WHEN old.name IS NOT new.name OR old.context IS NOT new.context OR old.tags IS NOT new.tags
    OR old.content IS NOT new.content BEGIN
    UPDATE file_search SET name = new.name, context = new.context, tags = new.tags, content = new.content
      WHERE rowid = (SELECT rowid FROM file_search_ids WHERE file_id = new.id);
  END;
  CREATE TRIGGER file_search_delete AFTER DELETE ON files BEGIN
    DELETE FROM file_search WHERE rowid = (SELECT rowid FROM file_search_ids WHERE file_id = old.id);
    DELETE FROM file_search_ids WHERE file_id = old.id;
  END;
  `,
    postgres: `
  ALTER TABLE files ADD COLUMN search_doc tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple'::regconfig, name), 'A') ||
    setweight(to_tsvector('simple'::regconfig, context || ' ' || tags), 'B') ||
    setweight(to_tsvector('simple'::regconfig, left(content, 200000)), 'C')
  ) STORED;
  CREATE INDEX files_search ON files USING GIN (search_doc);
  `,
  },
  // 8: per key and UTC day, what the usage dashboard shows: requests, errors by status, rate-limit
  // hits and a latency histogram (JSON), aggregated in memory and written with the usage flush.
  `
  CREATE TABLE key_usage_daily (
    key_id TEXT NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    requests INTEGER NOT NULL DEFAULT 0,
    rate_limited INTEGER NOT NULL DEFAULT 0,
    statuses TEXT NOT NULL DEFAULT '{}',
    latency TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (key_id, day)
  );
  `,
  // 9: the full-text index is brought up to date after the write's commit, not inside it
  // (searchIndex.ts): a write only notes which files changed; a search first indexes what is
  // noted, so it never misses a committed change. A bulk sync of 200 new notes took ~25% less.
  {
    sqlite: `
  DROP TRIGGER file_search_insert;
  DROP TRIGGER file_search_update;
  DROP TRIGGER file_search_delete;
  CREATE TABLE file_search_pending (file_id TEXT PRIMARY KEY) WITHOUT ROWID;
  CREATE TRIGGER file_search_insert AFTER INSERT ON files BEGIN
    INSERT OR IGNORE INTO file_search_pending (file_id) VALUES (new.id);
  END;
  CREATE TRIGGER file_search_update AFTER UPDATE OF name, context, tags, content ON files
  WHEN old.name IS NOT new.name OR old.context IS NOT new.context OR old.tags IS NOT new.tags
    OR old.content IS NOT new.content BEGIN
    INSERT OR IGNORE INTO file_search_pending (file_id) VALUES (new.id);
  END;
  CREATE TRIGGER file_search_delete AFTER DELETE ON files BEGIN
    INSERT OR IGNORE INTO file_search_pending (file_id) VALUES (old.id);
  END;
  `,
    // PostgreSQL's index is a generated column, kept by the write itself.
    postgres: "SELECT 1",
  },
  // 10: the listing (GET /api/me/files, every page of GET /api/v1/files) read from one index that
  // holds every column it shows, in its order: a mount listing 100,000 notes read the files table
  // itself, ~52 MiB of pages strewn among the bodies, versions and feed (1.6-1.8 s after the page
  // cache was dropped); the index is ~28 MiB of pages that hold nothing else (0.25-0.3 s). It
  // starts with (owner_id, id), so the old index on those two is dropped. context and tags come
  // last: they are the only long ones. PostgreSQL keeps its indexes (not measured at this size).
  {
    sqlite: `
  CREATE INDEX files_listing ON files(owner_id, id, folder_id, name, type, availability, size,
    content_hash, revision, version_number, etag, plan_enabled, plan_scope, plan_trust, plan_source,
    plan_updated_at, created_at, updated_at, context, tags);
  DROP INDEX files_owner;
  `,
    postgres: "SELECT 1",
  },
  // 11: an index of every note's tags, kept by the database on every write (like the full-text
  // index), so related notes find the notes sharing a tag by index instead of reading every note
  // the caller can see. Keyed by owner first: an account's notes with a tag are one range.
  {
    sqlite: `
  CREATE TABLE file_search_tags (
    owner_id TEXT NOT NULL,
    tag TEXT NOT NULL,
    file_id TEXT NOT NULL,
    PRIMARY KEY (owner_id, tag, file_id)
  ) WITHOUT ROWID;
  CREATE INDEX file_search_tags_file ON file_search_tags(file_id, tag);
  INSERT OR IGNORE INTO file_search_tags (owner_id, tag, file_id)
    SELECT f.owner_id, t.value, f.id FROM files f, json_each(f.tags) t
    WHERE json_valid(f.tags) AND t.type = 'text';
  CREATE TRIGGER file_search_tags_insert AFTER INSERT ON files WHEN json_valid(new.tags) BEGIN
    INSERT OR IGNORE INTO file_search_tags (owner_id, tag, file_id)
      SELECT new.owner_id, t.value, new.id FROM json_each(new.tags) t WHERE t.type = 'text';
  END;
  CREATE TRIGGER file_search_tags_update AFTER UPDATE OF tags, owner_id ON files
  WHEN old.tags IS NOT new.tags OR old.owner_id IS NOT new.owner_id BEGIN
    DELETE FROM file_search_tags WHERE file_id = old.id;
    INSERT OR IGNORE INTO file_search_tags (owner_id, tag, file_id)
      SELECT new.owner_id, t.value, new.id FROM json_each(new.tags) t
      WHERE json_valid(new.tags) AND t.type = 'text';
  END;
  CREATE TRIGGER file_search_tags_delete AFTER DELETE ON files BEGIN
    DELETE FROM file_search_tags WHERE file_id = old.id;
  END;
  `,
    postgres: `
  CREATE TABLE file_search_tags (
    owner_id TEXT COLLATE "C" NOT NULL,
    tag TEXT COLLATE "C" NOT NULL,
    file_id TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (owner_id, tag, file_id)
  );
  CREATE INDEX file_search_tags_file ON file_search_tags(file_id, tag);
  INSERT INTO file_search_tags (owner_id, tag, file_id)
    SELECT DISTINCT f.owner_id, t.tag, f.id FROM files f, jsonb_array_elements_text(f.tags::jsonb) AS t(tag)
    WHERE jsonb_typeof(f.tags::jsonb) = 'array'
  ON CONFLICT DO NOTHING;
  CREATE FUNCTION file_search_tags_sync() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP <> 'INSERT' THEN
      DELETE FROM file_search_tags WHERE file_id = OLD.id;
    END IF;
    IF TG_OP <> 'DELETE' AND jsonb_typeof(NEW.tags::jsonb) = 'array' THEN
      INSERT INTO file_search_tags (owner_id, tag, file_id)
        SELECT NEW.owner_id, t.tag, NEW.id FROM jsonb_array_elements_text(NEW.tags::jsonb) AS t(tag)
      ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
  END $$;
  CREATE TRIGGER file_search_tags_insert AFTER INSERT OR DELETE ON files
    FOR EACH ROW EXECUTE FUNCTION file_search_tags_sync();
  CREATE TRIGGER file_search_tags_update AFTER UPDATE OF tags, owner_id ON files
    FOR EACH ROW WHEN (OLD.tags IS DISTINCT FROM NEW.tags OR OLD.owner_id IS DISTINCT FROM NEW.owner_id)
    EXECUTE FUNCTION file_search_tags_sync();
  `,
  },
  // 13: each folder's count of direct notes, kept by the database on every write, so a listing's
  // folders (GET /api/me, the mount's flat listing) read one row per folder instead of counting
  // every note of the account per request. Derived like the search tables: a copy between stores
  // leaves it out and the target's triggers count again (copyStore.ts).
  {
    sqlite: `
  CREATE TABLE folder_counts (
    folder_id TEXT PRIMARY KEY REFERENCES folders(id) ON DELETE CASCADE,
    files INTEGER NOT NULL
  ) WITHOUT ROWID;
  INSERT INTO folder_counts (folder_id, files)
    SELECT folder_id, COUNT(*) FROM files WHERE folder_id IS NOT NULL GROUP BY folder_id;
  CREATE TRIGGER folder_counts_insert AFTER INSERT ON files WHEN new.folder_id IS NOT NULL BEGIN
    INSERT INTO folder_counts (folder_id, files) VALUES (new.folder_id, 1)
      ON CONFLICT (folder_id) DO UPDATE SET files = files + 1;
  END;
  CREATE TRIGGER folder_counts_delete AFTER DELETE ON files WHEN old.folder_id IS NOT NULL BEGIN
    UPDATE folder_counts SET files = files - 1 WHERE folder_id = old.folder_id;
  END;
  CREATE TRIGGER folder_counts_move AFTER UPDATE OF folder_id ON files
  WHEN old.folder_id IS NOT new.folder_id BEGIN
    UPDATE folder_counts SET files = files - 1 WHERE folder_id = old.folder_id;
    INSERT INTO folder_counts (folder_id, files) SELECT new.folder_id, 1 WHERE new.folder_id IS NOT NULL
      ON CONFLICT (folder_id) DO UPDATE SET files = files + 1;
  END;
  `,
    postgres: `
  CREATE TABLE folder_counts (
    folder_id TEXT COLLATE "C" PRIMARY KEY REFERENCES folders(id) ON DELETE CASCADE,
    files BIGINT NOT NULL
  );
  INSERT INTO folder_counts (folder_id, files)
    SELECT folder_id, COUNT(*) FROM files WHERE folder_id IS NOT NULL GROUP BY folder_id;
  CREATE FUNCTION folder_counts_sync() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP <> 'INSERT' AND OLD.folder_id IS NOT NULL THEN
      UPDATE folder_counts SET files = files - 1 WHERE folder_id = OLD.folder_id;
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.folder_id IS NOT NULL THEN
      INSERT INTO folder_counts (folder_id, files) VALUES (NEW.folder_id, 1)
        ON CONFLICT (folder_id) DO UPDATE SET files = folder_counts.files + 1;
    END IF;
    RETURN NULL;
  END $$;
  CREATE TRIGGER folder_counts_insert AFTER INSERT OR DELETE ON files
    FOR EACH ROW EXECUTE FUNCTION folder_counts_sync();
  CREATE TRIGGER folder_counts_move AFTER UPDATE OF folder_id ON files
    FOR EACH ROW WHEN (OLD.folder_id IS DISTINCT FROM NEW.folder_id)
    EXECUTE FUNCTION folder_counts_sync();
  `,
  },
  // 14: SQLite's full-text index also holds who may see each note (its owner, folder and own id as
  // tokens of a `scope` column, searchIndex.ts), so a search asks FTS5 for the caller's matches only
  // and ranks a bounded number of them, however many accounts share the store. An FTS5 table takes
  // no new column: it is made again, and every note is noted for the background indexer (the
  // migration itself stays instant at any size). A move to another folder now re-indexes the note.
  {
    sqlite: `
  DROP TABLE file_search;
  CREATE VIRTUAL TABLE file_search USING fts5(
    name, context, tags, content, scope, tokenize = 'unicode61 remove_diacritics 2'
  );
  INSERT OR IGNORE INTO file_search_pending (file_id) SELECT id FROM files;
  DROP TRIGGER file_search_update;
  CREATE TRIGGER file_search_update AFTER UPDATE OF name, context, tags, content, folder_id, owner_id ON files
  WHEN old.name IS NOT new.name OR old.context IS NOT new.context OR old.tags IS NOT new.tags
    OR old.content IS NOT new.content OR old.folder_id IS NOT new.folder_id
    OR old.owner_id IS NOT new.owner_id BEGIN
    INSERT OR IGNORE INTO file_search_pending (file_id) VALUES (new.id);
  END;
  `,
    // PostgreSQL filters by the files' own columns (search.ts).
    postgres: "SELECT 1",
  },
  // 15: an account's notes in one folder, or at its top level (GET /api/me's rootFiles, the
  // mount's root), as one range: the listing index starts with the owner, so finding the top-level
  // notes read every note of the account (100,000 notes: GET /api/me 1.6 -> 34 ms), and the folder
  // index holds every account's top-level notes under one key.
  "CREATE INDEX files_owner_folder ON files(owner_id, folder_id, id);",
  // 16: attachments: every file that is not a note (issue 48), bytes exact. Their bytes live once per
  // content in `blobs` (sha256 -> bytes), counted in `blob_refs` (one reference per attachment
  // version; apart, since updating a row rewrites its whole blob), so a copy or a rename costs no
  // bytes; `attachment_versions` is their history (the current one included).
  `
  CREATE TABLE IF NOT EXISTS blobs (
    hash TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    bytes BLOB NOT NULL
  );
  CREATE TABLE IF NOT EXISTS blob_refs (
    hash TEXT PRIMARY KEY REFERENCES blobs(hash),
    refs INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS attachments (
    id TEXT PRIMARY KEY,
    owner_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    folder_id TEXT REFERENCES folders(id),
    name TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    revision INTEGER NOT NULL,
    version_number INTEGER NOT NULL,
    etag TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE UNIQUE INDEX IF NOT EXISTS attachments_place ON attachments(owner_id, COALESCE(folder_id, ''), name);
  CREATE INDEX IF NOT EXISTS attachments_folder ON attachments(folder_id, id);
  CREATE TABLE IF NOT EXISTS attachment_versions (
    id TEXT PRIMARY KEY,
    attachment_id TEXT NOT NULL REFERENCES attachments(id) ON DELETE CASCADE,
    version_number INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    byte_size INTEGER NOT NULL,
    author_user_id TEXT,
    source TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (attachment_id, version_number)
  );
  `,
  // 17: links (issue 48): every link a note's text makes and the note (or attachment: no table yet, so
  // no reference) it resolves to (both NULL = unresolved), the names and aliases notes are found by, and the tags set through the API apart
  // from the ones a note's text declares. Looked up by key, so a save costs its own links.
  `
  CREATE TABLE note_links (
    source_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    ord INTEGER NOT NULL,
    owner_id TEXT NOT NULL,
    embed INTEGER NOT NULL,
    path TEXT NOT NULL,
    name_key TEXT NOT NULL,
    alias_key TEXT NOT NULL,
    target_id TEXT REFERENCES files(id) ON DELETE SET NULL,
    attachment_id TEXT,
    text TEXT NOT NULL,
    PRIMARY KEY (source_id, ord)
  );
  CREATE INDEX note_links_name ON note_links(owner_id, name_key);
  CREATE INDEX note_links_alias ON note_links(owner_id, alias_key);
  CREATE INDEX note_links_target ON note_links(target_id);
  CREATE INDEX note_links_attachment ON note_links(attachment_id) WHERE attachment_id IS NOT NULL;
  CREATE INDEX note_links_unresolved ON note_links(owner_id, source_id, ord)
    WHERE target_id IS NULL AND attachment_id IS NULL;
  CREATE TABLE note_names (
    owner_id TEXT NOT NULL,
    name_key TEXT NOT NULL,
    file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    alias INTEGER NOT NULL,
    PRIMARY KEY (owner_id, name_key, alias, file_id)
  );
  CREATE INDEX note_names_file ON note_names(file_id);
  CREATE TABLE note_set_tags (
    file_id TEXT PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
    tags TEXT NOT NULL
  );
  `,
  // 18: a folder's files by name (an import finds the names it brings): it read every file of each
  // folder it wrote to, so filling an account slowed with its size (4.6 s an import at 153,000 notes).
  // The owner is last: a top-level name is one key whatever the other accounts hold.
  "CREATE INDEX files_folder_name ON files(folder_id, name, owner_id);",
  // 19: the WebDAV locks of `/dav/`, kept in the store so that every server on one database
  // honours a lock another granted (they were in each server's own file).
  `CREATE TABLE dav_locks (
    token TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    scope TEXT NOT NULL,
    depth TEXT NOT NULL,
    owner TEXT NOT NULL,
    timeout_s INTEGER NOT NULL,
    expires_at TEXT NOT NULL
  );
  CREATE INDEX dav_locks_user ON dav_locks(user_id, expires_at);`,
  // 20: the notes deleted over `/dav/` a moment ago (DELETE then PUT continues the note), kept in
  // the store so that the PUT may reach another server, or this one after a restart. `folder_key`
  // is the folder id or '' (a key column cannot be NULL); `snapshot` is the note as JSON.
  `CREATE TABLE dav_tombstones (
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    principal TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    folder_key TEXT NOT NULL,
    name TEXT NOT NULL,
    snapshot TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    expires_at TEXT NOT NULL,
    PRIMARY KEY (principal, owner_id, folder_key, name)
  );
  CREATE INDEX dav_tombstones_user ON dav_tombstones(user_id, expires_at);
  CREATE INDEX dav_tombstones_expiry ON dav_tombstones(expires_at);`,
  // 21: the dead properties `/dav/` clients set (PROPPATCH), one row per resource and property,
  // kept in the store so that every server on one database answers what any of them was given
  // (they were in each server's own file). `path` is the user's view of the resource.
  `CREATE TABLE dav_props (
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    name TEXT NOT NULL,
    xml TEXT NOT NULL,
    PRIMARY KEY (user_id, path, name)
  );`,
];
