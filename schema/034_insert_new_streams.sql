-- New streams' first events with their hash chain worked out by the caller
-- (`EventStore.queueNewStreams`, with `HashChain`, the code the chain walk verifies with). Every
-- new stream's chain starts at the zero hash and reads nothing stored, so nothing here needs the
-- database to compute it; `ledger_append_new_streams` (schema/031) did, in a recursive CTE that
-- was two thirds of an import batch's time (measured with auto_explain on 1,000 streams of five
-- events: 63 ms of the statement's 88 went to chaining, 25 to the insert).
--
-- The events come as one array per column in PostgreSQL's binary format (`BinaryRecordset`): no
-- text for the server to parse. Nothing the caller worked out is taken on trust: each row is
-- written only if its payload's SHA-256 is its digest, its hash is SHA-256 of its previous hash and
-- its canonical form (the form `ledger_append` hashes, with the metadata text given), and its
-- previous hash is the zero hash at version 1, else the hash of the row before it, of the same
-- stream at the version before; a row that fails any of it fails the call (LA002). Checked row by
-- row, with no recursion. Each metadata text (given once, with each
-- event's index into them: a request's events share theirs) must be what PostgreSQL prints for
-- it as jsonb; the time is given in microseconds and must be the timestamp's exactly; every
-- event's stream and subject must be among the streams'. A stream that exists already fails the
-- primary key; a subject without a usable key raises LA004. Any of them fails the caller's
-- transaction, and an import then takes its records one by one, through `ledger_append`.
--
-- No stream lock is taken: the caller makes the streams' ids in its own transaction, so no other
-- transaction can know them before it commits (`EventStore.queueNewStreams`).
-- `ledger_append_new_streams` stays for an older instance during a rolling upgrade.
CREATE FUNCTION ledger_insert_new_streams(
    p_stream_ids uuid[], p_stream_types text[], p_subject_ids uuid[], p_recorded_micros bigint, p_metadata text[],
    p_event_streams uuid[], p_event_subjects uuid[], p_versions int8[], p_event_ids uuid[], p_event_types text[],
    p_schema_versions int8[], p_payloads bytea[], p_digests bytea[], p_prev_hashes bytea[], p_hashes bytea[],
    p_metadata_of int8[]
) RETURNS bigint
LANGUAGE plpgsql SET enable_seqscan = off SET jit = off SET plan_cache_mode = force_custom_plan AS $$
DECLARE
    v_streams int := coalesce(cardinality(p_stream_ids), 0);
    v_events int := coalesce(cardinality(p_event_ids), 0);
    v_recorded_at timestamptz := timestamptz 'epoch' + make_interval(secs => p_recorded_micros / 1000000)
                                 + (p_recorded_micros % 1000000) * interval '1 microsecond';
    v_micros text := p_recorded_micros::text;
    v_zero_hash bytea := '\x0000000000000000000000000000000000000000000000000000000000000000';
    v_metadata jsonb[];
    v_written bigint;
BEGIN
    IF v_events = 0 THEN RETURN 0; END IF;
    IF cardinality(p_stream_types) <> v_streams OR cardinality(p_subject_ids) <> v_streams
       OR cardinality(p_event_streams) <> v_events OR cardinality(p_event_subjects) <> v_events
       OR cardinality(p_versions) <> v_events OR cardinality(p_event_types) <> v_events
       OR cardinality(p_schema_versions) <> v_events OR cardinality(p_payloads) <> v_events
       OR cardinality(p_digests) <> v_events OR cardinality(p_prev_hashes) <> v_events
       OR cardinality(p_hashes) <> v_events OR cardinality(p_metadata_of) <> v_events
       OR (extract(epoch FROM v_recorded_at) * 1000000)::bigint <> p_recorded_micros THEN
        RAISE EXCEPTION 'ledger_insert_new_streams: malformed call' USING ERRCODE = 'LA002';
    END IF;
    v_metadata := ARRAY(SELECT m::jsonb FROM unnest(p_metadata) WITH ORDINALITY AS t(m, i) ORDER BY i);
    IF v_metadata::text[] IS DISTINCT FROM p_metadata
       OR EXISTS (SELECT 1 FROM unnest(p_metadata_of) AS o WHERE o IS NULL OR o < 1 OR o > cardinality(p_metadata)) THEN
        RAISE EXCEPTION 'ledger_insert_new_streams: a metadata text is not as jsonb prints it' USING ERRCODE = 'LA002';
    END IF;
    IF EXISTS (SELECT 1 FROM unnest(p_subject_ids) AS s
                WHERE NOT EXISTS (SELECT 1 FROM subject_keys k WHERE k.subject_id = s AND k.wrapped_key IS NOT NULL)) THEN
        RAISE EXCEPTION 'ledger_insert_new_streams: a subject''s data key is missing' USING ERRCODE = 'LA004';
    END IF;

    IF EXISTS (SELECT 1 FROM unnest(p_event_streams, p_event_subjects) AS e(stream, subject)
                WHERE NOT EXISTS (SELECT 1 FROM unnest(p_stream_ids, p_subject_ids) AS c(stream, subject)
                                   WHERE c.stream = e.stream AND c.subject = e.subject)) THEN
        RAISE EXCEPTION 'ledger_insert_new_streams: an event''s stream is not among the streams' USING ERRCODE = 'LA002';
    END IF;

    -- The links, on the narrow columns alone: each event's previous hash is the zero hash at
    -- version 1, else the hash of the event before it, of the same stream at the version before.
    IF EXISTS (SELECT 1
                 FROM (SELECT u.stream, u.version, u.prev, lag(u.stream) OVER w AS prior_stream,
                              lag(u.version) OVER w AS prior_version, lag(u.hash) OVER w AS prior_hash
                         FROM unnest(p_event_streams, p_versions, p_prev_hashes, p_hashes) WITH ORDINALITY AS u(stream, version, prev, hash, i)
                       WINDOW w AS (ORDER BY u.i)) AS l
                WHERE NOT coalesce(CASE WHEN l.version = 1 THEN l.prev = v_zero_hash
                                        ELSE l.prior_stream = l.stream AND l.prior_version = l.version - 1
                                             AND l.prev = l.prior_hash END, false)) THEN
        RAISE EXCEPTION 'ledger_insert_new_streams: an event''s previous hash is not the one before it' USING ERRCODE = 'LA002';
    END IF;

    -- Each row written only if its digest is its payload's and its hash is that of its previous
    -- hash and its canonical form, as `ledger_append` computes it.
    INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, subject_id,
                        payload, payload_sha256, metadata, recorded_at, prev_hash, hash)
    SELECT e.stream, e.version, e.event_id, e.type, e.schema_version, e.subject, e.payload, e.digest, v_metadata[e.meta],
           v_recorded_at, e.prev, e.hash
      FROM unnest(p_event_streams, p_event_subjects, p_versions, p_event_ids, p_event_types, p_schema_versions, p_payloads,
                  p_digests, p_prev_hashes, p_hashes, p_metadata_of)
           WITH ORDINALITY AS e(stream, subject, version, event_id, type, schema_version, payload, digest, prev, hash, meta, i)
     WHERE sha256(e.payload) = e.digest
       AND e.hash = sha256(e.prev || convert_to(concat_ws(E'\n', 'ledger-event-v1', e.stream::text, e.version::text, e.type,
                                                         e.schema_version::text, encode(e.digest, 'hex'), p_metadata[e.meta],
                                                         v_micros), 'UTF8'))
     ORDER BY e.i;
    GET DIAGNOSTICS v_written = ROW_COUNT;
    IF v_written <> v_events THEN
        RAISE EXCEPTION 'ledger_insert_new_streams: an event''s digest or hash is not its own' USING ERRCODE = 'LA002';
    END IF;

    INSERT INTO stream_catalog (stream_id, stream_type, subject_id, created_at)
    SELECT c.stream, c.type, c.subject, v_recorded_at FROM unnest(p_stream_ids, p_stream_types, p_subject_ids) AS c(stream, type, subject)
    ON CONFLICT (stream_id) DO NOTHING;
    RETURN v_written;
END;
$$;
