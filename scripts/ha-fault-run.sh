#!/usr/bin/env bash
# The failover fault run (docs/operations.md "High availability on Patroni"): a three-node
# Patroni cluster with etcd on this machine (scripts/ha-cluster.sh), two `ledger serve` on its
# multi-host URLs, writers, a feed follower, `kill -9` of the leader, then a planned switchover
# (scripts/ha_fault_run.py). Part of scripts/test.sh; alone: `./scripts/ha-fault-run.sh` after
# `swift build --product ledger` (LEDGER_BINARY picks another build).
set -euo pipefail
cd "$(dirname "$0")/.."
LEDGER_EXTRA_PACKAGES="${LEDGER_EXTRA_PACKAGES:-} python3" source scripts/setup.sh
source scripts/ha-cluster.sh

trap stop_ha_cluster EXIT
started=$SECONDS
HA_DATABASE=ledger start_ha_cluster
echo "fault run: a leader and two synchronous standbys in $((SECONDS - started)) s ($HA_DIR)"
# In the background, so a SIGTERM to this script reaches the run, which stops its services.
HA_REST_PORTS="${HA_REST_PORTS[*]}" HA_PG_BIN="$pg_bin" LEDGER_BINARY="${LEDGER_BINARY:-$PWD/.build/debug/ledger}" \
  python3 scripts/ha_fault_run.py &
runner=$!
trap 'kill -TERM "$runner" 2>/dev/null; wait "$runner"; exit 143' TERM INT
wait "$runner"
