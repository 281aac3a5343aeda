#!/usr/bin/env bash
# Event consumers with their own libraries: installs the pinned standardwebhooks, svix,
# cloudevents and openapi-python-client (scripts/consumer-requirements.txt) into
# .build/consumer-venv, makes a fresh database on the cluster of scripts/test.sh
# (PG_CLUSTER_PORT), and runs scripts/consumer_tests.py against `ledger serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
# Go and go-jose from Debian (GOPATH mode, no module download): a Go backend's check of the JWTs.
LEDGER_EXTRA_PACKAGES="${LEDGER_EXTRA_PACKAGES:-} python3 python3-venv golang-go golang-gopkg-square-go-jose.v2-dev" \
  source scripts/setup.sh
source scripts/pg-cluster.sh

venv=.build/consumer-venv
source scripts/python-venv.sh
python_venv "$venv" scripts/consumer-requirements.txt consumers

database=ledger_consumers
"$pg_bin/dropdb" -h 127.0.0.1 -p "$PG_CLUSTER_PORT" -U postgres --if-exists --force "$database" >/dev/null 2>&1 || true
"$pg_bin/createdb" -h 127.0.0.1 -p "$PG_CLUSTER_PORT" -U postgres "$database"
trap '"$pg_bin/dropdb" -h 127.0.0.1 -p "$PG_CLUSTER_PORT" -U postgres --if-exists --force "$database" >/dev/null 2>&1 || true' EXIT
DATABASE_URL="postgresql://postgres@127.0.0.1:$PG_CLUSTER_PORT/$database" LEDGER_BINARY="$PWD/.build/debug/ledger" \
  "$venv/bin/python" scripts/consumer_tests.py
