#!/usr/bin/env bash
# What a signed-in read costs the database in transactions, the sessions' used-at writes
# included: 256 sessions (64 accounts on 4 devices) are signed in, then GET /me is sent READS
# times (default 500) spread over them, 8 at a time, and pg_stat_database's xact_commit +
# xact_rollback of the service's database is read before and after (after a used-at beat
# and PostgreSQL's statistics flush). The background workers' own transactions over as long a
# window with no reads are counted first and taken off. Prints the transactions per read.
# A cheap scrypt (LEDGER_SCRYPT_LOG_N, default 10 here) only shortens the sign-ups: a read
# hashes nothing.
#
#   scripts/bench/read-transactions.sh [READS]      (LEDGER_BINARY: default .build/debug/ledger)
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/setup.sh
source scripts/pg-cluster.sh
reads="${1:-500}"
binary="${LEDGER_BINARY:-.build/debug/ledger}"
[ -x "$binary" ] || swift build --product ledger >&2
work=$(mktemp -d /tmp/ledger-bench-xacts.XXXXXX)
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  [ -n "${hook:-}" ] && kill "$hook" 2>/dev/null
  wait 2>/dev/null || true
  stop_cluster
  rm -rf "$work"
}
trap cleanup EXIT
start_cluster durable 200
export LEDGER_MASTER_KEY=$(head -c 32 /dev/urandom | base64)
# Messages leave through a delivery webhook that takes them at once: none is retried while
# transactions are counted.
hook_port=$((20000 + RANDOM % 30000))
python3 -c '
import http.server, sys
class Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Hook).serve_forever()
' "$hook_port" &
hook=$!
export LEDGER_DELIVERY_WEBHOOK_URL="http://127.0.0.1:$hook_port/deliveries" LEDGER_IP_SIGNUP_LIMIT=100000 LEDGER_IP_LOOKUP_LIMIT=100000 \
  LOG_LEVEL=warning LEDGER_SCRYPT_LOG_N="${LEDGER_SCRYPT_LOG_N:-10}"
as_postgres "$pg_bin/createdb" -h 127.0.0.1 -p "$PG_CLUSTER_PORT" -U postgres ledger
export DATABASE_URL="postgresql://postgres@/ledger?host=$PG_CLUSTER_DIR&port=$PG_CLUSTER_PORT"
"$binary" migrate >/dev/null
http_port=$((20000 + RANDOM % 30000))
"$binary" serve --port "$http_port" --host 127.0.0.1 >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 1 300); do curl -sf "http://127.0.0.1:$http_port/readyz" >/dev/null && break; sleep 0.1; done
key=$("$binary" keys create --name "bench-xacts-$RANDOM" --scope sessions:introspect | tail -1)
python3 scripts/bench/reads_tokens.py "http://127.0.0.1:$http_port" 256 "$key" "$work"

xacts() {
  as_postgres "$pg_bin/psql" -h 127.0.0.1 -p "$PG_CLUSTER_PORT" -U postgres -d ledger -Atc \
    "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = 'ledger'"
}
# Let the sign-ups' own work (their messages, first used-at writes) settle, and the minute pass
# within which a session's use is not written again (`Policies.sessionTouchInterval`): every
# session's first read below is then a use to write.
sleep 65
window=5
idle_before=$(xacts)
sleep "$window"
idle_after=$(xacts)
before=$(xacts)
started=$(date +%s.%N)
python3 - "http://127.0.0.1:$http_port/me" "$work/tokens.txt" "$reads" <<'PY'
import sys, urllib.request
from concurrent.futures import ThreadPoolExecutor
url, tokens, reads = sys.argv[1], open(sys.argv[2]).read().split(), int(sys.argv[3])
def read(i):
    request = urllib.request.Request(url, headers={"Authorization": "Bearer " + tokens[i % len(tokens)]})
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200
with ThreadPoolExecutor(max_workers=8) as pool:
    list(pool.map(read, range(reads)))
PY
# One used-at beat (a second) and the statistics flush (up to a second) after the last read,
# then the rest of the window, so the background counts over the same length as when idle.
sleep "$window"
after=$(xacts)
elapsed=$(awk -v s="$started" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
idle=$((idle_after - idle_before))
total=$((after - before))
echo "machine: $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ); $binary"
echo "$reads reads over 256 sessions: $total transactions in ${elapsed}s; $idle in an idle ${window}s window before"
# The background's rate while idle, over the reads' window, is taken off.
awk -v t="$total" -v i="$idle" -v w="$window" -v e="$elapsed" -v n="$reads" 'BEGIN {
  printf "transactions per signed-in read: %.3f (%.3f before taking off the background)\n", (t - i * e / w) / n, t / n }'
