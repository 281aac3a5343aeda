-- Deletion (DESIGN.md §4): the schedule the purge worker reads, and the re-signup cooldowns.
-- A deleted account keeps its row (for the purge) but gives up its unique claims at once.
ALTER TABLE accounts
    ADD COLUMN deleted_at  timestamptz,
    ADD COLUMN purge_after timestamptz;
CREATE INDEX accounts_purge_due ON accounts (purge_after) WHERE purge_after IS NOT NULL;

-- Identifiers of deleted accounts that may not register again before `until`: keyed hashes
-- (HMAC-SHA256 under a key derived from the master key) of `email:…`, `phone:…`, `apple:…`,
-- `google:…`, never the identifiers themselves.
CREATE TABLE signup_cooldowns (
    key_hmac   bytea PRIMARY KEY,
    account_id uuid NOT NULL,
    until      timestamptz NOT NULL
);
