-- Signed checkpoints (`ledger checkpoint`): a signed digest of every stream head and of the
-- commit-ordered feed up to a position. The row is a convenience copy; the proof is the
-- document an auditor keeps outside the database, checked by `ledger verify --checkpoint`
-- against the public key the auditor holds (never against `public_key` here, which whoever
-- can write this table could replace).
CREATE TABLE checkpoints (
    id           uuid PRIMARY KEY,
    created_at   timestamptz NOT NULL,
    feed_cursor  text NOT NULL,                                    -- FeedCursor token: the last event covered
    event_count  bigint NOT NULL CHECK (event_count >= 0),
    stream_count bigint NOT NULL CHECK (stream_count >= 0),
    digest       bytea NOT NULL CHECK (octet_length(digest) = 32), -- SHA-256 of the canonical text
    public_key   bytea NOT NULL CHECK (octet_length(public_key) = 32),
    signature    bytea NOT NULL CHECK (octet_length(signature) = 64),
    document     text NOT NULL                                     -- the JSON document, as written out
);

CREATE INDEX checkpoints_created_at ON checkpoints (created_at);
