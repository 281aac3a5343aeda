-- Failed sign-in counters, shared by every instance (DESIGN.md §4: rate limits live in
-- PostgreSQL, not in one process's memory). Keys are `email:<sha256 of the normalized email>`
-- so no address is stored here in the clear.
CREATE TABLE login_throttle (
    key             text PRIMARY KEY,
    failures        int NOT NULL,
    window_started  timestamptz NOT NULL,
    locked_until    timestamptz
);
