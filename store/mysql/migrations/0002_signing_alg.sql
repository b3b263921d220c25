-- 0002_signing_alg: each signing key names its algorithm (EdDSA, ES256 or
-- RS256), the only alg its tokens may name. Every key recorded before is an
-- Ed25519 key, so existing rows take EdDSA. The public key grows to hold an
-- RSA key of up to 8192 bits (PKCS #1 DER, about 1,040 bytes), and the
-- sealed private key such a key's PKCS #8 (about 4,800 bytes sealed).
ALTER TABLE signing_keys
    ADD COLUMN alg VARBINARY(8) NOT NULL DEFAULT 'EdDSA',
    ADD CONSTRAINT signing_keys_alg CHECK (alg IN ('EdDSA', 'ES256', 'RS256')),
    MODIFY public_key VARBINARY(2048) NOT NULL,
    MODIFY encrypted_private_key VARBINARY(8192) NOT NULL;
