#!/usr/bin/env bash
# OTP benchmark: request + verify pairs/s at 32 connections over HTTP against a release
# build on a private local PostgreSQL (default durability), beside the same run's pgbench
# single-row INSERT ceiling at 32 clients. Codes reach the load generator the way they reach a
# real SMS bridge: through the delivery webhook.
#
#   [LEDGER_EXTRA_PACKAGES=wrk] scripts/bench/otp.sh [SECONDS] [CONNECTIONS]
#
# With wrk installed it also measures the HTTP-only bound (see the end).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/setup.sh
seconds="${1:-15}"
connections="${2:-32}"
bench_workdir otp
bench_start
export LEDGER_DB_MAX_CONNECTIONS=16 LOG_LEVEL=warning
http_port=$((20000 + RANDOM % 20000))
receiver_port=$((http_port + 1))
# One machine plays every phone: each pair comes from its own address (X-Forwarded-For from the
# trusted loopback), so the per-address cap keeps its default; `existing` mode reuses each
# number many times within 15 minutes, so the per-number limits are raised for the run.
export LEDGER_DELIVERY_WEBHOOK_URL="http://127.0.0.1:$receiver_port/deliveries"
export LEDGER_TRUSTED_PROXIES=127.0.0.1/32 LEDGER_OTP_RESEND_LIMIT=1000000 LEDGER_OTP_RESEND_INTERVAL_SECONDS=0

"$ledger" migrate >/dev/null
bench_database_socket
bench_serve

[ -n "${SKIP_CEILING:-}" ] || ../shared/bench/pg-ceiling write "$connections" "$seconds"
for mode in ${MODES:-existing new}; do
  "$bench" otp --url "http://127.0.0.1:$http_port" --receiver-port "$receiver_port" \
    --connections "$connections" --seconds "$seconds" --mode "$mode"
done
# What HTTP alone allows on this machine: `GET /healthz` (no database work) with wrk at the
# same connection count. A pair is at least three such exchanges (request, the SMS webhook,
# verify), so pairs/s can never exceed a third of this, whatever PostgreSQL costs.
if command -v wrk >/dev/null; then
  rps=$(wrk -t2 -c"$connections" -d"${seconds}s" "http://127.0.0.1:$http_port/healthz" | awk '/Requests\/sec/{print $2}')
  echo "http floor: GET /healthz at $connections connections: $rps requests/s, so at most $(awk -v r="$rps" 'BEGIN{printf "%d", r/3}') pairs/s"
fi
echo "service RSS: $(awk '/VmHWM/{print $2/1024 " MiB peak"}' /proc/$server/status)"
grep -iE "error|warning" "$work/serve.log" | grep -v LEDGER_DELIVERY | head -5 || true
