-- The support console's staff (docs/support.md "The console"): each person is a stream of
-- `staff.*` events (stream type `staff`, sealed under their own data key); these tables are
-- its projection, written in the events' transaction, for the lookups a request needs: an
-- address (`ledger staff add`), an invitation's token, a passkey's credential, a session's
-- cookie. Tokens are kept as SHA-256 only.
CREATE TABLE staff (
    staff_id               uuid PRIMARY KEY,
    email_normalized       text NOT NULL,
    role                   text NOT NULL CHECK (role IN ('support', 'admin')),
    invitation_sha256      bytea,
    invitation_expires_at  timestamptz,
    invited_at             timestamptz NOT NULL,
    removed_at             timestamptz
);
-- One live staff member per address; a removed one may be added again as new.
CREATE UNIQUE INDEX staff_live_email ON staff (email_normalized) WHERE removed_at IS NULL;
CREATE UNIQUE INDEX staff_invitation ON staff (invitation_sha256) WHERE invitation_sha256 IS NOT NULL;

CREATE TABLE staff_passkeys (
    credential_sha256 bytea PRIMARY KEY,
    staff_id          uuid NOT NULL REFERENCES staff (staff_id),
    passkey_id        uuid NOT NULL
);

CREATE TABLE staff_sessions (
    token_sha256 bytea PRIMARY KEY,
    staff_id     uuid NOT NULL REFERENCES staff (staff_id),
    session_id   uuid NOT NULL,
    expires_at   timestamptz NOT NULL,
    ended_at     timestamptz
);
CREATE INDEX staff_sessions_of_staff ON staff_sessions (staff_id) WHERE ended_at IS NULL;
