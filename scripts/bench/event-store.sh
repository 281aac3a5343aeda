#!/usr/bin/env bash
# Event-store benchmarks beside the same run's PostgreSQL ceiling
# (../shared/bench/pg-ceiling) on a private local cluster with default durability.
#
#   scripts/bench/event-store.sh [SECONDS]     # default 15 s per measurement
#
# Prints one line per measurement; BENCHMARKS.md records them.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/setup.sh
seconds="${1:-15}"

trap stop_cluster EXIT
bench_start
port=$PG_CLUSTER_PORT
ratio() { python3 -c "print(f'{$1/$2*100:.0f}%')"; }
for writers in 1 8 32; do
  c=$($ceiling write "$writers" "$seconds")
  b=$("$bench" append --writers "$writers" --seconds "$seconds")
  echo "$c"
  echo "$b"
  echo "ratio writers=$writers: $(ratio "$(echo "$b" | sed -E 's/.*appends_per_s=([0-9.]+).*/\1/')" "$(echo "$c" | sed -E 's/.*tps=([0-9.]+).*/\1/')") of the ceiling"
done
c=$($ceiling write 8 "$seconds")
b=$("$bench" append --writers 8 --batch 100 --seconds "$seconds")
echo "$c"; echo "$b"
echo "ratio batch=100 writers=8 (events vs ceiling rows): $(ratio "$(echo "$b" | sed -E 's/.*events_per_s=([0-9.]+).*/\1/')" "$(echo "$c" | sed -E 's/.*tps=([0-9.]+).*/\1/')")"
"$bench" feed --events 1000000
$ceiling read 1000000
