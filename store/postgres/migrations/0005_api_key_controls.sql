-- 0005_api_key_controls: keys a team can hand out. An API key keeps its
-- scopes (space-separated, '' for a key that may do everything), an
-- optional expiry, and the keys of a roll: rolled_from on the successor,
-- rolled_to on the key it replaced. A roll's revocation with an overlap
-- sets the old key's revoked_at in the future; the key is refused from
-- that time on (latchkey_token_records returns revoked_at as before, and
-- the verifier compares it with the time of the request).
--
-- The feed item of such a revocation waits in scheduled_revocations until
-- it falls due: the first write to the project's feed, or the first
-- listing of it, at or after that time moves it into revocations at its
-- time, under the project row's lock that places every item, so that an
-- item is still never placed before one a reader has seen.
ALTER TABLE api_keys
    ADD COLUMN scopes text NOT NULL DEFAULT '',
    ADD COLUMN expires_at timestamptz,
    ADD COLUMN rolled_from text COLLATE "C" NOT NULL DEFAULT '',
    ADD COLUMN rolled_to text COLLATE "C" NOT NULL DEFAULT '';

CREATE TABLE scheduled_revocations (
    project_id text COLLATE "C" NOT NULL REFERENCES projects (id),
    due_at timestamptz NOT NULL,
    subject text COLLATE "C" NOT NULL,
    kind text NOT NULL,
    PRIMARY KEY (project_id, due_at, subject)
);
