#!/usr/bin/env bash
# Event API benchmarks against a release build and a private local PostgreSQL
# (default durability): GET /events read over HTTP through 1,000,000 events (10,000 a page,
# following next_cursor), and the same 1,000,000 events through GET /events/stream (SSE).
# The in-process feed read of the same events (`ledger-bench feed`) is printed beside them.
# Then webhook delivery: a subscription from the start of the feed, pushed to a local receiver
# (threaded Python, answers 204 at once), timed until all 1,000,000 events have arrived.
#
#   scripts/bench/events.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/setup.sh
bench_workdir events
bench_start
# The receiver is on loopback, which subscriptions refuse unless allowed.
export LEDGER_DB_MAX_CONNECTIONS=8 LOG_LEVEL=warning LEDGER_API_KEY_RATE_LIMIT=0 LEDGER_WEBHOOK_ALLOW_PRIVATE_NETWORKS=true

"$ledger" migrate >/dev/null
"$bench" feed --events 1000000
bench_serve
key=$("$ledger" keys create --name bench --scope events:read,admin | tail -1)

python3 - "$http_port" "$key" <<'PY'
import http.client, socket, sys, time
port, key = int(sys.argv[1]), sys.argv[2]
headers = {"Authorization": "Bearer " + key}

def pages(cloud=False):
    """Reads the whole feed in pages of 10,000: the plain form following next_cursor, or with
    Accept: application/cloudevents-batch+json following the last event's ledgercursor."""
    conn = http.client.HTTPConnection("127.0.0.1", port)
    request_headers = dict(headers, Accept="application/cloudevents-batch+json") if cloud else headers
    marker, cursor_key = (b'"specversion"', b'"ledgercursor":"') if cloud else (b'"event_id"', b'"next_cursor":"')
    cursor, events, size = "", 0, 0
    while True:
        conn.request("GET", "/events?limit=10000" + (("&after=" + cursor) if cursor else ""), headers=request_headers)
        body = conn.getresponse().read()
        count = body.count(marker)
        if count == 0:
            return events, size
        events += count
        size += len(body)
        start = body.rindex(cursor_key) + len(cursor_key)
        cursor = body[start:body.index(b'"', start)].decode()

pages()  # warm the caches once
# The plain and the CloudEvents form alternately, twice, in one run (CloudEvents >= 0.8 of plain).
rates = {False: [], True: []}
for cloud in (False, True, False, True):
    started = time.monotonic()
    events, size = pages(cloud)
    seconds = time.monotonic() - started
    rates[cloud].append(events / seconds)
    name = "cloudevents" if cloud else "plain"
    print(f"bench http GET /events form={name} events={events} page=10000 seconds={seconds:.2f} events_per_s={events / seconds:.0f} mib={size / 1048576:.0f}")
print(f"bench http cloudevents/plain ratio={max(rates[True]) / max(rates[False]):.2f}")

sock = socket.create_connection(("127.0.0.1", port))
sock.settimeout(10)
sock.sendall(f"GET /events/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\r\n".encode())
started = time.monotonic()
seen, tail, total = 0, b"", 0
while seen < events:
    try:
        chunk = sock.recv(1 << 20)
    except socket.timeout:
        break
    if not chunk:
        break
    total += len(chunk)
    data = tail + chunk
    seen += data.count(b"\nid: ") - tail.count(b"\nid: ")
    tail = data[-8:]
seconds = time.monotonic() - started
sock.close()
print(f"bench sse GET /events/stream events={seen} seconds={seconds:.2f} events_per_s={seen / seconds:.0f} mib={total / 1048576:.0f}")
PY
receiver_port=$((20000 + RANDOM % 30000))
python3 - "$http_port" "$key" "$receiver_port" <<'PY'
import http.client, http.server, json, sys, threading, time
port, key, receiver_port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
state = {"events": 0, "posts": 0, "first": None, "last": None}
lock = threading.Lock()
class Receiver(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        with lock:
            state["first"] = state["first"] or time.monotonic()
            state["events"] += body.count(b'"event_id"')
            state["posts"] += 1
            state["last"] = time.monotonic()
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", receiver_port), Receiver)
threading.Thread(target=server.serve_forever, daemon=True).start()
conn = http.client.HTTPConnection("127.0.0.1", port)
body = json.dumps({"url": f"http://127.0.0.1:{receiver_port}/hook", "after": "djEuMC4w"})
conn.request("POST", "/subscriptions", body=body, headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"})
response = conn.getresponse()
assert response.status == 201, (response.status, response.read()[:200])
response.read()
started = time.monotonic()
while time.monotonic() - started < 600:
    time.sleep(0.5)
    with lock:
        if state["events"] >= 1000000 or (state["last"] and time.monotonic() - state["last"] > 10):
            break
seconds = state["last"] - started
print(f"bench webhooks events={state['events']} posts={state['posts']} seconds={seconds:.2f} events_per_s={state['events'] / seconds:.0f}")
server.shutdown()
PY
echo "service RSS: $(awk '/VmHWM/{print $2/1024 " MiB peak"}' /proc/$server/status)"
