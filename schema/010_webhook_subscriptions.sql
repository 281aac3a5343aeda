-- Webhook subscriptions (API.md "Events and audit"): each follows the commit-ordered feed
-- from its own cursor and is pushed to by one dispatcher at a time (the lease).
CREATE TABLE webhook_subscriptions (
    id                   uuid PRIMARY KEY,
    url                  text NOT NULL,
    types                text[],                        -- NULL: every event type
    secret_sealed        bytea NOT NULL,                -- AES-256-GCM under a key derived from the master key
    created_at           timestamptz NOT NULL,
    deleted_at           timestamptz,
    -- The last event delivered (acknowledged with a 2xx): the feed cursor's two halves.
    cursor_tx            xid8 NOT NULL,
    cursor_position      bigint NOT NULL,
    status               text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused')),
    paused_reason        text,
    consecutive_failures int NOT NULL DEFAULT 0,
    next_attempt_at      timestamptz NOT NULL,
    last_error           text,
    last_error_at        timestamptz,
    last_success_at      timestamptz,
    delivered_events     bigint NOT NULL DEFAULT 0,
    lease_owner          uuid,
    lease_until          timestamptz
);
CREATE INDEX webhook_subscriptions_due ON webhook_subscriptions (next_attempt_at)
    WHERE deleted_at IS NULL AND status = 'active';
