#!/usr/bin/env bash
# `ledger import` of RECORDS records (default 1,000,000) of the ledger's JSON lines, each an email
# with a bcrypt hash (cost 10), a third with a phone, a tenth with a Google subject
# (scripts/bench/import_file.py), on a private cluster with default durability; beside it, in the
# same run, a COPY of as many event-sized rows into a table shaped like `events`. `ledger serve`
# runs meanwhile: the peak RSS of it and of the import are sampled every half second.
#
#   scripts/bench/import.sh [RECORDS] [JOBS]
set -euo pipefail
records="${1:-1000000}"
jobs="${2:-4}"
cd "$(dirname "$0")/../.."
source scripts/bench/setup.sh
source scripts/python-venv.sh
bench_workdir import
bench_start
bench_database_socket
"$ledger" migrate >/dev/null
python_venv .build/hash-venv scripts/foreign-hash-requirements.txt bench
.build/hash-venv/bin/python scripts/bench/import_file.py "$records" "$work/users.jsonl"
echo "file: $records records, $(du -m "$work/users.jsonl" | cut -f1) MiB"

# The ceiling: COPY of as many rows of an event's size (the import's payloads average ~300 bytes sealed).
psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE TABLE copy_events (stream_id uuid, stream_version bigint, event_id uuid, event_type text, payload bytea,
                          metadata jsonb, recorded_at timestamptz);
\copy (SELECT gen_random_uuid(), 1, gen_random_uuid(), 'account.registered', decode(repeat(md5(n::text), 19), 'hex'), '{"actor": "system:import"}'::jsonb, now() FROM generate_series(1, $records) AS n) TO '$work/rows.copy'
SQL
start=$(date +%s.%N)
psql -X -q -v ON_ERROR_STOP=1 -c "\\copy copy_events FROM '$work/rows.copy'"
copy_seconds=$(echo "$(date +%s.%N) - $start" | bc)
psql -X -q -c "DROP TABLE copy_events"
rm -f "$work/rows.copy"
echo "ceiling COPY rows=$records seconds=$copy_seconds"

LEDGER_DELIVERY_WEBHOOK_URL=http://127.0.0.1:9/unused bench_serve_production
peak() { ps -o rss= -p "$1" 2>/dev/null | tr -d ' ' || true; }
"$ledger" import "$work/users.jsonl" --format jsonl --jobs "$jobs" >"$work/import.out" 2>&1 &
importer=$!
serve_peak=0 import_peak=0
start=$(date +%s.%N)
while kill -0 "$importer" 2>/dev/null; do
  s=$(peak "$server"); i=$(peak "$importer")
  [ -n "$s" ] && [ "$s" -gt "$serve_peak" ] && serve_peak=$s
  [ -n "$i" ] && [ "$i" -gt "$import_peak" ] && import_peak=$i
  sleep 0.5
done
wait "$importer"
seconds=$(echo "$(date +%s.%N) - $start" | bc)
cat "$work/import.out"
events=$(psql -X -qtA -c "SELECT count(*) FROM events")
echo "import records=$records jobs=$jobs seconds=$seconds records_per_s=$(echo "$records / $seconds" | bc) events=$events"
echo "rss serve_peak_mib=$((serve_peak / 1024)) import_peak_mib=$((import_peak / 1024))"
echo "ratio import/COPY seconds=$(echo "scale=2; $seconds / $copy_seconds" | bc)"
