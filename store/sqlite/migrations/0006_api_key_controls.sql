-- 0006_api_key_controls: keys a team can hand out. An API key keeps its
-- scopes (space-separated, '' for a key that may do everything), an
-- optional expiry, and the keys of a roll: rolled_from on the successor,
-- rolled_to on the key it replaced. A roll with an overlap schedules the
-- old key's revocation in revokes_at; each verifier refuses the key from
-- that time on by its own clock (revoked_at, a revocation made, is refused
-- whatever the clock).
--
-- The feed item of such a revocation waits in scheduled_revocations until
-- it falls due: the first write to the project's feed, or the first
-- listing of it, at or after that time moves it into revocations at its
-- time, in the same transaction that moves the feed's floor, so that an
-- item is still never placed before one a reader has seen.
ALTER TABLE api_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;
ALTER TABLE api_keys ADD COLUMN rolled_from TEXT NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN rolled_to TEXT NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN revokes_at INTEGER;

CREATE TABLE scheduled_revocations (
	project_id TEXT    NOT NULL REFERENCES projects (id),
	due_at     INTEGER NOT NULL,
	subject    TEXT    NOT NULL,
	kind       TEXT    NOT NULL,
	PRIMARY KEY (project_id, due_at, subject)
) WITHOUT ROWID;
