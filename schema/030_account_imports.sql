-- Accounts brought from another system (`ledger import`, `POST /admin/accounts/import`), by the
-- keyed hash of their `(source, external_id)` (`Retention.Identifier.imported`, under the
-- cooldown list's key): a record already here is skipped, so a file imported twice, or again
-- after a crash, brings nobody twice. Not a projection: written in the import's transaction and
-- kept through rebuilds and purges, so a person who deleted their imported account does not
-- come back with the next run of the same file. It holds no personal data.
CREATE TABLE account_imports (
    key_hmac bytea PRIMARY KEY,
    account_id uuid NOT NULL,
    imported_at timestamptz NOT NULL
);
