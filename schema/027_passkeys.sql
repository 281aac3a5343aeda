-- Passkeys (issue 45).
--
-- The passkeys of live accounts, by their credential id's SHA-256 (projected from the account
-- streams, rebuilt with them): a passkey sign-in names only its credential, and finds its
-- account here. A credential id belongs to one account: a registration naming one another
-- account holds is refused (409 passkey_exists), so no crafted registration can make a
-- credential ambiguous. Rows leave with the passkey, and at the account's deletion.
CREATE TABLE passkey_credentials (
    credential_sha256 bytea PRIMARY KEY,
    account_id        uuid NOT NULL,
    passkey_id        uuid NOT NULL
);
CREATE INDEX passkey_credentials_account ON passkey_credentials (account_id);

-- Passkey challenges answered, by SHA-256, until they would have expired anyway (then the
-- retention sweep deletes them). The challenges themselves are not stored: each is sealed with
-- its purpose, session and expiry under a key derived from the master key, so a flood of
-- options requests writes nothing. Its first answer, accepted or refused, spends it.
CREATE TABLE spent_passkey_challenges (
    challenge_sha256 bytea PRIMARY KEY,
    expires_at       timestamptz NOT NULL
);
CREATE INDEX spent_passkey_challenges_expiry ON spent_passkey_challenges (expires_at);
