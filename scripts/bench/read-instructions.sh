#!/usr/bin/env bash
# Instructions per authenticated read (issue 42), counted by valgrind's callgrind over the whole
# service process (every thread: event loops, Swift's executor, libpq), which unlike time does
# not drift with the machine or its load. One keep-alive client sends N requests of each path
# after a warm-up; instrumentation is on only while they run.
#
#   LEDGER_BENCH_BUILDS="before=/path/to/old/ledger after=.build/release/ledger" scripts/bench/read-instructions.sh [N]
set -euo pipefail
cd "$(dirname "$0")/../.."
LEDGER_EXTRA_PACKAGES="${LEDGER_EXTRA_PACKAGES:-} valgrind" source scripts/setup.sh
source scripts/pg-cluster.sh
requests="${1:-2000}"
if [ -z "${LEDGER_BENCH_BUILDS:-}" ]; then
  swift build -c release --product ledger >&2
  LEDGER_BENCH_BUILDS="this=.build/release/ledger"
fi
work=$(mktemp -d /tmp/ledger-bench-instructions.XXXXXX)
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
export LEDGER_DELIVERY_WEBHOOK_URL="http://127.0.0.1:9/deliveries" LEDGER_API_KEY_RATE_LIMIT=0
echo "machine: $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ); $(valgrind --version); $requests requests a path"
first_binary=$(awk '{split($1, a, "="); print a[2]}' <<<"$LEDGER_BENCH_BUILDS")
"$first_binary" migrate >/dev/null

for build in $LEDGER_BENCH_BUILDS; do
  label=${build%%=*} binary=${build#*=}
  http_port=$((20000 + RANDOM % 30000))
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/callgrind.$label.%p" \
    "$binary" serve --port "$http_port" --host 127.0.0.1 >"$work/serve-$label.log" 2>&1 &
  server=$!
  for _ in $(seq 1 600); do curl -sf "http://127.0.0.1:$http_port/readyz" >/dev/null && break; sleep 0.2; done
  access=$(curl -sf -X POST "http://127.0.0.1:$http_port/auth/email/signup" -H 'Content-Type: application/json' \
    -d "{\"email\":\"bench-$label-$RANDOM@example.com\",\"password\":\"violet-harbor-91\"}" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
  key=$(LEDGER_MASTER_KEY=$LEDGER_MASTER_KEY "$binary" keys create --name "bench-$label-$RANDOM" --scope sessions:introspect | tail -1)
  for path in /healthz /me/auth-methods /sessions/introspect /me; do
    python3 - "$http_port" "$path" "$access" "$key" "$requests" "$server" "$work/callgrind.$label" <<'PY'
import glob, http.client, json, os, subprocess, sys
port, path, access, key, count, pid, prefix = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6], sys.argv[7]
connection = http.client.HTTPConnection("127.0.0.1", int(port), timeout=120)
def once():
    if path == "/sessions/introspect":
        connection.request("POST", path, body=json.dumps({"token": access}),
                           headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    else:
        connection.request("GET", path, headers={"Authorization": f"Bearer {access}"})
    response = connection.getresponse()
    response.read()
    assert response.status == 200, (path, response.status)
for _ in range(200):
    once()
subprocess.run(["callgrind_control", "--zero", pid], check=True, capture_output=True)
subprocess.run(["callgrind_control", "--instr=on", pid], check=True, capture_output=True)
for _ in range(count):
    once()
subprocess.run(["callgrind_control", "--dump=" + path, pid], check=True, capture_output=True)
subprocess.run(["callgrind_control", "--instr=off", pid], check=True, capture_output=True)
newest = max(glob.glob(prefix + ".*"), key=os.path.getmtime)
total = 0
for line in open(newest):
    if line.startswith("summary:") or line.startswith("totals:"):
        total = int(line.split()[1])
        break
os.remove(newest)
print(f"{prefix.rsplit('.', 1)[-1]:<8} {path:<22} {total / count:>12,.0f} instructions/request")
PY
  done
  kill "$server"
  wait "$server" 2>/dev/null || true
  server=""
done
