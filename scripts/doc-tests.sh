#!/usr/bin/env bash
# The README's and docs' commands, run as printed against a development instance
# (scripts/doc_tests.py says how). Needs the debug `ledger` the test run builds.
set -euo pipefail
cd "$(dirname "$0")/.."
LEDGER_EXTRA_PACKAGES="${LEDGER_EXTRA_PACKAGES:-} python3" source scripts/setup.sh
exec python3 scripts/doc_tests.py
