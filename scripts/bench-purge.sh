#!/usr/bin/env bash
# Purge benchmark (issue 6): ACCOUNTS deleted accounts of ~20 events each, due for purge, purged
# with one worker, then as many again with two workers; release build, private cluster with
# default durability.
#
#   scripts/bench-purge.sh [ACCOUNTS]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
accounts="${1:-10000}"
swift build -c release --product ledger >&2
ledger=.build/release/ledger
source scripts/pg-cluster.sh
trap stop_cluster EXIT
start_cluster durable 200
as_postgres "$pg_bin/createdb" -h 127.0.0.1 -p "$PG_CLUSTER_PORT" -U postgres ledger
export DATABASE_URL="postgresql://postgres@127.0.0.1:$PG_CLUSTER_PORT/ledger"
export LEDGER_MASTER_KEY=$(head -c 32 /dev/urandom | base64) LOG_LEVEL=warning
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; $(date -u +%Y-%m-%dT%H:%MZ)"
for workers in 1 2; do
  "$ledger" bench purge --accounts "$accounts" --workers "$workers"
done
