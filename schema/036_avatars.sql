-- The accounts' pictures (docs/accounts.md "Avatars"): the JPEG the service made from an upload,
-- sealed under the account's data key like its events (bound to the account and the etag), so
-- the key's destruction at the purge leaves nothing readable, and the purge deletes the row
-- besides (PurgeWorker.accountTables). One row per account: a new picture replaces the old,
-- in the transaction that appends `avatar.set`. Not a projection: a rebuild leaves it alone.
CREATE TABLE avatars (
    account_id  uuid PRIMARY KEY,
    etag        text NOT NULL,
    sealed      bytea NOT NULL,
    updated_at  timestamptz NOT NULL
);
