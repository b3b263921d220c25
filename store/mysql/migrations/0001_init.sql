-- 0001_init: Latchkey's schema on MySQL 8.0+ and MariaDB 10.11+.
--
-- Every table is InnoDB (durable, transactional, row locks). Ids, emails in
-- their compared form, throttle keys and the audit log's fields are
-- VARBINARY, so they compare byte by byte (as the store contract requires)
-- whatever the server's default collation, and carry no trailing-space
-- padding rule. Names and emails as given are utf8mb4 with the binary
-- utf8mb4_bin collation. Times are DATETIME(6) in UTC (the connection's
-- time_zone is +00:00): microsecond precision. Rows of a project are keyed
-- by (project_id, id): nothing is shared between projects.
--
-- Each statement is run on its own (no multi-statement packets); a
-- statement ends with a semicolon at the end of a line.

CREATE TABLE projects (
    id VARBINARY(63) NOT NULL PRIMARY KEY,
    created_at DATETIME(6) NOT NULL,
    -- The greatest (created_at, id) any contact of the project has had,
    -- deleted ones included. New contacts are placed after it, so they
    -- never appear before a cursor a client already holds.
    contacts_last_created_at DATETIME(6) NULL,
    contacts_last_id VARBINARY(128) NULL,
    -- The greatest (revoked_at, id) any revocation of the project has had,
    -- pruned ones included: the floor of the project's feed.
    revocations_last_at DATETIME(6) NULL,
    revocations_last_id VARBINARY(128) NULL,
    -- How many revocations the project's feed has ever had. The revocation
    -- watcher polls the sum over projects: it grows at every commit of a
    -- revocation, whichever instance makes it.
    revocations_count BIGINT NOT NULL DEFAULT 0,
    KEY projects_revocations_count (revocations_count)
) ENGINE = InnoDB;

CREATE TABLE users (
    project_id VARBINARY(63) NOT NULL,
    id VARBINARY(128) NOT NULL,
    email VARCHAR(320) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    -- store.NormalizeEmail(email): the form emails are compared in.
    email_normalized VARBINARY(1024) NOT NULL,
    password_hash VARBINARY(4096) NOT NULL,
    -- The tags as a JSON array of strings, in the order given.
    tags TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    created_at DATETIME(6) NOT NULL,
    disabled_at DATETIME(6) NULL,
    PRIMARY KEY (project_id, id),
    UNIQUE KEY users_email_unique (project_id, email_normalized),
    KEY users_list (project_id, created_at, id),
    CONSTRAINT users_project FOREIGN KEY (project_id) REFERENCES projects (id)
) ENGINE = InnoDB;

CREATE TABLE contacts (
    project_id VARBINARY(63) NOT NULL,
    -- The contact's position in the list: created_at as 8 bytes (Unix
    -- microseconds, big-endian, sign bit flipped), then id. Byte order on
    -- pos is (created_at, id) order, so a page after a cursor is the one
    -- range pos > cursor.
    pos VARBINARY(136) NOT NULL,
    id VARBINARY(128) NOT NULL,
    name VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    created_at DATETIME(6) NOT NULL,
    -- InnoDB keeps a table's rows in its primary key's order: with the
    -- position as the primary key, a page of ListContacts is one range of
    -- adjacent rows (no lookup per row, one range for the optimizer to
    -- plan), and new contacts, placed after the project's newest, are
    -- appended at the end of the project's range.
    PRIMARY KEY (project_id, pos),
    -- Ids are unique per project; DeleteContact finds a contact by it.
    UNIQUE KEY contacts_id (project_id, id),
    CONSTRAINT contacts_project FOREIGN KEY (project_id) REFERENCES projects (id)
) ENGINE = InnoDB;

CREATE TABLE api_keys (
    project_id VARBINARY(63) NOT NULL,
    id VARBINARY(128) NOT NULL,
    name VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    created_by VARBINARY(128) NOT NULL DEFAULT '',
    signing_key_id VARBINARY(128) NOT NULL DEFAULT '',
    created_at DATETIME(6) NOT NULL,
    last_used_at DATETIME(6) NULL,
    revoked_at DATETIME(6) NULL,
    PRIMARY KEY (project_id, id),
    CONSTRAINT api_keys_project FOREIGN KEY (project_id) REFERENCES projects (id)
) ENGINE = InnoDB;

CREATE TABLE signing_keys (
    project_id VARBINARY(63) NOT NULL,
    id VARBINARY(128) NOT NULL,
    public_key VARBINARY(64) NOT NULL,
    encrypted_private_key VARBINARY(4096) NOT NULL,
    created_at DATETIME(6) NOT NULL,
    retired_at DATETIME(6) NULL,
    PRIMARY KEY (project_id, id),
    CONSTRAINT signing_keys_project FOREIGN KEY (project_id) REFERENCES projects (id)
) ENGINE = InnoDB;

CREATE TABLE refresh_families (
    project_id VARBINARY(63) NOT NULL,
    id VARBINARY(128) NOT NULL,
    user_id VARBINARY(128) NOT NULL,
    generation BIGINT NOT NULL,
    issued_at DATETIME(6) NOT NULL,
    expires_at DATETIME(6) NOT NULL,
    created_at DATETIME(6) NOT NULL,
    -- The absolute end of the session; NULL for none.
    ends_at DATETIME(6) NULL,
    -- When the previous generation was exchanged for the current one;
    -- NULL while the family is at generation 0.
    rotated_at DATETIME(6) NULL,
    revoked_at DATETIME(6) NULL,
    PRIMARY KEY (project_id, id),
    -- DisableUser revokes every family of the user.
    KEY refresh_families_user (project_id, user_id),
    -- PruneRefreshFamilies.
    KEY refresh_families_revoked_at (revoked_at),
    KEY refresh_families_ends_at (ends_at),
    CONSTRAINT refresh_families_user FOREIGN KEY (project_id, user_id) REFERENCES users (project_id, id)
) ENGINE = InnoDB;

CREATE TABLE revocations (
    project_id VARBINARY(63) NOT NULL,
    id VARBINARY(128) NOT NULL,
    kind VARBINARY(16) NOT NULL,
    subject VARBINARY(128) NOT NULL,
    revoked_at DATETIME(6) NOT NULL,
    PRIMARY KEY (project_id, id),
    -- ListRevocations' keyset query.
    KEY revocations_keyset (project_id, revoked_at, id),
    -- PruneSessionRevocations.
    KEY revocations_kind_revoked_at (kind, revoked_at),
    CONSTRAINT revocations_project FOREIGN KEY (project_id) REFERENCES projects (id)
) ENGINE = InnoDB;

CREATE TABLE audit_log (
    project_id VARBINARY(63) NOT NULL,
    id VARBINARY(128) NOT NULL,
    occurred_at DATETIME(6) NOT NULL,
    actor VARBINARY(128) NOT NULL,
    action VARBINARY(128) NOT NULL,
    target VARBINARY(128) NOT NULL,
    client_addr VARBINARY(128) NOT NULL,
    PRIMARY KEY (project_id, id),
    -- ListAudit reads newest first, backwards on one of these: all entries,
    -- one action's, one target's.
    KEY audit_log_newest (project_id, occurred_at, id),
    KEY audit_log_action (project_id, action, occurred_at, id),
    KEY audit_log_target (project_id, target, occurred_at, id),
    -- PruneAudit.
    KEY audit_log_occurred_at (occurred_at),
    CONSTRAINT audit_log_project FOREIGN KEY (project_id) REFERENCES projects (id)
) ENGINE = InnoDB;

CREATE TABLE console_sessions (
    project_id VARBINARY(63) NOT NULL,
    -- The SHA-256 of the session's secret, in lowercase hex.
    id VARBINARY(128) NOT NULL,
    user_id VARBINARY(128) NOT NULL,
    created_at DATETIME(6) NOT NULL,
    last_seen_at DATETIME(6) NOT NULL,
    PRIMARY KEY (project_id, id),
    KEY console_sessions_last_seen_at (last_seen_at),
    KEY console_sessions_created_at (created_at),
    KEY console_sessions_user (project_id, user_id),
    CONSTRAINT console_sessions_project FOREIGN KEY (project_id) REFERENCES projects (id)
) ENGINE = InnoDB;

-- Fixed-window failure counters shared by every instance.
CREATE TABLE throttles (
    throttle_key VARBINARY(512) NOT NULL PRIMARY KEY,
    count INT NOT NULL,
    started_at DATETIME(6) NOT NULL,
    -- started_at plus the window of the last write; rows past it are pruned.
    reset_at DATETIME(6) NOT NULL,
    KEY throttles_reset_at (reset_at)
) ENGINE = InnoDB;
