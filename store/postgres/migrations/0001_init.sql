-- 0001_init: Latchkey's initial schema.
--
-- Every id column uses COLLATE "C" so that ids compare byte by byte, as the
-- store contract requires, whatever the database's default collation is.
-- Times are timestamptz (microsecond precision). Rows of a project are keyed
-- by (project_id, id): nothing is shared between projects.

CREATE TABLE projects (
    id text COLLATE "C" PRIMARY KEY,
    created_at timestamptz NOT NULL,
    -- The greatest (created_at, id) any contact of the project has had,
    -- deleted ones included. New contacts are placed after it, so they never
    -- appear before a cursor a client already holds.
    contacts_last_created_at timestamptz,
    contacts_last_id text COLLATE "C"
);

CREATE TABLE users (
    project_id text COLLATE "C" NOT NULL REFERENCES projects (id),
    id text COLLATE "C" NOT NULL,
    email text NOT NULL,
    -- store.NormalizeEmail(email): the form emails are compared in.
    email_normalized text COLLATE "C" NOT NULL,
    password_hash text NOT NULL,
    tags text[] NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL,
    PRIMARY KEY (project_id, id),
    CONSTRAINT users_email_unique UNIQUE (project_id, email_normalized)
);

CREATE TABLE contacts (
    project_id text COLLATE "C" NOT NULL REFERENCES projects (id),
    id text COLLATE "C" NOT NULL,
    name text NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (project_id, id)
);

-- Serves the keyset query of ListContacts:
--   WHERE project_id = $1 AND (created_at, id) > ($2, $3)
--   ORDER BY created_at, id LIMIT n
CREATE INDEX contacts_keyset ON contacts (project_id, created_at, id COLLATE "C");

CREATE TABLE api_keys (
    project_id text COLLATE "C" NOT NULL REFERENCES projects (id),
    id text COLLATE "C" NOT NULL,
    name text NOT NULL,
    created_at timestamptz NOT NULL,
    last_used_at timestamptz,
    revoked_at timestamptz,
    PRIMARY KEY (project_id, id)
);

CREATE TABLE signing_keys (
    project_id text COLLATE "C" NOT NULL REFERENCES projects (id),
    id text COLLATE "C" NOT NULL,
    public_key bytea NOT NULL,
    encrypted_private_key bytea NOT NULL,
    created_at timestamptz NOT NULL,
    retired_at timestamptz,
    PRIMARY KEY (project_id, id)
);

-- One row per refresh-token family; rotation updates it in place, so leave
-- room on each page for HOT updates.
CREATE TABLE refresh_families (
    project_id text COLLATE "C" NOT NULL,
    id text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    generation bigint NOT NULL,
    issued_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    -- When the previous generation was exchanged for the current one;
    -- NULL while the family is at generation 0.
    rotated_at timestamptz,
    revoked_at timestamptz,
    PRIMARY KEY (project_id, id),
    FOREIGN KEY (project_id, user_id) REFERENCES users (project_id, id)
) WITH (fillfactor = 80);

-- Fixed-window failure counters shared by every instance.
CREATE TABLE throttles (
    key text COLLATE "C" PRIMARY KEY,
    count integer NOT NULL,
    started_at timestamptz NOT NULL,
    -- started_at plus the window of the last write; rows past it are pruned.
    reset_at timestamptz NOT NULL
);

CREATE INDEX throttles_reset_at ON throttles (reset_at);
