-- 0004_sessions_feed_audit: the second stage of the store contract.
--
-- Disabled users, users listed by creation, sessions with an absolute end,
-- API keys that name their creator and signing key, the revocation feed, the
-- audit log, the web console's sessions, and the indexes of the Prune
-- methods. Every new column is optional or has a default, so every existing
-- row is kept as it was.

ALTER TABLE users ADD COLUMN disabled_at INTEGER;

-- ListUsers: the keyset order (created_at, id) within a project. The email
-- prefix search uses the unique (project_id, email_norm) index of 0001.
CREATE INDEX users_project_created ON users (project_id, created_at, id);

ALTER TABLE refresh_families ADD COLUMN ends_at INTEGER;

-- PruneRefreshFamilies: one index per way a session ends.
CREATE INDEX refresh_families_revoked ON refresh_families (revoked_at) WHERE revoked_at IS NOT NULL;
CREATE INDEX refresh_families_expires ON refresh_families (expires_at);
CREATE INDEX refresh_families_ends ON refresh_families (ends_at) WHERE ends_at IS NOT NULL;

ALTER TABLE api_keys ADD COLUMN created_by TEXT NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN signing_key_id TEXT NOT NULL DEFAULT '';

-- The revocation feed. Each project remembers the newest feed position it
-- has ever had, (revocation_top_at, revocation_top_id), pruned items
-- included; a new item is placed after it (its time raised by whole
-- microseconds when needed) in the write transaction that adds it, so an
-- item is never added before one a reader has seen.
ALTER TABLE projects ADD COLUMN revocation_top_at INTEGER;
ALTER TABLE projects ADD COLUMN revocation_top_id TEXT;

CREATE TABLE revocations (
	project_id TEXT    NOT NULL REFERENCES projects (id),
	revoked_at INTEGER NOT NULL,
	id         TEXT    NOT NULL,
	kind       TEXT    NOT NULL,
	subject    TEXT    NOT NULL,
	PRIMARY KEY (project_id, revoked_at, id)
) WITHOUT ROWID;

CREATE UNIQUE INDEX revocations_id ON revocations (id);
-- PruneSessionRevocations.
CREATE INDEX revocations_kind_revoked ON revocations (kind, revoked_at);

-- The audit log, listed newest first (the indexes are read backwards),
-- optionally by action or by target, and pruned by time.
CREATE TABLE audit_log (
	id          TEXT    NOT NULL PRIMARY KEY,
	project_id  TEXT    NOT NULL REFERENCES projects (id),
	at          INTEGER NOT NULL,
	actor       TEXT    NOT NULL,
	action      TEXT    NOT NULL,
	target      TEXT    NOT NULL,
	client_addr TEXT    NOT NULL
);

CREATE INDEX audit_log_project ON audit_log (project_id, at, id);
CREATE INDEX audit_log_action ON audit_log (project_id, action, at, id);
CREATE INDEX audit_log_target ON audit_log (project_id, target, at, id);
CREATE INDEX audit_log_at ON audit_log (at);

-- The web console's sessions, by the SHA-256 of their secret.
CREATE TABLE console_sessions (
	id           TEXT    NOT NULL PRIMARY KEY,
	project_id   TEXT    NOT NULL REFERENCES projects (id),
	user_id      TEXT    NOT NULL,
	created_at   INTEGER NOT NULL,
	last_seen_at INTEGER NOT NULL
);

-- PruneConsoleSessions: idle sessions and sessions past their lifetime.
CREATE INDEX console_sessions_last_seen ON console_sessions (last_seen_at);
CREATE INDEX console_sessions_created ON console_sessions (created_at);
-- DisableUser: the sessions of one user.
CREATE INDEX console_sessions_user ON console_sessions (project_id, user_id);
