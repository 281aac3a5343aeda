-- Two-factor authentication and the sessions screen (issue 25).
--
-- The hub shows whether TOTP is on and how many recovery codes are left, read with the account
-- in the one query `GET /me/auth-methods` makes.
ALTER TABLE accounts ADD COLUMN totp_enabled boolean NOT NULL DEFAULT false;
ALTER TABLE accounts ADD COLUMN recovery_codes_left int8 NOT NULL DEFAULT 0;

-- `last_used_at` moves on use (at most once a minute per session, written beside the request,
-- not as an event); the sessions screen lists an account's live sessions by it.
CREATE INDEX sessions_live_by_account ON sessions (account_id, last_used_at) WHERE revoked_at IS NULL;

-- The new sign-in alert carries what it is about (device, time) beside the usual fields.
ALTER TABLE outbox ADD COLUMN details text;

DROP FUNCTION ledger_outbox_claim(timestamptz, timestamptz, int);
CREATE FUNCTION ledger_outbox_claim(p_now timestamptz, p_lease_until timestamptz, p_limit int)
RETURNS TABLE (id uuid, channel text, recipient text, template text, code text, token text, link text,
               locale text, attempts int, details text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
    RETURN QUERY
    UPDATE outbox AS claimed SET next_attempt_at = p_lease_until, attempts = claimed.attempts + 1
     WHERE claimed.id IN (SELECT due.id FROM outbox AS due
                           WHERE due.delivered_at IS NULL AND due.failed_at IS NULL AND due.next_attempt_at <= p_now
                           ORDER BY due.next_attempt_at LIMIT p_limit FOR UPDATE SKIP LOCKED)
    RETURNING claimed.id, claimed.channel, claimed.recipient, claimed.template, claimed.code, claimed.token,
              claimed.link, claimed.locale, claimed.attempts, claimed.details;
END;
$$;

CREATE OR REPLACE FUNCTION ledger_outbox_delivered(p_ids uuid[], p_at timestamptz) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
    UPDATE outbox AS sent
       SET delivered_at = p_at, recipient = NULL, code = NULL, token = NULL, link = NULL, details = NULL, last_error = NULL
     WHERE sent.id = ANY (p_ids);
END;
$$;
