-- Recovery that holds (issue 40).
--
-- `signup_cooldowns` lists two kinds of identifier, answered differently: a deleted account's
-- (`409 signup_cooldown`, "deleted recently") and the address an email change or removal took
-- away while its revert link lives (`409 email_held`, "recently used by another account").
ALTER TABLE signup_cooldowns
    ADD COLUMN reason text NOT NULL DEFAULT 'deleted' CHECK (reason IN ('deleted', 'held'));
