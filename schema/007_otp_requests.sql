-- OTP requests (the `otp` streams, one per request), projected for the send limits and the
-- owner lookups. `client_address` is operational: it feeds the per-address cap and is not in
-- any event, so a rebuild leaves it empty (the caps then start afresh).
CREATE TABLE otp_requests (
    request_id     uuid PRIMARY KEY,
    account_id     uuid NOT NULL,          -- the subject: the account, or the one a sign-in would create
    session_id     uuid,                   -- the session that asked (every purpose but sign_in)
    purpose        text NOT NULL,
    phone_e164     text NOT NULL,
    client_address text,
    created_at     timestamptz NOT NULL,
    expires_at     timestamptz NOT NULL,
    closed_at      timestamptz             -- verified, invalidated or cancelled
);
CREATE INDEX otp_requests_by_phone ON otp_requests (phone_e164, purpose, created_at);
CREATE INDEX otp_requests_by_address ON otp_requests (client_address, created_at) WHERE client_address IS NOT NULL;
CREATE INDEX otp_requests_by_account ON otp_requests (account_id, created_at) WHERE session_id IS NOT NULL;
