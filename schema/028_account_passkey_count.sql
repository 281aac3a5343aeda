-- How many passkeys an account has, on its row: the hub (`GET /me/auth-methods`, one of the
-- hottest reads) shows it from the one statement that finds the session, without counting
-- passkey_credentials each time. Written by the projector with the rest of the row.
ALTER TABLE accounts ADD COLUMN passkeys int8 NOT NULL DEFAULT 0;
