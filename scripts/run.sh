#!/usr/bin/env bash
# Builds and runs the service. Without DATABASE_URL it starts a throwaway local PostgreSQL
# cluster and a development master key (printed plainly as a development setup).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
swift build -c release --product ledger
exec .build/release/ledger serve "$@"
