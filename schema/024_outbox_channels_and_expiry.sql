-- A message whose code or link has stopped working is not worth sending (`expires_at`: given up,
-- not retried), and each channel has a dispatcher of its own, so a slow relay for one never
-- holds up the other (`ledger_outbox_claim` takes the channels to claim).
ALTER TABLE outbox ADD COLUMN expires_at timestamptz;

DROP FUNCTION ledger_outbox_claim(timestamptz, timestamptz, int);
CREATE FUNCTION ledger_outbox_claim(p_now timestamptz, p_lease_until timestamptz, p_limit int, p_channels text[])
RETURNS TABLE (id uuid, channel text, recipient text, template text, code text, token text, link text,
               locale text, attempts int, details text, created_at timestamptz, expires_at timestamptz)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
    RETURN QUERY
    UPDATE outbox AS claimed SET next_attempt_at = p_lease_until, attempts = claimed.attempts + 1
     WHERE claimed.id IN (SELECT due.id FROM outbox AS due
                           WHERE due.delivered_at IS NULL AND due.failed_at IS NULL AND due.next_attempt_at <= p_now
                             AND due.channel = ANY (p_channels)
                           ORDER BY due.next_attempt_at LIMIT p_limit FOR UPDATE SKIP LOCKED)
    RETURNING claimed.id, claimed.channel, claimed.recipient, claimed.template, claimed.code, claimed.token,
              claimed.link, claimed.locale, claimed.attempts, claimed.details, claimed.created_at, claimed.expires_at;
END;
$$;
