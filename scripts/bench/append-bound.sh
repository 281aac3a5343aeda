#!/usr/bin/env bash
# Issue 27, part 1: what the append's SQL itself allows, beside the same run's ceiling
# (../shared/bench/pg-ceiling) and the store, at the same client counts, on a private cluster
# with default durability. pgbench drives the store's own functions with no Swift in the way
# (prepared statements, one blocking loop per client, as the ceiling is driven), so the
# figures bound what any client of this SQL can reach on this machine:
#
#   sql-row      a bare INSERT of the event row (no lock, no lookups, no chain, no stream
#                head: the same columns, indexes and constraints), one a transaction, N
#                clients: what the `events` table itself costs beside the ceiling's table
#                (streams of their own, never registered).
#   sql-single   `ledger_append`, one event a call and a transaction, N clients: every
#                writer its own transaction, as the ceiling's clients (no group commit).
#   sql-batch    `ledger_append_batch`, N single-event appends to distinct streams a call,
#                one client: the store's group commit at N writers with one transaction in
#                flight and no cost between batches (events/s = calls/s × N).
#   sql-batch2   the same with two clients of N/2 appends a call: two transactions in flight.
#   sql-lean     what a leaner write path could cost, one append a transaction, N clients: the
#                stream's lock, then one INSERT … SELECT that reads the head from the events'
#                primary key and chains the event, in one round trip (a pipeline). No PL/pgSQL,
#                and no expected-version, key or idempotency answers either, so it bounds a
#                redesign from above, it is not one.
#   ledger       `ledger-bench append --writers N`: the store as the service has it.
#
# Every writer has 50 streams of its own (as `ledger-bench append`); payloads are 340 bytes
# (a sealed ~310-byte event), event ids time-ordered, each stream's subject key present.
#
#   scripts/bench/append-bound.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/setup.sh
seconds="${1:-10}"
work=$(mktemp -d /tmp/ledger-bench-bound.XXXXXX)
trap 'stop_cluster; rm -rf "$work"' EXIT
bench_start
"$ledger" migrate >/dev/null

# A writer's stream (and subject): md5(PREFIX || n)::uuid for n = client × 50 + s; each
# measurement that writes chains of its own has its own PREFIX. Their subject keys exist (a
# placeholder wrapped key: the functions only check that one is there).
stream() { echo "md5('$1' || (:client_id * 50 + ${2:-:s}))::uuid"; }
psql -X -q -v ON_ERROR_STOP=1 -c "INSERT INTO subject_keys (subject_id, wrapped_key, master_key_id)
  SELECT md5(prefix || s)::uuid, '\\x00'::bytea, 'bench'
    FROM unnest(ARRAY['', 'lean']) AS prefix, generate_series(1, 3200) AS s"

# A time-ordered event id (UUID v7's layout: milliseconds first), as the store makes them.
event_id="(lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0') || substr(md5(random()::text), 1, 20))::uuid"
payload="decode(repeat('a5', 340), 'hex')"

psql -X -q -v ON_ERROR_STOP=1 -c "CREATE SEQUENCE bench_row_version"
cat >"$work/row.sql" <<SQL
\\set s random(1, 50)
INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, subject_id, payload,
                    payload_sha256, metadata, recorded_at, prev_hash, hash)
VALUES ($(stream row), nextval('bench_row_version'), $event_id, 'bench.appended', 1, $(stream row), $payload, sha256($payload), '{}', now(),
        sha256('prev'::bytea), sha256('hash'::bytea));
SQL

cat >"$work/single.sql" <<SQL
\\set s random(1, 50)
SELECT * FROM ledger_append($(stream ""), 'bench', 'any', 0, $(stream ""), now(), ARRAY[$event_id], '{bench.appended}', '{1}',
  $payload, '{340}', '[{}]');
SQL

cat >"$work/lean.sql" <<SQL
\\set s random(1, 50)
\\startpipeline
SELECT pg_advisory_xact_lock(ledger_stream_lock_key($(stream lean)));
INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, subject_id, payload,
                    payload_sha256, metadata, recorded_at, prev_hash, hash)
SELECT a.stream, a.version, a.id, 'bench.appended', 1, a.stream, a.payload, a.digest, '{}', a.at, a.prev,
       sha256(a.prev || convert_to(concat_ws(E'\\n', 'ledger-event-v1', a.stream::text, a.version::text, 'bench.appended', '1',
              encode(a.digest, 'hex'), '{}', ((extract(epoch FROM a.at) * 1000000)::bigint)::text), 'UTF8'))
  FROM (SELECT $(stream lean) AS stream, coalesce(h.stream_version, 0) + 1 AS version,
               $event_id AS id, $payload AS payload, sha256($payload) AS digest, now() AS at,
               coalesce(h.hash, '\\x0000000000000000000000000000000000000000000000000000000000000000'::bytea) AS prev
          FROM (SELECT 1) AS one
          LEFT JOIN LATERAL (SELECT e.stream_version, e.hash FROM events e
                              WHERE e.stream_id = $(stream lean)
                              ORDER BY e.stream_version DESC LIMIT 1) AS h ON true
         WHERE EXISTS (SELECT 1 FROM subject_keys k WHERE k.subject_id = $(stream lean) AND k.wrapped_key IS NOT NULL)) AS a
RETURNING global_position, stream_version;
\\endpipeline
SQL

# One call of ledger_append_batch with $1 appends to distinct streams of the client's 50.
batch_script() {
  local n=$1 streams="" ids="" i
  for i in $(seq 0 $((n - 1))); do
    streams+="${streams:+,}$(stream "" "(:s + $i) % 50 + 1")"
    ids+="${ids:+,}$event_id"
  done
  cat <<SQL
\\set s random(0, 49)
SELECT count(*) FROM ledger_append_batch(ARRAY[$streams], array_fill('bench'::text, ARRAY[$n]),
  array_fill('any'::text, ARRAY[$n]), array_fill(0::bigint, ARRAY[$n]), ARRAY[$streams],
  array_fill(1, ARRAY[$n]), now(), ARRAY[$ids], array_fill('bench.appended'::text, ARRAY[$n]),
  array_fill(1, ARRAY[$n]), decode(repeat('a5', 340 * $n), 'hex'), array_fill(340, ARRAY[$n]),
  (SELECT jsonb_agg('[{}]'::jsonb) FROM generate_series(1, $n)));
SQL
}

tps() { # script clients
  local out
  out=$(pgbench -n -M prepared -c "$2" -j "$(( $2 < 2 ? 1 : 2 ))" -T "$seconds" -f "$1" 2>&1) || { echo "$out" >&2; return 1; }
  echo "$out" | sed -nE 's/^tps = ([0-9.]+).*/\1/p' | head -1
}
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }

for writers in 1 8 32; do
  c=$($ceiling write "$writers" "$seconds" | sed -E 's/.*tps=([0-9.]+).*/\1/')
  row=$(tps "$work/row.sql" "$writers")
  single=$(tps "$work/single.sql" "$writers")
  lean=$(tps "$work/lean.sql" "$writers")
  batch_script "$writers" >"$work/batch.sql"
  batch=$(python3 -c "print($(tps "$work/batch.sql" 1) * $writers)")
  batch2=0
  if [ "$writers" -ge 2 ]; then
    batch_script $((writers / 2)) >"$work/batch2.sql"
    batch2=$(python3 -c "print($(tps "$work/batch2.sql" 2) * $((writers / 2)))")
  fi
  ledger=$("$bench" append --writers "$writers" --seconds "$seconds" | sed -E 's/.*appends_per_s=([0-9.]+).*/\1/')
  printf 'writers=%d ceiling=%.0f sql-row=%.0f (%s) sql-single=%.0f (%s) sql-lean=%.0f (%s) sql-batch=%.0f (%s) sql-batch2=%.0f (%s) ledger=%.0f (%s)\n' \
    "$writers" "$c" "$row" "$(ratio "$row" "$c")" "$single" "$(ratio "$single" "$c")" "$lean" "$(ratio "$lean" "$c")" \
    "$batch" "$(ratio "$batch" "$c")" "$batch2" "$(ratio "$batch2" "$c")" "$ledger" "$(ratio "$ledger" "$c")"
done
