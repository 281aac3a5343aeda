-- The keys that sign JWT access tokens (ES256, P-256), made by the service (`ledger
-- signing-keys rotate`, or the first start with LEDGER_ACCESS_TOKEN_FORMAT=jwt). The private
-- key is sealed under a key derived from the master key and bound to its kid; the public half is
-- its JWK as `/.well-known/jwks.json` publishes it. A key signs from `activates_at` until a
-- newer key activates, and is published until the last token it signed has expired; then its
-- sealed private key is erased (`sealed_key` NULL) and the row stays as history.
CREATE TABLE signing_keys (
    kid           text PRIMARY KEY,
    sealed_key    bytea,
    master_key_id text NOT NULL,
    public_jwk    jsonb NOT NULL,
    created_at    timestamptz NOT NULL,
    activates_at  timestamptz NOT NULL
);
