-- 0002_sessions_feed_audit: the second stage of the store contract.
--
-- Disabled users, the absolute end of a session, who created an API key and
-- with which signing key, the revocation feed, the audit log, the web
-- console's sessions, and the indexes that listing users and the Prune
-- methods need. Every new column is nullable or has a default, so adding it
-- rewrites no table.

-- When the user was disabled; NULL while the user may sign in.
ALTER TABLE users ADD COLUMN disabled_at timestamptz;

-- ListUsers without a prefix is a keyset query:
--   WHERE project_id = $1 AND (created_at, id) > ($2, $3)
--   ORDER BY created_at, id LIMIT n
-- With an email prefix it is the range
--   email_normalized >= prefix AND email_normalized < successor(prefix)
-- on users_email_unique (project_id, email_normalized). email_normalized is
-- COLLATE "C", so the users whose email starts with a prefix are one
-- contiguous range of that index, and '%' and '_' are plain characters
-- there.
CREATE INDEX users_list ON users (project_id, created_at, id);

-- The absolute end of the session; NULL for none.
ALTER TABLE refresh_families ADD COLUMN ends_at timestamptz;

-- DisableUser revokes every family of the user.
CREATE INDEX refresh_families_user ON refresh_families (project_id, user_id);

-- PruneRefreshFamilies deletes families revoked, expired or ended before a
-- time. Revocation and the end never change once set, so these indexes cost
-- a rotation nothing; expires_at moves at every rotation, and an index on it
-- would make every rotation a non-HOT update that writes all the table's
-- indexes, so the expiry test reads the table instead (pruning is rare,
-- rotations are not).
CREATE INDEX refresh_families_revoked_at ON refresh_families (revoked_at) WHERE revoked_at IS NOT NULL;
CREATE INDEX refresh_families_ends_at ON refresh_families (ends_at) WHERE ends_at IS NOT NULL;

-- Who created the key (a user id, an API key id, "cli") and the id of the
-- signing key that signed its token; '' when unknown.
ALTER TABLE api_keys
    ADD COLUMN created_by text COLLATE "C" NOT NULL DEFAULT '',
    ADD COLUMN signing_key_id text COLLATE "C" NOT NULL DEFAULT '';

-- The greatest (revoked_at, id) any revocation of the project has had,
-- pruned ones included: the floor of the project's feed. The revoking
-- transaction locks the project row, reads it, places its item after it and
-- raises it, so the items of one project commit in position order and no
-- item is ever added before one a reader has seen.
ALTER TABLE projects
    ADD COLUMN revocations_last_at timestamptz,
    ADD COLUMN revocations_last_id text COLLATE "C";

CREATE TABLE revocations (
    project_id text COLLATE "C" NOT NULL REFERENCES projects (id),
    id text COLLATE "C" NOT NULL,
    kind text NOT NULL CHECK (kind IN ('api_key', 'signing_key', 'session', 'user')),
    subject text COLLATE "C" NOT NULL,
    revoked_at timestamptz NOT NULL,
    PRIMARY KEY (project_id, id)
);

-- ListRevocations: WHERE project_id = $1 AND (revoked_at, id) > (...)
-- ORDER BY revoked_at, id LIMIT n.
CREATE INDEX revocations_keyset ON revocations (project_id, revoked_at, id);
-- PruneSessionRevocations.
CREATE INDEX revocations_session_revoked_at ON revocations (revoked_at) WHERE kind = 'session';

CREATE TABLE audit_log (
    project_id text COLLATE "C" NOT NULL REFERENCES projects (id),
    id text COLLATE "C" NOT NULL,
    occurred_at timestamptz NOT NULL,
    actor text COLLATE "C" NOT NULL,
    action text COLLATE "C" NOT NULL,
    target text COLLATE "C" NOT NULL,
    client_addr text NOT NULL,
    PRIMARY KEY (project_id, id)
);

-- ListAudit reads newest first, (occurred_at, id) < (...) ORDER BY
-- occurred_at DESC, id DESC, scanning these indexes backwards: all entries,
-- one action's, one target's.
CREATE INDEX audit_log_newest ON audit_log (project_id, occurred_at, id);
CREATE INDEX audit_log_action ON audit_log (project_id, action, occurred_at, id);
CREATE INDEX audit_log_target ON audit_log (project_id, target, occurred_at, id);
-- PruneAudit deletes by time across projects. The log is appended in time
-- order, so a BRIN index (one small summary per range of pages) finds the
-- old pages; unlike a B-tree on occurred_at it cannot return rows in order,
-- so the planner never prefers it to the per-project indexes above for
-- listing a project's newest entries.
CREATE INDEX audit_log_occurred_at ON audit_log USING brin (occurred_at);

CREATE TABLE console_sessions (
    project_id text COLLATE "C" NOT NULL REFERENCES projects (id),
    -- The SHA-256 of the session's secret, in lowercase hex.
    id text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    created_at timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    PRIMARY KEY (project_id, id)
);

-- PruneConsoleSessions: idle before one time or created before another.
CREATE INDEX console_sessions_last_seen_at ON console_sessions (last_seen_at);
CREATE INDEX console_sessions_created_at ON console_sessions (created_at);
-- DisableUser: the sessions of one user.
CREATE INDEX console_sessions_user ON console_sessions (project_id, user_id);
