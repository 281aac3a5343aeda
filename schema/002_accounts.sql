-- Account Ledger: projections of the account streams (DESIGN.md §3, §4).
--
-- Everything here is rebuilt from events; the rows that guard invariants (unique claims on
-- emails and handles, sessions) are written in the same transaction as the events.

CREATE TABLE accounts (
    account_id          uuid PRIMARY KEY,
    version             bigint NOT NULL,
    email               text,
    email_normalized    text UNIQUE,            -- the email claim: trimmed, lower-cased
    email_verified      boolean NOT NULL DEFAULT false,
    password_hash       text,
    password_changed_at timestamptz,
    display_name        text,
    handle              text,
    handle_normalized   text UNIQUE,            -- the handle claim: case-insensitive
    handle_is_temporary boolean NOT NULL DEFAULT false,
    created_at          timestamptz NOT NULL
);

CREATE TABLE sessions (
    session_id           uuid PRIMARY KEY,
    account_id           uuid NOT NULL,
    method               text NOT NULL,
    device               text,
    access_token_sha256  bytea NOT NULL UNIQUE,
    refresh_token_sha256 bytea NOT NULL UNIQUE,
    created_at           timestamptz NOT NULL,
    last_used_at         timestamptz NOT NULL,
    access_expires_at    timestamptz NOT NULL,
    refresh_expires_at   timestamptz NOT NULL,
    revoked_at           timestamptz,
    revoked_reason       text
);
CREATE INDEX sessions_by_account ON sessions (account_id);

-- Spent refresh tokens, so a reused one finds its session (reuse detection).
CREATE TABLE spent_refresh_tokens (
    refresh_token_sha256 bytea PRIMARY KEY,
    session_id           uuid NOT NULL,
    account_id           uuid NOT NULL
);
