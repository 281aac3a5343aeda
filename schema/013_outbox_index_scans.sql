-- The delivery dispatcher's statements on `outbox`, as functions that use index scans only.
--
-- A session keeps a prepared statement's plan once made. On a new store that happened while
-- `outbox` was nearly empty, and the plan scanned the whole table on every pass until
-- autovacuum next analyzed it, each pass slower as the table grew (issue 4's benchmark: 291
-- such scans in 5 s, 0.5 ms each and growing). These functions are planned on each call,
-- against the table as it is, and never by scanning it whole.
CREATE FUNCTION ledger_outbox_claim(p_now timestamptz, p_lease_until timestamptz, p_limit int)
RETURNS TABLE (id uuid, channel text, recipient text, template text, code text, token text, link text,
               locale text, attempts int)
LANGUAGE sql SET enable_seqscan = off AS $$
    UPDATE outbox AS claimed SET next_attempt_at = p_lease_until, attempts = claimed.attempts + 1
     WHERE claimed.id IN (SELECT due.id FROM outbox AS due
                           WHERE due.delivered_at IS NULL AND due.failed_at IS NULL AND due.next_attempt_at <= p_now
                           ORDER BY due.next_attempt_at LIMIT p_limit FOR UPDATE SKIP LOCKED)
    RETURNING claimed.id, claimed.channel, claimed.recipient, claimed.template, claimed.code, claimed.token,
              claimed.link, claimed.locale, claimed.attempts
$$;

-- Delivered: the plain code, token and link are blanked.
CREATE FUNCTION ledger_outbox_delivered(p_ids uuid[], p_at timestamptz) RETURNS void
LANGUAGE sql SET enable_seqscan = off AS $$
    UPDATE outbox AS sent SET delivered_at = p_at, code = NULL, token = NULL, link = NULL, last_error = NULL
     WHERE sent.id = ANY (p_ids)
$$;
