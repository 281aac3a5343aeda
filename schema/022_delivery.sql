-- Delivery out of the box (issue 41).
--
-- A message is retried for `LEDGER_DELIVERY_RETRY_SECONDS` from when it was written, so the
-- claim returns its `created_at`. A message given up keeps, for `ledger deliveries list
-- --failed`, the way out that refused it and its recipient masked (`a•••@example.com`,
-- `+9955•••300`): the address or number itself is blanked as before.
ALTER TABLE outbox
    ADD COLUMN provider         text,
    ADD COLUMN recipient_masked text;

DROP FUNCTION ledger_outbox_claim(timestamptz, timestamptz, int);
CREATE FUNCTION ledger_outbox_claim(p_now timestamptz, p_lease_until timestamptz, p_limit int)
RETURNS TABLE (id uuid, channel text, recipient text, template text, code text, token text, link text,
               locale text, attempts int, details text, created_at timestamptz)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
    RETURN QUERY
    UPDATE outbox AS claimed SET next_attempt_at = p_lease_until, attempts = claimed.attempts + 1
     WHERE claimed.id IN (SELECT due.id FROM outbox AS due
                           WHERE due.delivered_at IS NULL AND due.failed_at IS NULL AND due.next_attempt_at <= p_now
                           ORDER BY due.next_attempt_at LIMIT p_limit FOR UPDATE SKIP LOCKED)
    RETURNING claimed.id, claimed.channel, claimed.recipient, claimed.template, claimed.code, claimed.token,
              claimed.link, claimed.locale, claimed.attempts, claimed.details, claimed.created_at;
END;
$$;

-- A delivered message goes after `LEDGER_OUTBOX_RETENTION_SECONDS`; one given up (a masked
-- recipient and its error are all it keeps) after a week, for `ledger deliveries list --failed`:
-- each by an index of its own.
DROP INDEX outbox_settled;
CREATE INDEX outbox_delivered ON outbox (delivered_at) WHERE delivered_at IS NOT NULL;
