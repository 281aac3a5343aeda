-- API keys of backend services, auditors and compliance jobs. Only the SHA-256 of a key is
-- stored; the key itself is shown once by `ledger keys create`.
CREATE TABLE api_keys (
    id          uuid PRIMARY KEY,
    name        text NOT NULL,
    key_sha256  bytea NOT NULL UNIQUE,
    scopes      text[] NOT NULL,
    created_at  timestamptz NOT NULL,
    revoked_at  timestamptz
);
