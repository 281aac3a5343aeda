#!/usr/bin/env bash
# Sign-ins during a sign-up flood: FLOODERS clients sign up new accounts as fast as
# the service answers, each request from an address of its own (X-Forwarded-For from the trusted
# loopback, below every per-address limit), while 4 clients sign in to existing accounts; the
# sign-ins' latency is the figure (target: p99 ≤ 2 s). Release build, default scrypt cost
# (LEDGER_SCRYPT_LOG_N=17, 128 MiB a hash), private cluster with default durability. A first run
# without the flood gives the baseline; the flood first waits out each 503's Retry-After (still
# dozens of sign-ups a second against two hashes' worth), then ignores it (the HTTP layer flooded
# too, by a load generator on the same two cores).
#
#   scripts/bench/login-flood.sh [SECONDS] [FLOODERS]
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/setup.sh
seconds="${1:-30}"
flooders="${2:-64}"
bench_workdir login-flood
bench_start
export LOG_LEVEL=warning LEDGER_TRUSTED_PROXIES=127.0.0.1/32
"$ledger" migrate >/dev/null
bench_database_socket
bench_serve
bench() { "$bench" login-flood --url "http://127.0.0.1:$http_port" --seconds "$seconds" "$@"; }
bench --flooders 0
bench --flooders "$flooders"
bench --flooders "$flooders" --ignore-retry-after
echo "service RSS: $(awk '/VmHWM/{print $2/1024 " MiB peak"}' /proc/$server/status)"
