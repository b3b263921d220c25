-- 0004_signing_alg: each signing key names its algorithm (EdDSA, ES256 or
-- RS256), the only alg its tokens may name. Every key recorded before is an
-- Ed25519 key, so existing rows take EdDSA; adding a column with a constant
-- default rewrites no row.
ALTER TABLE signing_keys ADD COLUMN alg text COLLATE "C" NOT NULL DEFAULT 'EdDSA'
    CHECK (alg IN ('EdDSA', 'ES256', 'RS256'));

-- latchkey_token_records (0003) returns the key's algorithm too, after its
-- other columns, so that a checked read returns the signing key as
-- GetSigningKey does.
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
        f.id, f.user_id, f.generation, f.issued_at, f.expires_at, f.created_at, f.ends_at, f.revoked_at
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
