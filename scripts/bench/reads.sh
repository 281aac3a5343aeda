#!/usr/bin/env bash
# The hot reads: GET /me/auth-methods, POST /sessions/introspect, GET /me and
# GET /me/sessions, each beside GET /healthz in the same run, at 8 / 64 / 256 wrk connections,
# against release builds in the production configuration (no --dev: a delivery webhook,
# LOG_LEVEL info with its access line per request), on a private PostgreSQL reached over its
# Unix socket. Prints requests/s, p50/p99 and the service's CPU time per request.
#
# Several builds run side by side in one window, one after another on the same cluster:
#   LEDGER_BENCH_BUILDS="before=/path/to/old/ledger after=.build/release/ledger" scripts/bench/reads.sh [SECONDS]
# Without LEDGER_BENCH_BUILDS it builds and measures this checkout. LEDGER_BENCH_CONNECTIONS
# (default "8 64 256") and LEDGER_BENCH_PATHS narrow a run; /auth/email/login and
# /auth/token/refresh (each answer a new token) are measured when named there, in a run of their
# own at one connection count: a refresh spends its token and replaces the session's access token.
# LEDGER_BENCH_FORMATS="opaque jwt" runs each build with each access-token format, side by side.
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
export LEDGER_MASTER_KEY=$(head -c 32 /dev/urandom | base64)
# Production: messages leave through a delivery webhook (nothing listens: the verification emails
# of the set-up are retried in the background, as a slow sender would be). The set-up signs
# LEDGER_BENCH_TOKENS / 4 accounts up from one address, past the default limits per address.
export LEDGER_DELIVERY_WEBHOOK_URL="http://127.0.0.1:9/deliveries" LEDGER_DB_MAX_CONNECTIONS=16 LEDGER_API_KEY_RATE_LIMIT=0 \
  LEDGER_IP_SIGNUP_LIMIT=100000 LEDGER_IP_LOOKUP_LIMIT=100000
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; $(date -u +%Y-%m-%dT%H:%MZ); PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}'); wrk -t2"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$server/stat"; }
# PostgreSQL's CPU (every process of the postgres user: the cluster's backends and workers).
pg_ticks() { pgrep -u postgres | sed 's|.*|/proc/&/stat|' | xargs cat 2>/dev/null | awk '{t += $14 + $15} END {print t + 0}'; }

# wrk against one path; prints "label conns req/s p50 p99 cpu-µs/request".
run_wrk() {
  local label=$1 connections=$2 path=$3 script=$4
  local before after pg_before pg_after output requests
  before=$(cpu_ticks) pg_before=$(pg_ticks)
  output=$(wrk -t2 -c"$connections" -d"${seconds}s" --latency -s "$script" "http://127.0.0.1:$http_port$path")
  after=$(cpu_ticks) pg_after=$(pg_ticks)
  requests=$(awk '/requests in/{print $1}' <<<"$output")
  printf '%-8s %-22s c=%-4s %10s req/s  p50 %-9s p99 %-9s cpu %s µs/req  pg %s µs/req%s\n' "$label" "$path" "$connections" \
    "$(awk '/Requests\/sec/{print $2}' <<<"$output")" "$(awk '$1=="50%"{print $2}' <<<"$output")" \
    "$(awk '$1=="99%"{print $2}' <<<"$output")" \
    "$(awk -v t=$((after - before)) -v n="$requests" -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.0f", t / hz * 1e6 / n}')" \
    "$(awk -v t=$((pg_after - pg_before)) -v n="$requests" -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.0f", t / hz * 1e6 / n}')" \
    "$(grep -q Non-2xx <<<"$output" && echo "  ($(grep Non-2xx <<<"$output" | xargs))" || true)"
}

build_number=0
for build in $LEDGER_BENCH_BUILDS; do
for format in ${LEDGER_BENCH_FORMATS:-opaque}; do
  label=${build%%=*} binary=${build#*=}
  [ -z "${LEDGER_BENCH_FORMATS:-}" ] || label="$label-$format"
  export LEDGER_ACCESS_TOKEN_FORMAT=$format
  # A database of its own per build: each reads tables of the same size.
  build_number=$((build_number + 1))
  as_postgres "$pg_bin/createdb" -h 127.0.0.1 -p "$PG_CLUSTER_PORT" -U postgres "ledger$build_number"
  export DATABASE_URL="postgresql://postgres@/ledger$build_number?host=$PG_CLUSTER_DIR&port=$PG_CLUSTER_PORT"
  "$binary" migrate >/dev/null
  http_port=$((20000 + RANDOM % 30000))
  "$binary" serve --port "$http_port" --host 127.0.0.1 >"$work/serve-$label.log" 2>&1 &
  server=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$http_port/readyz" >/dev/null && break; sleep 0.1; done
  key=$("$binary" keys create --name "bench-$label-$RANDOM" --scope sessions:introspect | tail -1)
  # A session per request in flight (LEDGER_BENCH_TOKENS, production scrypt: ~40 s for 256).
  python3 scripts/bench/reads_tokens.py "http://127.0.0.1:$http_port" "${LEDGER_BENCH_TOKENS:-256}" "$key" "$work"
  : >"$work/plain.lua"
  for connections in ${LEDGER_BENCH_CONNECTIONS:-8 64 256}; do
    for path in ${LEDGER_BENCH_PATHS:-/healthz /me/auth-methods /sessions/introspect /me /me/sessions}; do
      case $path in
      /healthz) script=$work/plain.lua ;;
      /sessions/introspect) script=$work/introspect.lua ;;
      /auth/email/login) script=$work/signin.lua ;;
      /auth/token/refresh) script=$work/refresh.lua ;;
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
done
