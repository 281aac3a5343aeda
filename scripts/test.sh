#!/usr/bin/env bash
# Runs the whole test suite against a private, throwaway PostgreSQL cluster:
# installs missing packages, starts the cluster (as the postgres user when run as root),
# runs `swift test`, and stops the cluster whatever happens.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
source scripts/pg-cluster.sh

trap stop_cluster EXIT
start_cluster fast 400
echo "test: PostgreSQL on 127.0.0.1:$PG_CLUSTER_PORT ($PG_CLUSTER_DIR)" >&2

export LEDGER_TEST_PG_PORT=$PG_CLUSTER_PORT
swift test "$@"
