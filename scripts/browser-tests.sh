#!/usr/bin/env bash
# The link pages in a real browser (docs/accounts.md, "The pages behind the email links"): installs Debian's chromium and chromium-driver
# and the pinned selenium (scripts/browser-requirements.txt) into .build/browser-venv, makes a
# fresh database on the cluster of scripts/test.sh (PG_CLUSTER_PORT), and runs
# scripts/browser_tests.py against `ledger serve`. Screenshots go to .build/screenshots/.
set -euo pipefail
cd "$(dirname "$0")/.."
LEDGER_EXTRA_PACKAGES="${LEDGER_EXTRA_PACKAGES:-} python3 python3-venv chromium chromium-driver" source scripts/setup.sh
source scripts/pg-cluster.sh

venv=.build/browser-venv
requirements=scripts/browser-requirements.txt
if ! cmp -s "$requirements" "$venv/requirements.txt" 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"
  cp "$requirements" "$venv/requirements.txt"
fi

database=ledger_browser
"$pg_bin/dropdb" -h 127.0.0.1 -p "$PG_CLUSTER_PORT" -U postgres --if-exists --force "$database" >/dev/null 2>&1 || true
"$pg_bin/createdb" -h 127.0.0.1 -p "$PG_CLUSTER_PORT" -U postgres "$database"
trap '"$pg_bin/dropdb" -h 127.0.0.1 -p "$PG_CLUSTER_PORT" -U postgres --if-exists --force "$database" >/dev/null 2>&1 || true' EXIT
DATABASE_URL="postgresql://postgres@127.0.0.1:$PG_CLUSTER_PORT/$database" LEDGER_BINARY="$PWD/.build/debug/ledger" \
  "$venv/bin/python" scripts/browser_tests.py
