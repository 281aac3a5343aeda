#!/usr/bin/env bash
# The hot reads (issue 42): GET /me/auth-methods, POST /sessions/introspect, GET /me and
# GET /me/sessions, each beside GET /healthz in the same run, at 8 / 64 / 256 wrk connections,
# against release builds in the production configuration (no --dev: a delivery webhook,
# LOG_LEVEL info with its access line per request), on a private PostgreSQL reached over its
# Unix socket. Prints requests/s, p50/p99 and the service's CPU time per request.
#
# Several builds run side by side in one window, one after another on the same cluster:
#   LEDGER_BENCH_BUILDS="before=/path/to/old/ledger after=.build/release/ledger" scripts/bench/reads.sh [SECONDS]
# Without LEDGER_BENCH_BUILDS it builds and measures this checkout. LEDGER_BENCH_CONNECTIONS
# (default "8 64 256") and LEDGER_BENCH_PATHS narrow a run.
set -euo pipefail
cd "$(dirname "$0")/../.."
LEDGER_EXTRA_PACKAGES="${LEDGER_EXTRA_PACKAGES:-} wrk" source scripts/setup.sh
source scripts/pg-cluster.sh
seconds="${1:-10}"
if [ -z "${LEDGER_BENCH_BUILDS:-}" ]; then
  swift build -c release --product ledger >&2
  LEDGER_BENCH_BUILDS="this=.build/release/ledger"
fi
work=$(mktemp -d /tmp/ledger-bench-reads.XXXXXX)
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  wait 2>/dev/null || true
  stop_cluster
  rm -rf "$work"
}
trap cleanup EXIT
start_cluster durable 200
as_postgres "$pg_bin/createdb" -h 127.0.0.1 -p "$PG_CLUSTER_PORT" -U postgres ledger
export DATABASE_URL="postgresql://postgres@/ledger?host=$PG_CLUSTER_DIR&port=$PG_CLUSTER_PORT"
export LEDGER_MASTER_KEY=$(head -c 32 /dev/urandom | base64)
# Production: messages leave through a delivery webhook (nothing listens: the one verification
# email of the set-up is retried in the background, as a slow sender would be).
export LEDGER_DELIVERY_WEBHOOK_URL="http://127.0.0.1:9/deliveries" LEDGER_DB_MAX_CONNECTIONS=16 LEDGER_API_KEY_RATE_LIMIT=0
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; $(date -u +%Y-%m-%dT%H:%MZ); PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}'); wrk -t2"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$server/stat"; }

# wrk against one path; prints "label conns req/s p50 p99 cpu-µs/request".
run_wrk() {
  local label=$1 connections=$2 path=$3 script=$4
  local before after output requests
  before=$(cpu_ticks)
  output=$(wrk -t2 -c"$connections" -d"${seconds}s" --latency -s "$script" "http://127.0.0.1:$http_port$path")
  after=$(cpu_ticks)
  requests=$(awk '/requests in/{print $1}' <<<"$output")
  printf '%-8s %-22s c=%-4s %10s req/s  p50 %-9s p99 %-9s cpu %s µs/req%s\n' "$label" "$path" "$connections" \
    "$(awk '/Requests\/sec/{print $2}' <<<"$output")" "$(awk '$1=="50%"{print $2}' <<<"$output")" \
    "$(awk '$1=="99%"{print $2}' <<<"$output")" \
    "$(awk -v t=$((after - before)) -v n="$requests" -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.0f", t / hz * 1e6 / n}')" \
    "$(grep -q Non-2xx <<<"$output" && echo "  ($(grep Non-2xx <<<"$output" | xargs))" || true)"
}

first_binary=$(awk '{split($1, a, "="); print a[2]}' <<<"$LEDGER_BENCH_BUILDS")
"$first_binary" migrate >/dev/null
for build in $LEDGER_BENCH_BUILDS; do
  label=${build%%=*} binary=${build#*=}
  http_port=$((20000 + RANDOM % 30000))
  "$binary" serve --port "$http_port" --host 127.0.0.1 >"$work/serve-$label.log" 2>&1 &
  server=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$http_port/readyz" >/dev/null && break; sleep 0.1; done
  access=$(curl -sf -X POST "http://127.0.0.1:$http_port/auth/email/signup" -H 'Content-Type: application/json' \
    -d "{\"email\":\"bench-$label-$RANDOM@example.com\",\"password\":\"violet-harbor-91\"}" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
  key=$("$binary" keys create --name "bench-$label-$RANDOM" --scope sessions:introspect | tail -1)
  printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "$access" >"$work/bearer.lua"
  : >"$work/plain.lua"
  cat >"$work/introspect.lua" <<LUA
wrk.method = "POST"
wrk.body = '{"token":"$access"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $key"
LUA
  for connections in ${LEDGER_BENCH_CONNECTIONS:-8 64 256}; do
    for path in ${LEDGER_BENCH_PATHS:-/healthz /me/auth-methods /sessions/introspect /me /me/sessions}; do
      case $path in
      /healthz) script=$work/plain.lua ;;
      /sessions/introspect) script=$work/introspect.lua ;;
      *) script=$work/bearer.lua ;;
      esac
      run_wrk "$label" "$connections" "$path" "$script"
    done
  done
  echo "$label: service RSS $(awk '/VmHWM/{print $2/1024 " MiB peak"}' "/proc/$server/status")"
  kill "$server"
  wait "$server" 2>/dev/null || true
  server=""
done
