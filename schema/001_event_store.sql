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
    v_existing  int;
    v_matching  int;
    v_offset    int := 1;
    v_payload   bytea;
    v_digest    bytea;
    v_metadata  jsonb;
    v_version   bigint;
    v_position  bigint;
    v_first_pos bigint;
BEGIN
    IF v_count = 0 OR cardinality(p_event_types) <> v_count OR cardinality(p_schema_versions) <> v_count
       OR cardinality(p_payload_lengths) <> v_count OR jsonb_array_length(p_metadata) <> v_count THEN
        RAISE EXCEPTION 'ledger_append: malformed call' USING ERRCODE = 'LA002';
    END IF;

    PERFORM pg_advisory_xact_lock(ledger_stream_lock_key(p_stream_id));

    -- Idempotency: a retried append finds its events already stored and gets the original result.
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

    IF v_existing > 0 THEN
        IF v_existing = v_count AND v_matching = v_count THEN
            RETURN QUERY
                SELECT min(e.stream_version), max(e.stream_version), min(e.global_position), max(e.global_position), true
                  FROM events e WHERE e.event_id = ANY (p_event_ids);
            RETURN;
        END IF;
        RAISE EXCEPTION 'ledger_append: an event id was already used for other content'
            USING ERRCODE = 'LA003';
    END IF;

    SELECT s.version, s.head_hash INTO v_current, v_head FROM streams s WHERE s.stream_id = p_stream_id;
    IF NOT FOUND THEN
        v_current := 0;
        v_head := '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea;
    END IF;

    IF (p_expected_kind = 'no_stream' AND v_current <> 0)
       OR (p_expected_kind = 'exact' AND v_current <> p_expected_version)
       OR (p_expected_kind = 'exists' AND v_current = 0) THEN
        RAISE EXCEPTION 'ledger_append: wrong expected version'
            USING ERRCODE = 'LA001', DETAIL = v_current::text;
    ELSIF p_expected_kind NOT IN ('any', 'no_stream', 'exact', 'exists') THEN
        RAISE EXCEPTION 'ledger_append: unknown expectation' USING ERRCODE = 'LA002';
    END IF;

    IF p_subject_id IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM subject_keys k WHERE k.subject_id = p_subject_id AND k.wrapped_key IS NOT NULL) THEN
        RAISE EXCEPTION 'ledger_append: the subject''s data key is missing or destroyed' USING ERRCODE = 'LA004';
    END IF;

    FOR i IN 1 .. v_count LOOP
        v_payload := substring(p_payloads FROM v_offset FOR p_payload_lengths[i]);
        v_offset := v_offset + p_payload_lengths[i];
        v_digest := sha256(v_payload);
        v_metadata := p_metadata -> (i - 1);
        v_version := v_current + i;
        v_prev := v_head;
        v_head := sha256(v_prev || ledger_event_canonical(
            p_stream_id, v_version, p_event_types[i], p_schema_versions[i], v_digest, v_metadata, p_recorded_at));
        INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, subject_id,
                            payload, payload_sha256, metadata, recorded_at, prev_hash, hash)
        VALUES (p_stream_id, v_version, p_event_ids[i], p_event_types[i], p_schema_versions[i], p_subject_id,
                v_payload, v_digest, v_metadata, p_recorded_at, v_prev, v_head)
        RETURNING global_position INTO v_position;
        IF i = 1 THEN v_first_pos := v_position; END IF;
    END LOOP;

    INSERT INTO streams AS s (stream_id, stream_type, version, head_hash, subject_id, created_at, updated_at)
    VALUES (p_stream_id, p_stream_type, v_current + v_count, v_head, p_subject_id, p_recorded_at, p_recorded_at)
    ON CONFLICT (stream_id) DO UPDATE
        SET version = EXCLUDED.version, head_hash = EXCLUDED.head_hash, updated_at = EXCLUDED.updated_at;

    RETURN QUERY SELECT v_current + 1, v_current + v_count, v_first_pos, v_position, false;
END;
$$;
