-- Deletions asked for but blocked by holds (issue 24: Apple's account-delete on an account with a
-- pending payout): the purge worker schedules each once its holds have lapsed or been released.
ALTER TABLE accounts ADD COLUMN deletion_requested_at timestamptz;
CREATE INDEX accounts_deletion_requested ON accounts (deletion_requested_at)
    WHERE deletion_requested_at IS NOT NULL AND deleted_at IS NULL;
