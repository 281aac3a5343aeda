#!/usr/bin/env bash
# HTTP benchmarks (issue 3): GET /me/auth-methods and POST /sessions/introspect with wrk at
# 64 connections against a release build and a private local PostgreSQL (default durability);
# scrypt hashes/s per core at the default cost; the service's RSS under that load.
#
#   LEDGER_EXTRA_PACKAGES=wrk scripts/bench-http.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
LEDGER_EXTRA_PACKAGES="${LEDGER_EXTRA_PACKAGES:-} wrk" source scripts/bench-setup.sh
seconds="${1:-15}"
work=$(mktemp -d /tmp/ledger-bench-http.XXXXXX)
cleanup() { [ -n "${server:-}" ] && kill "$server" 2>/dev/null; wait 2>/dev/null; stop_cluster; rm -rf "$work"; }
trap cleanup EXIT
bench_start
export LEDGER_DB_MAX_CONNECTIONS=16 LOG_LEVEL=warning LEDGER_API_KEY_RATE_LIMIT=0
http_port=$((20000 + RANDOM % 30000))

"$ledger" bench scrypt --seconds 10

"$ledger" migrate >/dev/null
"$ledger" serve --port "$http_port" --host 127.0.0.1 >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$http_port/readyz" >/dev/null && break; sleep 0.1; done
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
echo "service RSS: $(awk '/VmRSS/{print $2/1024 " MiB now"}' /proc/$server/status), $(awk '/VmHWM/{print $2/1024 " MiB peak"}' /proc/$server/status)"
