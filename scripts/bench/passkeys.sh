#!/usr/bin/env bash
# Passkey sign-ins per second (options, an ES256 assertion from a software
# authenticator, login: the whole ceremony over HTTP, each verified end to end by the service)
# beside password sign-ins (scrypt at the production cost) of the same accounts, in one run,
# against a release build and a private local PostgreSQL (default durability), in the production
# configuration (no --dev: a delivery webhook nobody answers, so the set-up's re-auth links wait
# in the outbox, where it reads them).
#
#   scripts/bench/passkeys.sh [SECONDS] [CONNECTIONS]
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/setup.sh
seconds="${1:-10}"
connections="${2:-64}"
bench_workdir passkeys
bench_start
http_port=$((20000 + RANDOM % 30000))
export LEDGER_DB_MAX_CONNECTIONS=16 LOG_LEVEL=warning LEDGER_TRUSTED_PROXIES=127.0.0.1/32
export LEDGER_WEBAUTHN_RP_ID=localhost LEDGER_WEBAUTHN_ORIGINS="http://localhost:$http_port"
"$ledger" migrate >/dev/null
bench_database_socket
export LEDGER_DELIVERY_WEBHOOK_URL="http://127.0.0.1:9/deliveries"
bench_serve_production
"$bench" passkeys --url "http://127.0.0.1:$http_port" --origin "http://localhost:$http_port" --rp-id localhost \
  --connections "$connections" --seconds "$seconds"
