-- `ledger_append_new_streams` (schema/031) planned for each call's arrays. plpgsql caches its
-- statements' plans, and after five calls on a connection PostgreSQL may switch to a generic plan
-- that guesses every array's length. Measured on one connection calling it with batches of 1,000
-- streams and 5,000 events (as `ledger import` does): 90 ms a call planned for its arrays, 610 ms
-- a call once the generic plan took over. Planning each call costs a millisecond or two.
ALTER FUNCTION ledger_append_new_streams(uuid[], text[], uuid[], int[], timestamptz, uuid[], text[], int[], bytea, int[], jsonb)
    SET plan_cache_mode = force_custom_plan;
