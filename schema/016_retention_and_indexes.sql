-- Retention and indexes (issue 22): nothing personal outlives its use, and neither a purge nor
-- a scrape of /metrics scans a table.
--
-- A delivered message keeps no address either (its code, token and link were already dropped).
CREATE OR REPLACE FUNCTION ledger_outbox_delivered(p_ids uuid[], p_at timestamptz) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
    UPDATE outbox AS sent
       SET delivered_at = p_at, recipient = NULL, code = NULL, token = NULL, link = NULL, last_error = NULL
     WHERE sent.id = ANY (p_ids);
END;
$$;

-- What the retention sweep deletes by age.
CREATE INDEX login_throttle_by_window ON login_throttle (window_started);
CREATE INDEX otp_requests_by_created ON otp_requests (created_at);
CREATE INDEX outbox_settled ON outbox ((coalesce(delivered_at, failed_at))) WHERE delivered_at IS NOT NULL OR failed_at IS NOT NULL;
CREATE INDEX email_links_by_expiry ON email_links (expires_at);

-- What a purge deletes by account: every table it touches has an index on account_id.
CREATE INDEX otp_requests_by_subject ON otp_requests (account_id);
CREATE INDEX outbox_by_account ON outbox (account_id);
CREATE INDEX spent_refresh_tokens_by_account ON spent_refresh_tokens (account_id);
CREATE INDEX signup_cooldowns_by_account ON signup_cooldowns (account_id);

-- What /metrics counts at every scrape, by index only.
CREATE INDEX outbox_failed ON outbox (failed_at) WHERE failed_at IS NOT NULL;
CREATE INDEX subject_keys_destroyed ON subject_keys (destroyed_at) WHERE destroyed_at IS NOT NULL;

-- The retention sweep's look for abandoned code requests' keys: recent live keys only.
CREATE INDEX subject_keys_live_by_created ON subject_keys (created_at) WHERE wrapped_key IS NOT NULL;
