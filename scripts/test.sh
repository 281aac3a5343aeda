#!/usr/bin/env bash
# Runs the whole test suite against a private, throwaway PostgreSQL cluster:
# installs missing packages, starts the cluster (as the postgres user when run as root),
# checks the formatting (`swift format lint --strict`), the layering (scripts/check-layers.sh) and
# docker/compose.yaml (scripts/check-compose.sh), runs `swift test`, then the HTTP fuzz (scripts/fuzz.sh) and the link pages in a real browser (scripts/browser-tests.sh), and stops the cluster whatever
# happens. Afterwards it reads the whole run's output (every log line the service wrote) for
# the secrets the tests use: a password, an email address or a session token there fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
source scripts/pg-cluster.sh

output=$(mktemp /tmp/ledger-test-output.XXXXXX)
cleanup() { stop_cluster; rm -f "$output"; }
trap cleanup EXIT
start_cluster fast 1000
echo "test: PostgreSQL on 127.0.0.1:$PG_CLUSTER_PORT ($PG_CLUSTER_DIR)" >&2

# Formatting first (the toolchain's swift-format, .swift-format): a file off the style fails
# the run before anything is built.
# Then the compose file (scripts/check-compose.sh: Debian's docker-compose validates it; no
# container engine runs here): an invalid docker/compose.yaml fails the run too.
if [ $# -eq 0 ]; then
  swift format lint --strict --recursive Sources Tests Package.swift
  ./scripts/check-layers.sh
  ./scripts/check-compose.sh
fi

export LEDGER_TEST_PG_PORT=$PG_CLUSTER_PORT
# The SMTP tests run a real SMTP server (scripts/smtp-server.py, aiosmtpd) from a venv of pinned
# packages; the tests would make it themselves, but here its install shows before the build.
LEDGER_TEST_SMTP_PYTHON=$(./scripts/smtp-venv.sh)
export LEDGER_TEST_SMTP_PYTHON
status=0
# The fault runs (Tests/LedgerFaultTests) start the `ledger` executable itself.
{ swift build --product ledger && swift test "$@"; } 2>&1 | tee "$output" || status=$?
[ "$status" -eq 0 ] || exit "$status"

# Then the HTTP fuzz (scripts/fuzz.sh) on the same cluster: always on a full run, on a targeted
# run (`--filter …`) only with LEDGER_FUZZ=1. Its output and the service's log join the output
# the secret scan below reads.
if [ $# -eq 0 ] || [ "${LEDGER_FUZZ:-0}" = 1 ]; then
  LEDGER_FUZZ_SERVER_LOG="$output" ./scripts/fuzz.sh 2>&1 | tee -a "$output" || status=$?
  [ "$status" -eq 0 ] || exit "$status"
fi

# Then the link pages in a real browser (scripts/browser-tests.sh: chromium and selenium), on a
# full run or with LEDGER_BROWSER=1; the service's log joins the output the scan reads.
if [ $# -eq 0 ] || [ "${LEDGER_BROWSER:-0}" = 1 ]; then
  LEDGER_BROWSER_SERVER_LOG="$output" ./scripts/browser-tests.sh 2>&1 | tee -a "$output" || status=$?
  [ "$status" -eq 0 ] || exit "$status"
fi

# Secrets the tests send; none may appear in what the run printed.
# Compiler diagnostics quote the tests' own source (`  79 |   …`): those lines are not output.
leaks=$(grep -vE '^ *[0-9]+ \|' "$output" \
  | grep -nE 'violet-harbor-91|copper-lantern-77|wrong-password-1|[A-Za-z0-9._-]+@example\.com|\bl[arkg]_[A-Za-z0-9_-]{43}\b' || true)
if [ -n "$leaks" ]; then
  echo "test: secrets reached the output of the run:" >&2
  echo "$leaks" | head -5 | cut -c1-200 >&2
  exit 1
fi
echo "test: no test secret (password, email, token) in the run's output"
# End on the test runner's own summary line, which is what CI reads.
grep -E "Test run with [0-9]+ tests? .*(passed|failed)" "$output" | tail -1
