-- 0001_init: the initial Latchkey schema.
--
-- Times are INTEGER unix microseconds in UTC; NULL means "not set" for the
-- optional ones (last use, revocation, retirement, last rotation). Ids are
-- TEXT compared with the default BINARY collation, byte by byte.

CREATE TABLE projects (
	id         TEXT    NOT NULL PRIMARY KEY,
	created_at INTEGER NOT NULL
);

CREATE TABLE users (
	id            TEXT    NOT NULL PRIMARY KEY,
	project_id    TEXT    NOT NULL REFERENCES projects (id),
	email         TEXT    NOT NULL,
	email_norm    TEXT    NOT NULL,
	password_hash TEXT    NOT NULL,
	tags          TEXT    NOT NULL DEFAULT '[]',
	created_at    INTEGER NOT NULL,
	UNIQUE (project_id, email_norm)
);

-- Contacts are clustered on the keyset order, so a page is one index seek
-- followed by a short forward scan at any depth.
CREATE TABLE contacts (
	project_id TEXT    NOT NULL REFERENCES projects (id),
	created_at INTEGER NOT NULL,
	id         TEXT    NOT NULL,
	name       TEXT    NOT NULL,
	PRIMARY KEY (project_id, created_at, id)
) WITHOUT ROWID;

CREATE UNIQUE INDEX contacts_id ON contacts (id);

CREATE TABLE api_keys (
	id           TEXT    NOT NULL PRIMARY KEY,
	project_id   TEXT    NOT NULL REFERENCES projects (id),
	name         TEXT    NOT NULL,
	created_at   INTEGER NOT NULL,
	last_used_at INTEGER,
	revoked_at   INTEGER
);

CREATE INDEX api_keys_project ON api_keys (project_id, created_at, id);

CREATE TABLE signing_keys (
	id                    TEXT    NOT NULL PRIMARY KEY,
	project_id            TEXT    NOT NULL REFERENCES projects (id),
	public_key            BLOB    NOT NULL,
	encrypted_private_key BLOB    NOT NULL,
	created_at            INTEGER NOT NULL,
	retired_at            INTEGER
);

CREATE INDEX signing_keys_project ON signing_keys (project_id, created_at, id);

-- One row per refresh-token family. No token text is stored: the server
-- derives a token from (family, generation) under its own key.
CREATE TABLE refresh_families (
	id         TEXT    NOT NULL PRIMARY KEY,
	project_id TEXT    NOT NULL REFERENCES projects (id),
	user_id    TEXT    NOT NULL REFERENCES users (id),
	generation INTEGER NOT NULL,
	issued_at  INTEGER NOT NULL,
	expires_at INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	rotated_at INTEGER,
	revoked_at INTEGER
);

CREATE INDEX refresh_families_user ON refresh_families (user_id);

-- Fixed-window failure counters. reset_at is when the window ends; rows
-- whose window has ended are pruned as failures are added.
CREATE TABLE throttle_windows (
	key        TEXT    NOT NULL PRIMARY KEY,
	count      INTEGER NOT NULL,
	started_at INTEGER NOT NULL,
	reset_at   INTEGER NOT NULL
);

CREATE INDEX throttle_windows_reset ON throttle_windows (reset_at);
