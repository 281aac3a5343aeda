-- Unique claims for the sign-in methods of later issues: a phone number (E.164) and the
-- Apple and Google subjects. Ready now so the hub's projection has one home for every claim.
ALTER TABLE accounts
    ADD COLUMN phone_e164     text UNIQUE,
    ADD COLUMN phone_region   text,
    ADD COLUMN apple_subject  text UNIQUE,
    ADD COLUMN google_subject text UNIQUE;
