-- Group commit without a subtransaction per append (issue 2).
--
-- The batch function of 001 runs `ledger_append` once per append, each in its own
-- subtransaction, so that one append's conflict fails that append alone. It stays, renamed
-- `ledger_append_each`, for the batches the new one does not take.
ALTER FUNCTION ledger_append_batch(uuid[], text[], text[], bigint[], uuid[], int[], timestamptz,
                                   uuid[], text[], int[], bytea, int[], jsonb)
    RENAME TO ledger_append_each;

-- `ledger_append_batch` takes the common batch, one new event to each of distinct streams,
-- in two statements: the stream locks, in stream order; then one statement, its snapshot
-- taken after the locks, that reads every head and subject key, checks each append,
-- chains its event, inserts the events, moves the heads and answers. An append that fails
-- its expectation or whose subject key is gone is answered in error_state / error_detail
-- and writes nothing, as before; the others in the batch are written.
--
-- An event id stored before is answered as ledger_append answers it: a retry of the same
-- event gets its original result, a reuse for other content LA003.
--
-- Anything else (several events to one append, a stream named twice) goes to
-- `ledger_append_each`. An event id named twice in the batch, or stored by a concurrent
-- append to another stream, makes the insert raise unique_violation and the whole batch
-- roll back; the caller then sends the batch to `ledger_append_each`.
--
-- plan_cache_mode: the statement takes arrays, for which PostgreSQL would otherwise plan
-- every call afresh; the generic plan is the right one (index probes per element).
-- enable_seqscan: see ledger_append below.
CREATE FUNCTION ledger_append_batch(
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
        -- The locks, in stream order; the count says whether a stream is named twice.
        SELECT count(*) INTO v_locked
          FROM (SELECT pg_advisory_xact_lock(ledger_stream_lock_key(ids.s))
                  FROM (SELECT DISTINCT s FROM unnest(p_stream_ids) AS s ORDER BY s) AS ids) AS locked;
    END IF;
    IF v_locked <> v_appends THEN
        RETURN QUERY SELECT * FROM ledger_append_each(
            p_stream_ids, p_stream_types, p_expected_kinds, p_expected_versions, p_subject_ids, p_event_counts,
            p_recorded_at, p_event_ids, p_event_types, p_schema_versions, p_payloads, p_payload_lengths, p_metadata);
        RETURN;
    END IF;

    -- One statement, its snapshot taken after the locks, so every head read is the committed one.
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
            SELECT a.*, coalesce(h.version, 0) AS current,
                   coalesce(h.head_hash, '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea) AS head,
                   h.version IS NOT NULL AS found, prior.stream_version AS prior_version, prior.global_position AS prior_position,
                   CASE WHEN prior.stream_version IS NOT NULL THEN
                            CASE WHEN prior.stream_id = a.stream AND prior.event_type = a.type
                                      AND prior.schema_version = a.schema_version AND prior.payload_sha256 = a.digest
                                      AND prior.metadata = a.metadata THEN 'replayed' ELSE 'LA003' END
                        WHEN a.kind NOT IN ('any', 'no_stream', 'exact', 'exists') THEN 'LA002'
                        WHEN (a.kind = 'no_stream' AND h.version IS NOT NULL)
                          OR (a.kind = 'exact' AND coalesce(h.version, 0) <> a.expected)
                          OR (a.kind = 'exists' AND h.version IS NULL) THEN 'LA001'
                        WHEN a.subject IS NOT NULL AND NOT coalesce(k.usable, false) THEN 'LA004' END AS outcome
              FROM appends a
              -- LIMIT 1 keeps each lookup one index probe per append (joined plainly, the
              -- generic plan may hash the whole table).
              LEFT JOIN LATERAL (SELECT s.version, s.head_hash FROM streams s WHERE s.stream_id = a.stream LIMIT 1) AS h ON true
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
        moved AS (
            UPDATE streams s SET version = h.current + 1, head_hash = h.hash, updated_at = p_recorded_at
              FROM chained h WHERE h.found AND s.stream_id = h.stream),
        created AS (
            INSERT INTO streams (stream_id, stream_type, version, head_hash, subject_id, created_at, updated_at)
            SELECT h.stream, p_stream_types[h.n], 1, h.hash, h.subject, p_recorded_at, p_recorded_at
              FROM chained h WHERE NOT h.found)
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

-- A session plans these functions' statements once and keeps the plans. On a new store the
-- tables are empty then, and PostgreSQL would keep scanning `events` whole for each event
-- id lookup until autovacuum next analyzes it (about a minute of appends slowing down as
-- the table grows). Every lookup here is by key: index scans only.
ALTER FUNCTION ledger_append(uuid, text, text, bigint, uuid, timestamptz, uuid[], text[], int[], bytea, int[], jsonb)
    SET enable_seqscan = off;
