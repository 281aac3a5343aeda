#!/usr/bin/env bash
# Runs the service: `./scripts/run.sh [--reset] [serve options…]`.
#
# The first run builds it (a release build: 10 to 20 minutes on two cores, most of it SwiftNIO,
# Hummingbird and swift-crypto); later runs start at once unless a source changed. Without
# DATABASE_URL it runs in development mode on a local PostgreSQL cluster kept in
# .ledger/dev-cluster between runs (`--reset` deletes it, and the messages it recorded, first),
# listening on 127.0.0.1 only (`--host 0.0.0.0` to widen). See the banner it prints.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

if [ "${1:-}" = "--reset" ]; then
  shift
  if [ -d .ledger/dev-cluster ]; then
    # A cluster a killed run left running must stop before its files go.
    if [ -f .ledger/dev-cluster/data/postmaster.pid ]; then
      as_postgres=""; [ "$(id -u)" -eq 0 ] && as_postgres="runuser -u postgres --"
      $as_postgres "$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)/pg_ctl" -D .ledger/dev-cluster/data -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf .ledger/dev-cluster
  fi
  rm -f .ledger/dev-messages.jsonl .ledger/dev.env
  echo "run: development data deleted (.ledger/dev-cluster, .ledger/dev-messages.jsonl)" >&2
fi

binary=${LEDGER_BINARY:-.build/release/ledger}
# Build only when something the binary is made of changed since it was built: asking SwiftPM
# would take seconds even then.
# LEDGER_BINARY names one built elsewhere (the docs' test runs the debug build): used as it is.
if [ -z "${LEDGER_BINARY:-}" ] && { [ ! -x "$binary" ] || [ -n "$(find Sources schema Package.swift -newer "$binary" -print -quit)" ]; }; then
  if [ ! -x "$binary" ]; then
    echo "run: building the service once (release): 10 to 20 minutes on two cores; later starts take seconds" >&2
  else
    echo "run: sources changed since the last build: rebuilding (release)" >&2
  fi
  # Progress and errors: the dependencies' own compiler warnings are not ours to act on.
  swift build -c release --product ledger 2>&1 \
    | grep --line-buffered -E '^\[[0-9]+/[0-9]+\] (Compiling|Linking)|error:|^Build (complete|of)|^(Fetching|Computing) '
  touch "$binary"
fi
exec "$binary" serve "$@"
