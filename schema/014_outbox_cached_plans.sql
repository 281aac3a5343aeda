-- The delivery dispatcher's functions of 013, in PL/pgSQL, so that their plans are cached.
--
-- A LANGUAGE sql function that cannot be inlined (these update) is parsed and planned again
-- on every call: the claim cost 0.21 ms a call against 0.07 ms this way, and the dispatcher
-- claims after every commit (issue 4's benchmark: three claims per OTP pair, 40% of what
-- PostgreSQL spent on a pair). PL/pgSQL keeps one plan per session; it is made with
-- `enable_seqscan = off`, so it is an index scan however empty `outbox` was at the time, and
-- `force_generic_plan` keeps it from being replanned for the id array.
CREATE OR REPLACE FUNCTION ledger_outbox_claim(p_now timestamptz, p_lease_until timestamptz, p_limit int)
RETURNS TABLE (id uuid, channel text, recipient text, template text, code text, token text, link text,
               locale text, attempts int)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
    RETURN QUERY
    UPDATE outbox AS claimed SET next_attempt_at = p_lease_until, attempts = claimed.attempts + 1
     WHERE claimed.id IN (SELECT due.id FROM outbox AS due
                           WHERE due.delivered_at IS NULL AND due.failed_at IS NULL AND due.next_attempt_at <= p_now
                           ORDER BY due.next_attempt_at LIMIT p_limit FOR UPDATE SKIP LOCKED)
    RETURNING claimed.id, claimed.channel, claimed.recipient, claimed.template, claimed.code, claimed.token,
              claimed.link, claimed.locale, claimed.attempts;
END;
$$;

CREATE OR REPLACE FUNCTION ledger_outbox_delivered(p_ids uuid[], p_at timestamptz) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
    UPDATE outbox AS sent SET delivered_at = p_at, code = NULL, token = NULL, link = NULL, last_error = NULL
     WHERE sent.id = ANY (p_ids);
END;
$$;
