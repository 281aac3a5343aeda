-- One-shot email links, by the SHA-256 of their token (the token itself is never stored
-- here), rebuilt from the `*.sent` / `*.requested` events that carry the hash.
CREATE TABLE email_links (
    token_sha256 bytea PRIMARY KEY,
    link_id      uuid NOT NULL UNIQUE,
    account_id   uuid NOT NULL,
    purpose      text NOT NULL,
    expires_at   timestamptz NOT NULL,
    used_at      timestamptz
);
CREATE INDEX email_links_by_account ON email_links (account_id, purpose);

-- The transactional outbox (DESIGN.md §5): written in the transaction of the event that
-- causes the message. Plain codes, tokens and links live here only until delivered, then
-- are blanked.
CREATE TABLE outbox (
    id              uuid PRIMARY KEY,
    account_id      uuid,
    channel         text NOT NULL CHECK (channel IN ('sms', 'email')),
    recipient       text,
    template        text NOT NULL,
    code            text,
    token           text,
    link            text,
    locale          text NOT NULL DEFAULT 'en',
    created_at      timestamptz NOT NULL,
    next_attempt_at timestamptz NOT NULL,
    attempts        int NOT NULL DEFAULT 0,
    delivered_at    timestamptz,
    failed_at       timestamptz,
    last_error      text
);
CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE delivered_at IS NULL AND failed_at IS NULL;
