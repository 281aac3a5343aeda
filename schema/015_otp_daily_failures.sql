-- Wrong codes per request, so that code requests for a number can be refused once it has had
-- LEDGER_OTP_DAILY_FAILURE_LIMIT wrong codes in 24 hours, all its codes together (issue 21):
-- a guesser can no longer spread attempts over fresh codes without end.
ALTER TABLE otp_requests ADD COLUMN failed_attempts integer NOT NULL DEFAULT 0;
