-- An append writes its events and nothing else (issue 27, part 1).
--
-- Until now every append also moved its stream's row in `streams` (version, head hash): a
-- second row written, and half of a commit's WAL, for a copy of what the stream's last event
-- already holds. BENCHMARKS.md ("Issue 27 — appends that write only their events") measured
-- that update at a tenth of the ceiling or more at 8 and 32 writers.
--
-- Now:
--  * `stream_catalog` registers a stream once, at its first event: its type, subject and
--    creation time, which the events do not hold.
--  * `streams` is a view with the columns it always had: the version, head hash and update
--    time are the stream's last event, read by the primary key (one index probe). Readers
--    are unchanged and can never see a head that disagrees with the events.
--  * The hash chain is unchanged: each event's `prev_hash` is its predecessor's `hash`, read
--    from the predecessor row by the primary key under the stream's lock.
--  * The feed order is unchanged: every append still takes its streams' locks before it
--    writes (docs/architecture.md "Event store rules").
--
-- What `streams` no longer gives: a second copy of the head for `ledger verify` to compare
-- the last event with. A row deleted from a stream's end leaves a shorter chain that holds
-- (and the next append takes its version again); a signed checkpoint taken after that row
-- finds it (`ledger verify --checkpoint`), since it records every head. A forger who can
-- delete rows could always update `streams` too.
ALTER TABLE streams RENAME TO stream_catalog;
ALTER INDEX streams_pkey RENAME TO stream_catalog_pkey;
ALTER TABLE stream_catalog DROP COLUMN version, DROP COLUMN head_hash, DROP COLUMN updated_at;

CREATE VIEW streams AS
SELECT c.stream_id, c.stream_type, h.stream_version AS version, h.hash AS head_hash, c.subject_id, c.created_at,
       h.recorded_at AS updated_at
  FROM stream_catalog c
  JOIN LATERAL (SELECT e.stream_version, e.hash, e.recorded_at FROM events e
                 WHERE e.stream_id = c.stream_id ORDER BY e.stream_version DESC LIMIT 1) AS h ON true;

-- One append, as before (same arguments, answers and errors), now three statements: the
-- lock, one lookup (the head from the last event, the event ids, the subject key), the
-- inserts; the catalog row only for a new stream.
CREATE OR REPLACE FUNCTION ledger_append(
    p_stream_id uuid, p_stream_type text, p_expected_kind text, p_expected_version bigint,
    p_subject_id uuid, p_recorded_at timestamptz,
    p_event_ids uuid[], p_event_types text[], p_schema_versions int[],
    p_payloads bytea, p_payload_lengths int[], p_metadata jsonb
) RETURNS TABLE (first_version bigint, last_version bigint, first_position bigint, last_position bigint,
                 replayed boolean)
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
    v_count     int := coalesce(cardinality(p_event_ids), 0);
    v_current   bigint;
    v_head      bytea;
    v_prev      bytea;
    v_found     boolean;
    v_replay    boolean;
    v_key_ok    boolean;
    v_existing  int;
    v_matching  int;
    v_offset    int := 1;
    v_payload   bytea;
    v_digest    bytea;
    v_metadata  jsonb;
    v_version   bigint;
    v_position  bigint;
    v_first_pos bigint;
    v_micros    text := ((extract(epoch FROM p_recorded_at) * 1000000)::bigint)::text;
    v_stream    text := p_stream_id::text;
BEGIN
    IF v_count = 0 OR cardinality(p_event_types) <> v_count OR cardinality(p_schema_versions) <> v_count
       OR cardinality(p_payload_lengths) <> v_count OR jsonb_array_length(p_metadata) <> v_count THEN
        RAISE EXCEPTION 'ledger_append: malformed call' USING ERRCODE = 'LA002';
    END IF;
    IF p_expected_kind NOT IN ('any', 'no_stream', 'exact', 'exists') THEN
        RAISE EXCEPTION 'ledger_append: unknown expectation' USING ERRCODE = 'LA002';
    END IF;

    PERFORM pg_advisory_xact_lock(ledger_stream_lock_key(p_stream_id));

    -- Its snapshot is taken after the lock: the head read is the committed one.
    SELECT h.stream_version, h.hash,
           EXISTS (SELECT 1 FROM events e WHERE e.event_id = ANY (p_event_ids)),
           p_subject_id IS NULL OR EXISTS (SELECT 1 FROM subject_keys k
                                           WHERE k.subject_id = p_subject_id AND k.wrapped_key IS NOT NULL)
      INTO v_current, v_head, v_replay, v_key_ok
      FROM (SELECT 1) AS one
      LEFT JOIN LATERAL (SELECT e.stream_version, e.hash FROM events e
                          WHERE e.stream_id = p_stream_id ORDER BY e.stream_version DESC LIMIT 1) AS h ON true;
    v_found := v_current IS NOT NULL;

    -- Idempotency: a retried append finds its events already stored and gets the original result.
    IF v_replay THEN
        SELECT count(*),
               count(*) FILTER (WHERE e.stream_id = p_stream_id
                                  AND e.event_type = p_event_types[i.n]
                                  AND e.schema_version = p_schema_versions[i.n]
                                  AND e.payload_sha256 = sha256(substring(p_payloads FROM (
                                        SELECT coalesce(sum(l), 0)::int + 1 FROM unnest(p_payload_lengths[1:i.n - 1]) AS l)
                                        FOR p_payload_lengths[i.n]))
                                  AND e.metadata = p_metadata -> (i.n::int - 1))
          INTO v_existing, v_matching
          FROM unnest(p_event_ids) WITH ORDINALITY AS i(id, n)
          JOIN events e ON e.event_id = i.id;
        IF v_existing = v_count AND v_matching = v_count THEN
            RETURN QUERY
                SELECT min(e.stream_version), max(e.stream_version), min(e.global_position), max(e.global_position), true
                  FROM events e WHERE e.event_id = ANY (p_event_ids);
            RETURN;
        END IF;
        RAISE EXCEPTION 'ledger_append: an event id was already used for other content'
            USING ERRCODE = 'LA003';
    END IF;

    IF NOT v_found THEN
        v_current := 0;
        v_head := '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea;
    END IF;

    IF (p_expected_kind = 'no_stream' AND v_current <> 0)
       OR (p_expected_kind = 'exact' AND v_current <> p_expected_version)
       OR (p_expected_kind = 'exists' AND v_current = 0) THEN
        RAISE EXCEPTION 'ledger_append: wrong expected version'
            USING ERRCODE = 'LA001', DETAIL = v_current::text;
    END IF;

    IF NOT v_key_ok THEN
        RAISE EXCEPTION 'ledger_append: the subject''s data key is missing or destroyed' USING ERRCODE = 'LA004';
    END IF;

    FOR i IN 1 .. v_count LOOP
        v_payload := substring(p_payloads FROM v_offset FOR p_payload_lengths[i]);
        v_offset := v_offset + p_payload_lengths[i];
        v_digest := sha256(v_payload);
        v_metadata := p_metadata -> (i - 1);
        v_version := v_current + i;
        v_prev := v_head;
        -- The canonical form of ledger_event_canonical, inlined (it is the hot path).
        v_head := sha256(v_prev || convert_to(concat_ws(E'\n',
            'ledger-event-v1', v_stream, v_version::text, p_event_types[i], p_schema_versions[i]::text,
            encode(v_digest, 'hex'), v_metadata::text, v_micros), 'UTF8'));
        INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, subject_id,
                            payload, payload_sha256, metadata, recorded_at, prev_hash, hash)
        VALUES (p_stream_id, v_version, p_event_ids[i], p_event_types[i], p_schema_versions[i], p_subject_id,
                v_payload, v_digest, v_metadata, p_recorded_at, v_prev, v_head)
        RETURNING global_position INTO v_position;
        IF i = 1 THEN v_first_pos := v_position; END IF;
    END LOOP;

    IF NOT v_found THEN
        INSERT INTO stream_catalog (stream_id, stream_type, subject_id, created_at)
        VALUES (p_stream_id, p_stream_type, p_subject_id, p_recorded_at)
        ON CONFLICT (stream_id) DO NOTHING;
    END IF;

    first_version := v_current + 1;
    last_version := v_current + v_count;
    first_position := v_first_pos;
    last_position := v_position;
    replayed := false;
    RETURN NEXT;
END;
$$;

-- Group commit in two statements, as in 012: the stream locks, in stream order (their count
-- says whether a stream is named twice); then one statement, its snapshot taken after the
-- locks so every head and key it reads is the committed one, that checks each append,
-- chains and inserts. Only single-event appends to distinct streams are taken; anything
-- else goes to `ledger_append_each`, as before.
CREATE OR REPLACE FUNCTION ledger_append_batch(
    p_stream_ids uuid[], p_stream_types text[], p_expected_kinds text[], p_expected_versions bigint[],
    p_subject_ids uuid[], p_event_counts int[], p_recorded_at timestamptz,
    p_event_ids uuid[], p_event_types text[], p_schema_versions int[],
    p_payloads bytea, p_payload_lengths int[], p_metadata jsonb
) RETURNS TABLE (ordinal int, first_version bigint, last_version bigint, first_position bigint, last_position bigint,
                 replayed boolean, error_state text, error_detail text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
DECLARE
    v_appends int := coalesce(cardinality(p_stream_ids), 0);
    v_micros  text := ((extract(epoch FROM p_recorded_at) * 1000000)::bigint)::text;
    v_locked  bigint := 0;
BEGIN
    IF v_appends = 0 THEN RETURN; END IF;
    IF cardinality(p_event_ids) = v_appends AND cardinality(p_stream_types) = v_appends
       AND cardinality(p_expected_kinds) = v_appends AND cardinality(p_expected_versions) = v_appends
       AND cardinality(p_subject_ids) = v_appends AND cardinality(p_event_counts) = v_appends
       AND cardinality(p_event_types) = v_appends AND cardinality(p_schema_versions) = v_appends
       AND cardinality(p_payload_lengths) = v_appends AND jsonb_array_length(p_metadata) = v_appends
       AND 1 = ALL (p_event_counts) THEN
        SELECT count(*) INTO v_locked
          FROM (SELECT pg_advisory_xact_lock(ledger_stream_lock_key(ids.s))
                  FROM (SELECT DISTINCT s FROM unnest(p_stream_ids) AS s ORDER BY s) AS ids) AS held;
    END IF;
    IF v_locked <> v_appends THEN
        RETURN QUERY SELECT * FROM ledger_append_each(
            p_stream_ids, p_stream_types, p_expected_kinds, p_expected_versions, p_subject_ids, p_event_counts,
            p_recorded_at, p_event_ids, p_event_types, p_schema_versions, p_payloads, p_payload_lengths, p_metadata);
        RETURN;
    END IF;

    RETURN QUERY
        WITH appends AS (
            SELECT a.*, sha256(a.payload) AS digest
              FROM (SELECT n, p_stream_ids[n] AS stream, p_subject_ids[n] AS subject, p_expected_kinds[n] AS kind,
                           p_expected_versions[n] AS expected, p_event_ids[n] AS event_id, p_event_types[n] AS type,
                           p_schema_versions[n] AS schema_version, p_metadata -> (n - 1) -> 0 AS metadata,
                           substring(p_payloads FROM (sum(p_payload_lengths[n]) OVER (ORDER BY n) - p_payload_lengths[n] + 1)::int
                                     FOR p_payload_lengths[n]) AS payload
                      FROM generate_series(1, v_appends) AS n) AS a),
        checked AS (
            -- A stored event id is a retry (the same event: its original result) or a reuse (LA003),
            -- whatever the expectation says now, as in ledger_append.
            SELECT a.*, coalesce(h.stream_version, 0) AS current,
                   coalesce(h.hash, '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea) AS head,
                   prior.stream_version AS prior_version, prior.global_position AS prior_position,
                   CASE WHEN a.kind NOT IN ('any', 'no_stream', 'exact', 'exists') THEN 'LA002'
                        WHEN prior.stream_version IS NOT NULL THEN
                            CASE WHEN prior.stream_id = a.stream AND prior.event_type = a.type
                                      AND prior.schema_version = a.schema_version AND prior.payload_sha256 = a.digest
                                      AND prior.metadata = a.metadata THEN 'replayed' ELSE 'LA003' END
                        WHEN (a.kind = 'no_stream' AND h.stream_version IS NOT NULL)
                          OR (a.kind = 'exact' AND coalesce(h.stream_version, 0) <> a.expected)
                          OR (a.kind = 'exists' AND h.stream_version IS NULL) THEN 'LA001'
                        WHEN a.subject IS NOT NULL AND NOT coalesce(k.usable, false) THEN 'LA004' END AS outcome
              FROM appends a
              -- LIMIT 1 keeps each lookup one index probe per append (joined plainly, the
              -- generic plan may hash the whole table).
              LEFT JOIN LATERAL (SELECT e.stream_version, e.hash FROM events e
                                  WHERE e.stream_id = a.stream ORDER BY e.stream_version DESC LIMIT 1) AS h ON true
              LEFT JOIN LATERAL (SELECT k.wrapped_key IS NOT NULL AS usable FROM subject_keys k
                                  WHERE k.subject_id = a.subject LIMIT 1) AS k ON true
              LEFT JOIN LATERAL (SELECT e.stream_id, e.stream_version, e.global_position, e.event_type, e.schema_version,
                                        e.payload_sha256, e.metadata
                                   FROM events e WHERE e.event_id = a.event_id LIMIT 1) AS prior ON true),
        chained AS (
            -- The canonical form of ledger_event_canonical, inlined (it is the hot path).
            SELECT c.*, sha256(c.head || convert_to(concat_ws(E'\n',
                       'ledger-event-v1', c.stream::text, (c.current + 1)::text, c.type, c.schema_version::text,
                       encode(c.digest, 'hex'), c.metadata::text, v_micros), 'UTF8')) AS hash
              FROM checked c WHERE c.outcome IS NULL),
        stored AS (
            INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, subject_id,
                                payload, payload_sha256, metadata, recorded_at, prev_hash, hash)
            SELECT h.stream, h.current + 1, h.event_id, h.type, h.schema_version, h.subject, h.payload, h.digest,
                   h.metadata, p_recorded_at, h.head, h.hash
              FROM chained h ORDER BY h.n
            RETURNING stream_id, global_position),
        created AS (
            INSERT INTO stream_catalog (stream_id, stream_type, subject_id, created_at)
            SELECT h.stream, p_stream_types[h.n], h.subject, p_recorded_at
              FROM chained h WHERE h.current = 0
            ON CONFLICT (stream_id) DO NOTHING)
        SELECT c.n,
               CASE WHEN c.outcome IS NULL THEN c.current + 1 WHEN c.outcome = 'replayed' THEN c.prior_version END,
               CASE WHEN c.outcome IS NULL THEN c.current + 1 WHEN c.outcome = 'replayed' THEN c.prior_version END,
               CASE WHEN c.outcome IS NULL THEN st.global_position WHEN c.outcome = 'replayed' THEN c.prior_position END,
               CASE WHEN c.outcome IS NULL THEN st.global_position WHEN c.outcome = 'replayed' THEN c.prior_position END,
               CASE WHEN c.outcome IS NULL THEN false WHEN c.outcome = 'replayed' THEN true END,
               CASE WHEN c.outcome <> 'replayed' THEN c.outcome END,
               CASE WHEN c.outcome = 'LA001' THEN c.current::text END
          FROM checked c LEFT JOIN stored st ON st.stream_id = c.stream
         ORDER BY c.n;
END;
$$;
