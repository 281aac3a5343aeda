#!/usr/bin/env bash
# Event-store benchmarks (issue 2) beside the same run's PostgreSQL ceiling
# (../shared/bench/pg-ceiling) on a private local cluster with default durability.
#
#   scripts/bench.sh [SECONDS]     # default 15 s per measurement
#
# Prints one line per measurement; BENCHMARKS.md records them.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
seconds="${1:-15}"
ceiling="$(cd .. && pwd)/shared/bench/pg-ceiling"
[ -x "$ceiling" ] || ceiling="bash $ceiling"

swift build -c release --product ledger >&2
ledger=.build/release/ledger

source scripts/pg-cluster.sh
trap stop_cluster EXIT
start_cluster durable 200
port=$PG_CLUSTER_PORT
as_postgres "$pg_bin/createdb" -h 127.0.0.1 -p "$port" -U postgres ledger
export DATABASE_URL="postgresql://postgres@127.0.0.1:$port/ledger"
export LEDGER_MASTER_KEY=$(head -c 32 /dev/urandom | base64)
export PGHOST=127.0.0.1 PGPORT=$port PGUSER=postgres PGDATABASE=ledger

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; $(date -u +%Y-%m-%dT%H:%MZ); PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}')"
ratio() { python3 -c "print(f'{$1/$2*100:.0f}%')"; }
for writers in 1 8 32; do
  c=$($ceiling write "$writers" "$seconds")
  b=$("$ledger" bench append --writers "$writers" --seconds "$seconds")
  echo "$c"
  echo "$b"
  echo "ratio writers=$writers: $(ratio "$(echo "$b" | sed -E 's/.*appends_per_s=([0-9.]+).*/\1/')" "$(echo "$c" | sed -E 's/.*tps=([0-9.]+).*/\1/')") of the ceiling"
done
c=$($ceiling write 8 "$seconds")
b=$("$ledger" bench append --writers 8 --batch 100 --seconds "$seconds")
echo "$c"; echo "$b"
echo "ratio batch=100 writers=8 (appends vs ceiling inserts): $(ratio "$(echo "$b" | sed -E 's/.*appends_per_s=([0-9.]+).*/\1/')" "$(echo "$c" | sed -E 's/.*tps=([0-9.]+).*/\1/')")"
"$ledger" bench feed --events 1000000
$ceiling read 1000000
