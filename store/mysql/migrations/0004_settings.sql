-- 0004_settings: the deployment's settings (store.SettingStore), such as the
-- public URL its server recorded, for the command line. Names and values
-- are kept as the bytes given (store.CheckSetting admits UTF-8 only).
CREATE TABLE settings (
    name VARBINARY(64) NOT NULL PRIMARY KEY,
    value VARBINARY(4096) NOT NULL
) ENGINE = InnoDB;
