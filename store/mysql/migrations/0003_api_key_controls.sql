-- 0003_api_key_controls: keys a team can hand out. An API key keeps its
-- scopes (space-separated, '' for a key that may do everything: at most 32
-- names of at most 64 bytes), an optional expiry, and the keys of a roll:
-- rolled_from on the successor, rolled_to on the key it replaced. A roll
-- with an overlap schedules the old key's revocation in revokes_at; each
-- verifier refuses the key from that time on by its own clock (revoked_at,
-- a revocation made, is refused whatever the clock).
ALTER TABLE api_keys
    ADD COLUMN scopes VARBINARY(2080) NOT NULL DEFAULT '',
    ADD COLUMN expires_at DATETIME(6) NULL,
    ADD COLUMN rolled_from VARBINARY(128) NOT NULL DEFAULT '',
    ADD COLUMN rolled_to VARBINARY(128) NOT NULL DEFAULT '',
    ADD COLUMN revokes_at DATETIME(6) NULL,
    -- ListAPIKeysPage's keyset query (and ListAPIKeys' order).
    ADD KEY api_keys_list (project_id, created_at, id);

-- The feed item of a scheduled revocation waits here until it falls due:
-- the first write to the project's feed, or the first listing of it, at or
-- after that time moves it into revocations at its time, under the project
-- row's lock that places every item, so that an item is still never placed
-- before one a reader has seen.
CREATE TABLE scheduled_revocations (
    project_id VARBINARY(63) NOT NULL,
    due_at DATETIME(6) NOT NULL,
    subject VARBINARY(128) NOT NULL,
    kind VARBINARY(16) NOT NULL,
    PRIMARY KEY (project_id, due_at, subject),
    CONSTRAINT scheduled_revocations_project FOREIGN KEY (project_id) REFERENCES projects (id)
) ENGINE = InnoDB;
