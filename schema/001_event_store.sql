-- Account Ledger: the event store (DESIGN.md §3).
--
-- Every identity change is a row in `events`. Streams are the unit of optimistic concurrency and
-- of the hash chain; subjects own the data keys that seal payloads (crypto-shredding).

CREATE TABLE streams (
    stream_id   uuid PRIMARY KEY,
    stream_type text NOT NULL,
    version     bigint NOT NULL CHECK (version >= 1),
    head_hash   bytea NOT NULL,
    subject_id  uuid,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL
);

-- One data key per subject, wrapped by the master key. Destroying it (wrapped_key = NULL)
-- makes every payload sealed with it unreadable, in backups and replicas too.
CREATE TABLE subject_keys (
    subject_id    uuid PRIMARY KEY,
    wrapped_key   bytea,
    master_key_id text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    destroyed_at  timestamptz,
    CHECK ((wrapped_key IS NULL) = (destroyed_at IS NOT NULL))
);

CREATE TABLE events (
    global_position bigint GENERATED ALWAYS AS IDENTITY,
    tx_id           xid8 NOT NULL DEFAULT pg_current_xact_id(),
    stream_id       uuid NOT NULL,
    stream_version  bigint NOT NULL CHECK (stream_version >= 1),
    event_id        uuid NOT NULL UNIQUE,
    event_type      text NOT NULL CHECK (event_type ~ '^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$'),
    schema_version  int NOT NULL CHECK (schema_version >= 1),
    subject_id      uuid,                      -- whose data key sealed the payload; NULL: not encrypted
    payload         bytea NOT NULL,
    payload_sha256  bytea NOT NULL,
    metadata        jsonb NOT NULL,            -- never personal data
    recorded_at     timestamptz NOT NULL,
    prev_hash       bytea NOT NULL,
    hash            bytea NOT NULL,
    PRIMARY KEY (stream_id, stream_version)
);

-- The commit-order feed reads by (tx_id, global_position).
CREATE INDEX events_commit_order ON events (tx_id, global_position);

-- The advisory lock key of a stream; taken before a transaction's first write so that a later
-- writer of the same stream always gets a larger transaction id.
CREATE FUNCTION ledger_stream_lock_key(p_stream_id uuid) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT hashtextextended('ledger.stream:' || p_stream_id::text, 0)
$$;

CREATE FUNCTION ledger_lock_stream(p_stream_id uuid) RETURNS void
LANGUAGE sql AS $$
    SELECT pg_advisory_xact_lock(ledger_stream_lock_key(p_stream_id))
$$;

-- What the chain hashes for one event besides the previous hash. The Swift verifier
-- (`HashChain.canonical`) writes the same bytes; keep them in step.
CREATE FUNCTION ledger_event_canonical(
    p_stream_id uuid, p_version bigint, p_type text, p_schema_version int,
    p_payload_sha256 bytea, p_metadata jsonb, p_recorded_at timestamptz
) RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT convert_to(concat_ws(E'\n',
        'ledger-event-v1',
        p_stream_id::text,
        p_version::text,
        p_type,
        p_schema_version::text,
        encode(p_payload_sha256, 'hex'),
        p_metadata::text,
        ((extract(epoch FROM p_recorded_at) * 1000000)::bigint)::text), 'UTF8')
$$;

-- Appends events to one stream in one call (one round trip): lock, idempotency, version
-- check, chain, inserts and stream head.
--
-- Payloads arrive concatenated in one bytea with their lengths, metadata as a jsonb array.
-- Errors use SQLSTATE class LA: LA001 wrong expected version (DETAIL: the current version),
-- LA002 malformed call, LA003 event id reused with other content, LA004 subject key missing
-- or destroyed.
CREATE FUNCTION ledger_append(
    p_stream_id uuid, p_stream_type text, p_expected_kind text, p_expected_version bigint,
    p_subject_id uuid, p_recorded_at timestamptz,
    p_event_ids uuid[], p_event_types text[], p_schema_versions int[],
    p_payloads bytea, p_payload_lengths int[], p_metadata jsonb
) RETURNS TABLE (first_version bigint, last_version bigint, first_position bigint, last_position bigint,
                 replayed boolean)
LANGUAGE plpgsql AS $$
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

    -- One query for everything the checks need: the stream head, whether any of the event
    -- ids exist already, and whether the subject's key is usable.
    SELECT s.version, s.head_hash,
           EXISTS (SELECT 1 FROM events e WHERE e.event_id = ANY (p_event_ids)),
           p_subject_id IS NULL OR EXISTS (SELECT 1 FROM subject_keys k
                                           WHERE k.subject_id = p_subject_id AND k.wrapped_key IS NOT NULL)
      INTO v_current, v_head, v_replay, v_key_ok
      FROM (SELECT 1) AS one LEFT JOIN streams s ON s.stream_id = p_stream_id;
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

    IF v_found THEN
        UPDATE streams SET version = v_current + v_count, head_hash = v_head, updated_at = p_recorded_at
         WHERE stream_id = p_stream_id;
    ELSE
        INSERT INTO streams (stream_id, stream_type, version, head_hash, subject_id, created_at, updated_at)
        VALUES (p_stream_id, p_stream_type, v_count, v_head, p_subject_id, p_recorded_at, p_recorded_at);
    END IF;

    first_version := v_current + 1;
    last_version := v_current + v_count;
    first_position := v_first_pos;
    last_position := v_position;
    replayed := false;
    RETURN NEXT;
END;
$$;

-- Group commit: several appends (to any streams) in one transaction and one round trip.
-- Every stream's lock is taken first, in stream-id order, before any write, so per-stream
-- order in the feed still equals version order and two batches cannot deadlock. Each
-- append runs in its own subtransaction: a conflict fails that append alone, reported in
-- error_state / error_detail instead of raised. Per-append arguments are arrays indexed by
-- ordinal; events are flattened in order, `p_event_counts` saying how many each append
-- owns; `p_metadata` is a jsonb array holding one array of metadata objects per append.
CREATE FUNCTION ledger_append_batch(
    p_stream_ids uuid[], p_stream_types text[], p_expected_kinds text[], p_expected_versions bigint[],
    p_subject_ids uuid[], p_event_counts int[], p_recorded_at timestamptz,
    p_event_ids uuid[], p_event_types text[], p_schema_versions int[],
    p_payloads bytea, p_payload_lengths int[], p_metadata jsonb
) RETURNS TABLE (ordinal int, first_version bigint, last_version bigint, first_position bigint, last_position bigint,
                 replayed boolean, error_state text, error_detail text)
LANGUAGE plpgsql AS $$
DECLARE
    v_event int := 1;
    v_byte  int := 1;
    v_count int;
    v_bytes int;
    v_last  int;
    r       record;
BEGIN
    PERFORM pg_advisory_xact_lock(ledger_stream_lock_key(ids.s))
       FROM (SELECT DISTINCT s FROM unnest(p_stream_ids) AS s ORDER BY s) AS ids;
    FOR a IN 1 .. coalesce(cardinality(p_stream_ids), 0) LOOP
        v_count := p_event_counts[a];
        v_last := v_event + v_count - 1;
        SELECT coalesce(sum(l), 0)::int INTO v_bytes FROM unnest(p_payload_lengths[v_event:v_last]) AS l;
        ordinal := a;
        BEGIN
            SELECT * INTO r FROM ledger_append(
                p_stream_ids[a], p_stream_types[a], p_expected_kinds[a], p_expected_versions[a], p_subject_ids[a],
                p_recorded_at, p_event_ids[v_event:v_last], p_event_types[v_event:v_last],
                p_schema_versions[v_event:v_last], substring(p_payloads FROM v_byte FOR v_bytes),
                p_payload_lengths[v_event:v_last], p_metadata -> (a - 1));
            first_version := r.first_version; last_version := r.last_version;
            first_position := r.first_position; last_position := r.last_position; replayed := r.replayed;
            error_state := NULL; error_detail := NULL;
        EXCEPTION WHEN SQLSTATE 'LA001' OR SQLSTATE 'LA002' OR SQLSTATE 'LA003' OR SQLSTATE 'LA004'
                    OR check_violation OR unique_violation THEN
            first_version := NULL; last_version := NULL; first_position := NULL; last_position := NULL;
            replayed := NULL;
            GET STACKED DIAGNOSTICS error_state = RETURNED_SQLSTATE, error_detail = PG_EXCEPTION_DETAIL;
        END;
        RETURN NEXT;
        v_event := v_last + 1;
        v_byte := v_byte + v_bytes;
    END LOOP;
END;
$$;
