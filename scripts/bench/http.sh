#!/usr/bin/env bash
# HTTP benchmarks (issue 3): GET /me/auth-methods and POST /sessions/introspect with wrk at
# 64 connections, flat out and paced to just over 5,000 requests/s, against a release build and
# a private local PostgreSQL (default durability);
# scrypt hashes/s per core at the default cost; the service's RSS under that load.
#
#   LEDGER_EXTRA_PACKAGES=wrk scripts/bench/http.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
LEDGER_EXTRA_PACKAGES="${LEDGER_EXTRA_PACKAGES:-} wrk" source scripts/bench/setup.sh
seconds="${1:-15}"
bench_workdir http
bench_start
export LEDGER_DB_MAX_CONNECTIONS=16 LOG_LEVEL=warning LEDGER_API_KEY_RATE_LIMIT=0

"$bench" scrypt --seconds 10

"$ledger" migrate >/dev/null
bench_database_socket
bench_serve
access=$(curl -sf -X POST "http://127.0.0.1:$http_port/auth/email/signup" -H 'Content-Type: application/json' \
  -d '{"email":"bench@example.com","password":"violet-harbor-91"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
key=$("$ledger" keys create --name bench --scope sessions:introspect | tail -1)
cat >"$work/introspect.lua" <<LUA
wrk.method = "POST"
wrk.body = '{"token":"$access"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $key"
LUA

echo "== GET /me/auth-methods, 64 connections, ${seconds}s"
wrk -t2 -c64 -d"${seconds}s" --latency -H "Authorization: Bearer $access" "http://127.0.0.1:$http_port/me/auth-methods" \
  | grep -E "Requests/sec|Non-2xx|  50%|  99%|Latency "
echo "== POST /sessions/introspect, 64 connections, ${seconds}s"
wrk -t2 -c64 -d"${seconds}s" --latency -s "$work/introspect.lua" "http://127.0.0.1:$http_port/sessions/introspect" \
  | grep -E "Requests/sec|Non-2xx|  50%|  99%|Latency "
# The same 64 connections, each pausing between answer and next request so that together they
# offer a little over 5,000 requests/s: the latency at the target's rate rather than at
# saturation (where, with 64 connections waiting for their answers, it is 64 ÷ throughput).
pace_ms=${LEDGER_BENCH_PACE_MS:-11}
echo "function delay() return $pace_ms end" >"$work/paced.lua"
cat "$work/introspect.lua" "$work/paced.lua" >"$work/introspect-paced.lua"
echo "== GET /me/auth-methods, 64 connections paced (${pace_ms} ms between answer and request), ${seconds}s"
wrk -t2 -c64 -d"${seconds}s" --latency -s "$work/paced.lua" -H "Authorization: Bearer $access" "http://127.0.0.1:$http_port/me/auth-methods" \
  | grep -E "Requests/sec|Non-2xx|  50%|  99%|Latency "
echo "== POST /sessions/introspect, 64 connections paced (${pace_ms} ms between answer and request), ${seconds}s"
wrk -t2 -c64 -d"${seconds}s" --latency -s "$work/introspect-paced.lua" "http://127.0.0.1:$http_port/sessions/introspect" \
  | grep -E "Requests/sec|Non-2xx|  50%|  99%|Latency "
echo "service RSS: $(awk '/VmRSS/{print $2/1024 " MiB now"}' /proc/$server/status), $(awk '/VmHWM/{print $2/1024 " MiB peak"}' /proc/$server/status)"
