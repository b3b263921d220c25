-- 0003_contact_pos: contacts are keyed by their list position, pos, instead
-- of (created_at, id).
--
-- pos is a BLOB: created_at (unix microseconds) as 8 bytes big-endian with
-- the sign bit flipped, followed by the id's bytes. BLOBs compare with
-- memcmp, so pos orders exactly as (created_at, id) with ids compared byte
-- by byte, and a page after a cursor is the single range pos > ?: SQLite
-- seeks to it and tests nothing per row. (With the row value
-- (created_at, id) > (?, ?) it re-tested every row of the page, which made
-- deep pages cost more than the first.) created_at and the id are read back
-- from pos; id stays a column of its own for the unique index and deletes.

CREATE TABLE contacts_new (
	project_id TEXT NOT NULL REFERENCES projects (id),
	pos        BLOB NOT NULL,
	id         TEXT NOT NULL,
	name       TEXT NOT NULL,
	PRIMARY KEY (project_id, pos)
) WITHOUT ROWID;

INSERT INTO contacts_new (project_id, pos, id, name)
SELECT project_id,
	-- || makes TEXT of its operands: cast the result back to a BLOB, which
	-- is how the store binds positions (a TEXT value sorts before every
	-- BLOB).
	CAST(unhex(printf('%016x', CASE WHEN created_at < 0
		THEN created_at + 9223372036854775807 + 1
		ELSE created_at - 9223372036854775807 - 1 END)) || id AS BLOB),
	id, name
FROM contacts;

DROP TABLE contacts;
ALTER TABLE contacts_new RENAME TO contacts;
CREATE UNIQUE INDEX contacts_id ON contacts (id);
