#!/usr/bin/env bash
# Two-factor benchmarks: GET /me/sessions and POST /auth/mfa/verify at 64 connections, beside
# GET /healthz (no database work: what HTTP alone allows) in the same run, against a release
# build and a private local PostgreSQL (default durability).
#
#   LEDGER_EXTRA_PACKAGES=wrk scripts/bench/two-factor.sh [SECONDS] [MFA_ACCOUNTS]
set -euo pipefail
cd "$(dirname "$0")/../.."
LEDGER_EXTRA_PACKAGES="${LEDGER_EXTRA_PACKAGES:-} wrk" source scripts/bench/setup.sh
seconds="${1:-15}"
accounts="${2:-2000}"
bench_workdir two-factor
bench_start
# The set-up signs up thousands of accounts: a cheap scrypt cost keeps it short (the measured
# calls hash no password). Each set-up request comes from an address of its own.
export LEDGER_DB_MAX_CONNECTIONS=16 LOG_LEVEL=warning LEDGER_SCRYPT_LOG_N=10 LEDGER_TRUSTED_PROXIES=127.0.0.1/32

"$ledger" migrate >/dev/null
bench_database_socket
# Production's way out (a delivery webhook nobody answers): the set-up's re-auth links wait in the
# outbox, where ledger-bench reads them (turning TOTP on takes a grant that proves the address).
export LEDGER_DELIVERY_WEBHOOK_URL="http://127.0.0.1:9/deliveries"
bench_serve_production
# One account with 8 sessions: the list the screen shows.
for _ in 1 2 3 4 5 6 7; do
  curl -sf -X POST "http://127.0.0.1:$http_port/auth/email/signup" -H 'Content-Type: application/json' \
    -d '{"email":"sessions@example.com","password":"violet-harbor-91"}' >/dev/null || true
  curl -sf -X POST "http://127.0.0.1:$http_port/auth/email/login" -H 'Content-Type: application/json' \
    -d '{"email":"sessions@example.com","password":"violet-harbor-91"}' >/dev/null
done
access=$(curl -sf -X POST "http://127.0.0.1:$http_port/auth/email/login" -H 'Content-Type: application/json' -H 'User-Agent: 321Fit/4.2 (iPhone; iOS 17.1)' \
  -d '{"email":"sessions@example.com","password":"violet-harbor-91"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')

echo "== GET /healthz, 64 connections, ${seconds}s"
wrk -t2 -c64 -d"${seconds}s" --latency "http://127.0.0.1:$http_port/healthz" | grep -E "Requests/sec|Non-2xx|  50%|  99%"
echo "== GET /me/sessions (8 live sessions), 64 connections, ${seconds}s"
wrk -t2 -c64 -d"${seconds}s" --latency -H "Authorization: Bearer $access" "http://127.0.0.1:$http_port/me/sessions" \
  | grep -E "Requests/sec|Non-2xx|  50%|  99%"
echo "== POST /auth/mfa/verify, 64 connections, $accounts accounts (each once)"
"$bench" mfa --url "http://127.0.0.1:$http_port" --accounts "$accounts" --connections 64
echo "== GET /healthz again, 64 connections, ${seconds}s"
wrk -t2 -c64 -d"${seconds}s" --latency "http://127.0.0.1:$http_port/healthz" | grep -E "Requests/sec|Non-2xx|  50%|  99%"
