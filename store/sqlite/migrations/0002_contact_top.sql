-- 0002_contact_top: each project remembers the newest contact position it
-- has ever had, (contact_top_at, contact_top_id), deleted contacts included.
-- New contacts are placed after it, so a client holding a cursor that names
-- a deleted contact never has new contacts appear before its cursor.

ALTER TABLE projects ADD COLUMN contact_top_at INTEGER;
ALTER TABLE projects ADD COLUMN contact_top_id TEXT;

UPDATE projects SET (contact_top_at, contact_top_id) = (
	SELECT c.created_at, c.id FROM contacts AS c WHERE c.project_id = projects.id
	ORDER BY c.created_at DESC, c.id DESC LIMIT 1
);
