#!/usr/bin/env bash
# Issue 27, part 1: where a single-event append's time goes, measured before anything changes,
# beside the same run's ceiling (../shared/bench/pg-ceiling) at the same client count, on a
# private cluster with default durability. For each run it reads PostgreSQL's own counters
# before and after: commits, WAL records, bytes, full-page images and fsyncs (pg_stat_wal), rows
# inserted into `events`, and the calls and time of the ledger_append functions
# (track_functions = all), and prints them per append.
#
#   scripts/bench/append-anatomy.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/setup.sh
seconds="${1:-10}"

trap stop_cluster EXIT
bench_start
"$ledger" migrate >/dev/null
psql -X -q -c "ALTER SYSTEM SET track_functions = 'all'" -c "ALTER SYSTEM SET track_wal_io_timing = on" -c "SELECT pg_reload_conf()" >/dev/null

snapshot() {
  sleep 1.2 # backends flush their statistics within a second of going idle
  psql -X -At -F' ' -c "SELECT w.wal_records, w.wal_bytes, w.wal_fpi, w.wal_sync, w.wal_sync_time,
      (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()),
      (SELECT coalesce(sum(n_tup_ins), 0) FROM pg_stat_user_tables WHERE relname = 'events' AND schemaname = 'public'),
      (SELECT coalesce(sum(calls), 0) FROM pg_stat_user_functions WHERE funcname LIKE 'ledger_append%'),
      (SELECT coalesce(sum(self_time), 0) FROM pg_stat_user_functions WHERE funcname LIKE 'ledger_append%'),
      (SELECT coalesce(sum(total_time), 0) FROM pg_stat_user_functions WHERE funcname LIKE 'ledger_append%')
    FROM pg_stat_wal w"
}

report() { # label writers rate before after
  python3 - "$@" <<'PY'
import sys
label, writers, rate = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
b = [float(x) for x in sys.argv[4].split()]
a = [float(x) for x in sys.argv[5].split()]
d = [y - x for x, y in zip(b, a)]
records, wal, fpi, syncs, sync_ms, commits, rows, calls, self_ms, total_ms = d
units = rows if rows > 0 else commits
per = lambda v: v / units if units else 0
print(f"{label} writers={writers}: {rate:,.0f}/s; wall per append {writers / rate * 1000:.3f} ms; "
      f"per event: {per(commits):.3f} commits, {per(syncs):.3f} WAL fsyncs ({(sync_ms / syncs if syncs else 0):.3f} ms each), "
      f"{per(wal):.0f} WAL bytes in {per(records):.1f} records ({per(fpi):.3f} full pages)"
      + (f"; function calls per event {per(calls):.3f}, {total_ms / calls if calls else 0:.3f} ms a call "
         f"({self_ms / calls if calls else 0:.3f} ms in PL/pgSQL itself)" if calls else ""))
PY
}

for writers in 1 8 32; do
  psql -X -q -c CHECKPOINT
  before=$(snapshot)
  c=$($ceiling write "$writers" "$seconds")
  after=$(snapshot)
  report ceiling "$writers" "$(echo "$c" | sed -E 's/.*tps=([0-9.]+).*/\1/')" "$before" "$after"
  psql -X -q -c CHECKPOINT
  before=$(snapshot)
  b=$("$bench" append --writers "$writers" --seconds "$seconds")
  after=$(snapshot)
  report ledger "$writers" "$(echo "$b" | sed -E 's/.*appends_per_s=([0-9.]+).*/\1/')" "$before" "$after"
done
