-- New streams' first events, many at once (an import's batch, `EventStore.queueNewStreams`):
-- every event of every stream in one INSERT, versions from 1 and each stream's hash chain from the
-- zero hash, computed set-based a version at a time (a recursive CTE: as many rounds as the
-- longest stream has events), with the canonical form `ledger_append` uses. No stream may exist
-- yet and every subject must hold a usable key, else the statement raises (LA001, LA004) and the
-- caller's transaction fails whole. Returns the events written.
CREATE FUNCTION ledger_append_new_streams(
    p_stream_ids uuid[], p_stream_types text[], p_subject_ids uuid[], p_event_counts int[], p_recorded_at timestamptz,
    p_event_ids uuid[], p_event_types text[], p_schema_versions int[],
    p_payloads bytea, p_payload_lengths int[], p_metadata jsonb
) RETURNS bigint
LANGUAGE plpgsql SET enable_seqscan = off SET jit = off AS $$
DECLARE
    v_streams int := coalesce(cardinality(p_stream_ids), 0);
    v_events  int := coalesce(cardinality(p_event_ids), 0);
    v_micros  text := ((extract(epoch FROM p_recorded_at) * 1000000)::bigint)::text;
    v_written bigint;
BEGIN
    IF v_streams = 0 THEN RETURN 0; END IF;
    IF cardinality(p_stream_types) <> v_streams OR cardinality(p_subject_ids) <> v_streams
       OR cardinality(p_event_counts) <> v_streams OR jsonb_array_length(p_metadata) <> v_streams
       OR cardinality(p_event_types) <> v_events OR cardinality(p_schema_versions) <> v_events
       OR cardinality(p_payload_lengths) <> v_events
       OR (SELECT sum(c) FROM unnest(p_event_counts) AS c) <> v_events OR 0 >= ANY (p_event_counts) THEN
        RAISE EXCEPTION 'ledger_append_new_streams: malformed call' USING ERRCODE = 'LA002';
    END IF;
    -- The streams' locks, in stream order, as every append takes them.
    PERFORM pg_advisory_xact_lock(ledger_stream_lock_key(ids.s))
       FROM (SELECT DISTINCT s FROM unnest(p_stream_ids) AS s ORDER BY s) AS ids;
    IF EXISTS (SELECT 1 FROM events e WHERE e.stream_id = ANY (p_stream_ids)) THEN
        RAISE EXCEPTION 'ledger_append_new_streams: a stream exists already' USING ERRCODE = 'LA001';
    END IF;
    IF EXISTS (SELECT 1 FROM unnest(p_subject_ids) AS s
                WHERE NOT EXISTS (SELECT 1 FROM subject_keys k WHERE k.subject_id = s AND k.wrapped_key IS NOT NULL)) THEN
        RAISE EXCEPTION 'ledger_append_new_streams: a subject''s data key is missing' USING ERRCODE = 'LA004';
    END IF;

    -- Every array is read by unnest, once, in order: a subscript per row would cost a pass over
    -- a variable-width array each time.
    WITH RECURSIVE appends AS MATERIALIZED (
        SELECT a.n, a.stream, a.subject, (sum(a.count) OVER (ORDER BY a.n) - a.count)::int AS before
          FROM unnest(p_stream_ids, p_subject_ids, p_event_counts) WITH ORDINALITY AS a(stream, subject, count, n)),
    metas AS MATERIALIZED (
        SELECT s.n, e.k AS version, e.meta
          FROM jsonb_array_elements(p_metadata) WITH ORDINALITY AS s(list, n),
               jsonb_array_elements(s.list) WITH ORDINALITY AS e(meta, k)),
    items AS MATERIALIZED (
        SELECT e.i, e.event_id, e.type, e.schema_version,
               substring(p_payloads FROM (sum(e.len) OVER (ORDER BY e.i) - e.len + 1)::int FOR e.len) AS payload
          FROM unnest(p_event_ids, p_event_types, p_schema_versions, p_payload_lengths)
               WITH ORDINALITY AS e(event_id, type, schema_version, len, i)),
    digested AS MATERIALIZED (
        SELECT a.n, a.stream, a.subject, m.version, it.i, m.meta AS metadata, it.event_id, it.type, it.schema_version,
               it.payload, sha256(it.payload) AS digest
          FROM appends a JOIN metas m ON m.n = a.n JOIN items it ON it.i = a.before + m.version),
    chain AS (
        SELECT d.i, d.n, d.version,
               '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea AS prev,
               sha256('\x0000000000000000000000000000000000000000000000000000000000000000'::bytea
                      || convert_to(concat_ws(E'\n', 'ledger-event-v1', d.stream::text, '1', d.type, d.schema_version::text,
                                              encode(d.digest, 'hex'), d.metadata::text, v_micros), 'UTF8')) AS hash
          FROM digested d WHERE d.version = 1
        UNION ALL
        SELECT d.i, d.n, d.version, c.hash,
               sha256(c.hash || convert_to(concat_ws(E'\n', 'ledger-event-v1', d.stream::text, d.version::text, d.type,
                                                     d.schema_version::text, encode(d.digest, 'hex'), d.metadata::text, v_micros),
                                           'UTF8'))
          FROM chain c JOIN digested d ON d.n = c.n AND d.version = c.version + 1)
    INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, subject_id,
                        payload, payload_sha256, metadata, recorded_at, prev_hash, hash)
    SELECT d.stream, d.version, d.event_id, d.type, d.schema_version, d.subject, d.payload, d.digest, d.metadata,
           p_recorded_at, c.prev, c.hash
      FROM chain c JOIN digested d ON d.i = c.i
     ORDER BY d.i;
    GET DIAGNOSTICS v_written = ROW_COUNT;
    -- A stream's metadata list shorter than its events would leave events out, unseen by the chain.
    IF v_written <> v_events THEN
        RAISE EXCEPTION 'ledger_append_new_streams: malformed call' USING ERRCODE = 'LA002';
    END IF;

    INSERT INTO stream_catalog (stream_id, stream_type, subject_id, created_at)
    SELECT c.stream, c.type, c.subject, p_recorded_at FROM unnest(p_stream_ids, p_stream_types, p_subject_ids) AS c(stream, type, subject)
    ON CONFLICT (stream_id) DO NOTHING;
    RETURN v_written;
END;
$$;
