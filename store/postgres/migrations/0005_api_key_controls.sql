-- 0005_api_key_controls: keys a team can hand out. An API key keeps its
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
-- time, under the project row's lock that places every item, so that an
-- item is still never placed before one a reader has seen.
ALTER TABLE api_keys
    ADD COLUMN scopes text NOT NULL DEFAULT '',
    ADD COLUMN expires_at timestamptz,
    ADD COLUMN rolled_from text COLLATE "C" NOT NULL DEFAULT '',
    ADD COLUMN rolled_to text COLLATE "C" NOT NULL DEFAULT '',
    ADD COLUMN revokes_at timestamptz;

CREATE TABLE scheduled_revocations (
    project_id text COLLATE "C" NOT NULL REFERENCES projects (id),
    due_at timestamptz NOT NULL,
    subject text COLLATE "C" NOT NULL,
    kind text NOT NULL,
    PRIMARY KEY (project_id, due_at, subject)
);

-- The records a bearer token depends on (0003, with the signing key's
-- algorithm since 0004) gain the API key's scheduled revocation, as the
-- record's last field.
CREATE OR REPLACE FUNCTION latchkey_token_records(
    in_project text, in_signing_key text, in_api_key text, in_session text
) RETURNS record
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    r record;
BEGIN
    SELECT true,
        sk.id, sk.public_key, sk.encrypted_private_key, sk.created_at, sk.retired_at, sk.alg,
        ak.id, ak.name, ak.created_by, ak.signing_key_id, ak.created_at, ak.last_used_at, ak.revoked_at,
        f.id, f.user_id, f.generation, f.issued_at, f.expires_at, f.created_at, f.ends_at, f.revoked_at,
        ak.revokes_at
    INTO r
    FROM (SELECT) one
    LEFT JOIN signing_keys sk
        ON sk.project_id = in_project COLLATE "C" AND sk.id = in_signing_key COLLATE "C"
    LEFT JOIN api_keys ak
        ON in_api_key <> '' AND ak.project_id = in_project COLLATE "C" AND ak.id = in_api_key COLLATE "C"
    LEFT JOIN refresh_families f
        ON in_session <> '' AND f.project_id = in_project COLLATE "C" AND f.id = in_session COLLATE "C";
    RETURN r;
END
$$;
