#!/usr/bin/env bash
# How the costs grow with the store. The same measurements as the 1-million
# figures on a store of ACCOUNTS x 100 account events (default 100,000 x 100 = 10,000,000) plus
# one 10,000-event account: writing them (`ledger-bench history`), `ledger projections rebuild`,
# the global feed read, single-event appends at 8 writers beside the same run's ceiling, and the
# point-in-time state and history of the long account over HTTP (scripts/bench/audit.sh's).
#
#   scripts/bench/growth.sh [ACCOUNTS]
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/setup.sh
accounts=${1:-100000}
bench_workdir growth
bench_start
export LEDGER_DB_MAX_CONNECTIONS=8 LOG_LEVEL=warning LEDGER_API_KEY_RATE_LIMIT=0

"$ledger" migrate >/dev/null
"$bench" history --accounts "$accounts" --events-per-account 100 | tail -2 | head -1
long_account=$("$bench" history --accounts 1 --events-per-account 10000 --batch 1 --writers 1 | tail -1 | awk '{print $2}')
echo "events: $(psql -X -A -t -c 'SELECT count(*) FROM events'); database: $(psql -X -A -t -c "SELECT pg_size_pretty(pg_database_size('ledger'))")"
"$ledger" projections rebuild | tail -1
"$bench" feed --events 1
c=$($ceiling write 8 10); echo "$c"
"$bench" append --writers 8 --seconds 10
bench_serve
key=$("$ledger" keys create --name bench --scope audit:read | tail -1)
python3 - "$http_port" "$key" "$long_account" <<'PY'
import datetime, http.client, json, random, sys, time
port, key, account = int(sys.argv[1]), sys.argv[2], sys.argv[3]
headers = {"Authorization": "Bearer " + key}
conn = http.client.HTTPConnection("127.0.0.1", port)
start = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
random.seed(7)
def get(path):
    conn.request("GET", path, headers=headers)
    response = conn.getresponse()
    body = response.read()
    assert response.status == 200, (response.status, body[:200])
    return json.loads(body)
def timed(paths):
    latencies = []
    for path in paths:
        began = time.monotonic()
        get(path)
        latencies.append((time.monotonic() - began) * 1000)
    latencies.sort()
    return latencies[len(latencies) // 2], latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))]
for _ in range(20):
    get(f"/accounts/{account}/state?at=2026-01-05T00:00:00Z")
state = [f"/accounts/{account}/state?at=" + (start + datetime.timedelta(minutes=random.uniform(0, 10000))).strftime("%Y-%m-%dT%H:%M:%SZ") for _ in range(300)]
p50, p99 = timed(state)
print(f"bench http state-at of the 10,000-event account: 300 requests p50_ms={p50:.1f} p99_ms={p99:.1f}")
p50, p99 = timed([f"/accounts/{account}/events" for _ in range(50)])
print(f"bench http whole history of the 10,000-event account: 50 requests p50_ms={p50:.1f} p99_ms={p99:.1f}")
PY
