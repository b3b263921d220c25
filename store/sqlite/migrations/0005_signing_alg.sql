-- 0005_signing_alg: each signing key names its algorithm (EdDSA, ES256 or
-- RS256), the only alg its tokens may name. Every key recorded before is an
-- Ed25519 key, so existing rows take EdDSA.

ALTER TABLE signing_keys ADD COLUMN alg TEXT NOT NULL DEFAULT 'EdDSA'
	CHECK (alg IN ('EdDSA', 'ES256', 'RS256'));
