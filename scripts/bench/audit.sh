#!/usr/bin/env bash
# Audit and operations benchmarks against a release build and a private local
# PostgreSQL (default durability):
#   1. `ledger projections rebuild` of 1,010,000 account events (10,000 accounts x 100 events,
#      written by `ledger-bench history`, and the long account below): events/s as the command
#      prints it;
#   2. GET /accounts/{id}/state?at=T of one 10,000-event account (one event a minute): latency
#      p50/p99 over 300 sequential requests at random instants of its history.
#
#   scripts/bench/audit.sh [ACCOUNTS [EVENTS_PER_ACCOUNT]]
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/setup.sh
accounts=${1:-10000}
per_account=${2:-100}
bench_workdir audit
bench_start
export LEDGER_DB_MAX_CONNECTIONS=8 LOG_LEVEL=warning LEDGER_API_KEY_RATE_LIMIT=0

"$ledger" migrate >/dev/null
"$bench" history --accounts "$accounts" --events-per-account "$per_account" | tail -2 | head -1
# One long history, one event a minute. Written before the rebuild, which leaves it a
# snapshot every 1,000 versions (as its commands would have).
long_account=$("$bench" history --accounts 1 --events-per-account 10000 --batch 1 --writers 1 | tail -1 | awk '{print $2}')
"$ledger" projections rebuild | tail -1
echo "accounts projected: $(psql -X -A -t -c 'SELECT count(*) FROM accounts'), sessions: $(psql -X -A -t -c 'SELECT count(*) FROM sessions'), snapshots: $(psql -X -A -t -c 'SELECT count(*) FROM stream_snapshots')"
bench_serve
key=$("$ledger" keys create --name bench --scope audit:read | tail -1)

python3 - "$http_port" "$key" "$long_account" <<'PY'
import datetime, http.client, json, random, sys, time
port, key, account = int(sys.argv[1]), sys.argv[2], sys.argv[3]
headers = {"Authorization": "Bearer " + key}
conn = http.client.HTTPConnection("127.0.0.1", port)
start = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
random.seed(7)
def get(at):
    conn.request("GET", f"/accounts/{account}/state?at={at}", headers=headers)
    response = conn.getresponse()
    body = response.read()
    assert response.status == 200, (response.status, body[:200])
    return json.loads(body)
for _ in range(20):  # warm-up
    get("2026-01-05T00:00:00Z")
latencies, versions = [], []
for _ in range(300):
    at = (start + datetime.timedelta(minutes=random.uniform(0, 10000))).strftime("%Y-%m-%dT%H:%M:%SZ")
    began = time.monotonic()
    state = get(at)
    latencies.append((time.monotonic() - began) * 1000)
    versions.append(state["version"])
latencies.sort()
p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]
print(f"bench http GET /accounts/{{id}}/state?at= events=10000 requests={len(latencies)} "
      f"p50_ms={p(0.50):.1f} p99_ms={p(0.99):.1f} max_ms={latencies[-1]:.1f} versions={min(versions)}..{max(versions)}")
PY
echo "service RSS: $(awk '/VmHWM/{print $2/1024 " MiB peak"}' /proc/$server/status)"
