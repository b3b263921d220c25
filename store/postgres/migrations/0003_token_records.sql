-- 0003_token_records: the records a bearer token depends on, as one
-- record.
--
-- ListContactsChecked reads a page of contacts and the records a token
-- depends on (its signing key, and its API key or session) in one
-- statement, and calls this function only when the records it kept from
-- an earlier statement may not be current (see keptrecords.go): a plan
-- that joins the records' tables costs their locks and the start of their
-- scans at every execution, even when a condition skips them, while a
-- function that is not called costs nothing.
--
-- The function is STABLE, so its query runs in the snapshot of the
-- statement that calls it, the page's. Ids are compared in the "C"
-- collation, as the columns are. An empty id asks for no record of that
-- kind; a record that does not exist is NULLs. The first field is true.
CREATE FUNCTION latchkey_token_records(
    in_project text, in_signing_key text, in_api_key text, in_session text
) RETURNS record
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    r record;
BEGIN
    SELECT true,
        sk.id, sk.public_key, sk.encrypted_private_key, sk.created_at, sk.retired_at,
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
