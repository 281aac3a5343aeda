-- Recovery that holds (issue 40).
--
-- `signup_cooldowns` lists two kinds of identifier, answered differently: a deleted account's
-- (`409 signup_cooldown`, "deleted recently") and the address an email change or removal took
-- away while its revert link lives (`409 email_held`, "recently used by another account").
ALTER TABLE signup_cooldowns
    ADD COLUMN reason text NOT NULL DEFAULT 'deleted' CHECK (reason IN ('deleted', 'held'));

-- Holds that lapse on their own: a session or booking when it starts. The service appends
-- `hold.lapsed` within seconds of `lapses_at` (HoldLapseWorker), so consumers see the hold go.
-- Payouts and disputes stand until a backend releases them, and have no row here.
CREATE TABLE hold_lapses (
    account_id uuid NOT NULL,
    ref        text NOT NULL,
    lapses_at  timestamptz NOT NULL,
    PRIMARY KEY (account_id, ref)
);
CREATE INDEX hold_lapses_due ON hold_lapses (lapses_at);

-- Apple notification ids acted on, service-wide: a notification is accepted up to a day late
-- (an outage must not lose an account-delete), and one replayed after a deletion and a re-signup
-- with the same Apple ID must not act on the new account. Kept two days (RetentionSweep).
CREATE TABLE apple_notifications (
    notification_id text PRIMARY KEY,
    received_at     timestamptz NOT NULL
);
CREATE INDEX apple_notifications_by_received ON apple_notifications (received_at);

-- The address `add-with-password` waits to have confirmed, shown in the hub as `pending_email`
-- until its link expires; nothing about it is claimed (no unique index).
ALTER TABLE accounts
    ADD COLUMN pending_email            text,
    ADD COLUMN pending_email_expires_at timestamptz;
-- The retention sweep clears a pending address once its link has long expired.
CREATE INDEX accounts_pending_email_expiry ON accounts (pending_email_expires_at) WHERE pending_email_expires_at IS NOT NULL;
