-- 0007_settings: the deployment's settings (store.SettingStore), such as the
-- public URL its server recorded, for the command line.

CREATE TABLE settings (
	name  TEXT NOT NULL PRIMARY KEY,
	value TEXT NOT NULL
);
