-- 0006_settings: the deployment's settings (store.SettingStore), such as the
-- public URL its server recorded, for the command line.

CREATE TABLE settings (
    name text COLLATE "C" PRIMARY KEY,
    value text NOT NULL
);
