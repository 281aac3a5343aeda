-- Snapshots of long streams' folded state (derived data, like the projections): a fold
-- starts from the newest usable snapshot instead of version 1. Each is sealed with the
-- stream subject's data key, so destroying that key shreds its snapshots with its events.
CREATE TABLE stream_snapshots (
    stream_id        uuid NOT NULL,
    version          bigint NOT NULL,            -- the state after this stream version
    format           integer NOT NULL,           -- the state's encoding; others are ignored
    last_recorded_at timestamptz NOT NULL,       -- the latest recorded_at of versions 1...version
    sealed           bytea NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (stream_id, version)
);
