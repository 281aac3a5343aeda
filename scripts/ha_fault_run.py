"""The failover fault run (scripts/ha-fault-run.sh; docs/operations.md "High availability on
Patroni"): two `ledger serve` on a three-node Patroni cluster's multi-host URLs, writers that log
every acknowledgement, a feed follower by cursor, a probe that writes to the database itself;
then `kill -9` of the leader's Patroni and postmaster, and a planned switchover.

Checks: no acknowledged write lost, no feed event skipped or repeated, no answer but 2xx or
`503 unavailable` with `Retry-After`, sessions and refresh tokens valid afterwards. Prints the
windows with no acknowledged write (what BENCHMARKS.md "Issue 56" records) and holds them to
loose bounds only: the targets are read from the figures, not asserted by a timed test.

Environment: LEDGER_BINARY, HA_DATABASE_URL, HA_READ_DATABASE_URL, HA_DIR, HA_REST_PORTS
(space-separated, node1 first), HA_PG_BIN; LEDGER_HA_SERVER_LOG for the services' log."""

import base64
import json
import signal
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from service_harness import check, finish, free_port, request, serving  # noqa: E402

PASSWORD = "violet-harbor-91"
WRITERS_PER_INSTANCE = 2
# A writer's pause between writes: the resolution of the windows measured.
PAUSE = 0.02
REST_PORTS = [int(port) for port in os.environ["HA_REST_PORTS"].split()]


class Receiver(BaseHTTPRequestHandler):
    """Takes the service's deliveries (verification emails) and drops them; keeps the events of
    every webhook push, in the order they arrive."""

    pushed = []
    lock = threading.Lock()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/hook":
            with Receiver.lock:
                Receiver.pushed.extend(json.loads(body)["events"])
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


class Log:
    """Every call's (instance, kind, start, end, status, detail), appended under a lock."""

    def __init__(self):
        self.lock = threading.Lock()
        self.entries = []

    def add(self, **entry):
        with self.lock:
            self.entries.append(entry)

    def select(self, **match):
        with self.lock:
            return [e for e in self.entries if all(e.get(k) == v for k, v in match.items())]


def call(base, method, path, body=None, token=None):
    """(status, headers, parsed body, start, end); status 0 when the connection failed."""
    start = time.monotonic()
    try:
        status, headers, raw = request(base, method, path, body, token)
        parsed = json.loads(raw) if raw else {}
    except Exception as error:  # a refused or reset connection: counted, never hidden
        status, headers, parsed = 0, {}, {"error": type(error).__name__}
    return status, headers, parsed, start, time.monotonic()


class Writer(threading.Thread):
    """Signs an account up, then changes its display name again and again, logging each answer;
    every tenth write is another sign-up."""

    def __init__(self, name, base, instance, log, stop):
        super().__init__(daemon=True)
        self.name, self.base, self.instance, self.log, self.stop = name, base, instance, log, stop
        self.accounts = []  # [{account_id, access_token, refresh_token, acked: [names], tried: [names]}]

    def sign_up(self, index):
        email = f"ha-{self.name}-{index}@example.com"
        status, headers, body, start, end = call(self.base, "POST", "/auth/email/signup", {"email": email, "password": PASSWORD})
        self.record("signup", status, headers, body, start, end)
        if status == 201:
            self.accounts.append({
                "account_id": body["account_id"], "access_token": body["access_token"],
                "refresh_token": body["refresh_token"], "acked": [], "tried": []})

    def record(self, kind, status, headers, body, start, end):
        self.log.add(
            instance=self.instance, writer=self.name, kind=kind, start=start, end=end, status=status,
            error=body.get("error"), retry_after="Retry-After" in headers or "retry-after" in headers,
            account_id=body.get("account_id") if kind == "signup" else None)

    def run(self):
        index = 0
        while not self.stop.is_set():
            index += 1
            if not self.accounts or index % 10 == 0:
                self.sign_up(index)
            else:
                account = self.accounts[-1]
                name = f"{self.name}-{index}"
                account["tried"].append(name)
                status, headers, body, start, end = call(
                    self.base, "PATCH", "/me/profile", {"display_name": name}, account["access_token"])
                self.record("change", status, headers, body, start, end)
                if status == 200:
                    account["acked"].append(name)
            time.sleep(PAUSE)


class Follower(threading.Thread):
    """Follows GET /events by cursor (long-polls), keeping every event it is given, in order."""

    def __init__(self, base, key, log, stop):
        super().__init__(daemon=True)
        self.base, self.key, self.log, self.stop = base, key, log, stop
        self.events, self.cursor = [], None
        self.quiet_pages = 0

    def run(self):
        while not self.stop.is_set():
            path = "/events?limit=500&wait=1" + (f"&after={self.cursor}" if self.cursor else "")
            status, headers, body, start, end = call(self.base, "GET", path, token=self.key)
            self.log.add(instance="follower", kind="feed", start=start, end=end, status=status, error=body.get("error"),
                         retry_after="Retry-After" in headers)
            if status != 200:
                time.sleep(0.2)
                continue
            self.events.extend(body["events"])
            self.cursor = body.get("next_cursor") or self.cursor
            self.quiet_pages = 0 if body["events"] else self.quiet_pages + 1


class Probe(threading.Thread):
    """Commits a row of its own through the read-write URL every 100 ms: when a primary accepts
    writes (a synchronous standby has them), whatever the service does. A transaction that
    writes nothing would commit on a new primary before any standby follows it."""

    def __init__(self, stop):
        super().__init__(daemon=True)
        self.stop = stop
        self.commits, self.failures = [], []  # end times of committed and of failed probes

    def first_commit_after_outage(self, since):
        """When a primary first committed a probe after the first probe since `since` that failed."""
        failed = next((t for t in self.failures if t > since), None)
        return next((t for t in self.commits if failed and t > failed), None)

    def run(self):
        while not self.stop.is_set():
            result = psql("INSERT INTO ha_probe VALUES (now())", connect_timeout=1)
            (self.commits if result.returncode == 0 else self.failures).append(time.monotonic())
            time.sleep(0.1)


def rest(port, path, method="GET", body=None):
    """A call to a node's Patroni REST API; changes carry its user (HA_REST_PASSWORD)."""
    call = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method,
                                  data=json.dumps(body).encode() if body is not None else None)
    if method != "GET":
        credentials = base64.b64encode(f"patroni:{os.environ['HA_REST_PASSWORD']}".encode()).decode()
        call.add_header("Authorization", "Basic " + credentials)
    try:
        with urllib.request.urlopen(call, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
    except Exception:
        return 0, b""


def leader():
    for index, port in enumerate(REST_PORTS):
        if rest(port, "/primary")[0] == 200:
            return index
    return None


def members(port):
    status, raw = rest(port, "/cluster")
    return json.loads(raw).get("members", []) if status == 200 else []


def wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    check(False, f"in time: {what}")
    return None


def kill_leader(index):
    """kill -9 of the leader's Patroni, then of its postmaster (the machine is gone)."""
    node = f"node{index + 1}"
    config = os.path.join(os.environ["HA_DIR"], f"{node}.yml")
    patroni = subprocess.run(["pgrep", "-f", f"patroni {config}"], capture_output=True, text=True).stdout.split()
    with open(os.path.join(os.environ["HA_DIR"], node, "data", "postmaster.pid")) as file:
        postmaster = file.readline().strip()
    for pid in patroni + [postmaster]:
        subprocess.run(["kill", "-9", pid], check=False)
    return node


def quiet_window(log, instance, since, until):
    """The longest time within [since, until] in which `instance` acknowledged no write."""
    acks = sorted(e["end"] for e in log.select(instance=instance) if e["kind"] in ("signup", "change")
                  and 200 <= e["status"] < 300 and since <= e["end"] <= until)
    points = [since] + acks
    return max(b - a for a, b in zip(points, points[1:])) if len(points) > 1 else until - since


def first_ack(log, instance, moment, of="start"):
    """When `instance` first acknowledged a write whose `of` ("start" or "end") is at or after `moment`."""
    ends = [e["end"] for e in log.select(instance=instance) if e["kind"] in ("signup", "change")
            and 200 <= e["status"] < 300 and e[of] >= moment]
    return min(ends) if ends else None


def whole_feed(base, key):
    events, cursor = [], None
    while True:
        status, _, body, _, _ = call(base, "GET", "/events?limit=1000" + (f"&after={cursor}" if cursor else ""), token=key)
        if status != 200:
            check(False, f"the whole feed read back answered {status}")
            return events
        events.extend(body["events"])
        if not body["events"]:
            return events
        cursor = body["next_cursor"]


def psql(sql, url=None, connect_timeout=2):
    """psql running `sql` through the read-write URL, its password in the environment rather than
    on the command line (where `ps` and a traceback would show it)."""
    parts = urllib.parse.urlsplit(url or os.environ["HA_DATABASE_URL"])
    netloc = parts.netloc.replace(f":{parts.password}@", "@") if parts.password else parts.netloc
    query = parts.query.replace("connect_timeout=2", f"connect_timeout={connect_timeout}")
    bare = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, ""))
    return subprocess.run([os.path.join(os.environ["HA_PG_BIN"], "psql"), "-X", "-q", "-A", "-t", "-c", sql, bare],
                          env=dict(os.environ, PGPASSWORD=urllib.parse.unquote(parts.password or "")),
                          capture_output=True, text=True, timeout=30)


def on_primary(sql):
    """One value `sql` gives on the primary; None when it fails."""
    result = psql(sql)
    return result.stdout.strip() if result.returncode == 0 else None


# PurgeLeadership.lockKey ("LEDGERPU"), as pg_locks shows a bigint advisory lock.
PURGE_LEADERS = ("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
                 " AND classid = x'4C454447'::int AND objid = x'45525055'::int AND objsubid = 1")
LISTENERS = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ledger' AND query LIKE 'LISTEN%'"


def api_key(environment, name, scope):
    output = subprocess.run([os.environ["LEDGER_BINARY"], "keys", "create", "--name", name, "--scope", scope],
                            env=environment, capture_output=True, text=True, check=True).stdout
    return output.strip().splitlines()[-1]


def run(bases, environment):
    log, stop, figures = Log(), threading.Event(), {}
    reader = api_key(environment, "ha-follower", "events:read")
    admin = api_key(environment, "ha-admin", "admin")
    status, _, subscription, _, _ = call(bases[0], "POST", "/subscriptions",
                                         {"url": environment["HA_HOOK_URL"]}, admin)
    check(status == 201, f"a webhook subscription ({status})")
    writers = [Writer(f"i{i}w{w}", base, f"instance{i}", log, stop)
               for i, base in enumerate(bases) for w in range(WRITERS_PER_INSTANCE)]
    follower_stop = threading.Event()
    follower = Follower(bases[1], reader, log, follower_stop)
    check(psql("CREATE TABLE ha_probe (at timestamptz)").returncode == 0, "the probe's table")
    probe = Probe(stop)
    for thread in writers + [follower, probe]:
        thread.start()
    time.sleep(5)

    # Unplanned: the leader's machine is gone.
    old = leader()
    check(old is not None, "a leader before the kill")
    killed_at = time.monotonic()
    node = kill_leader(old)
    print(f"fault run: kill -9 of {node}'s Patroni and postmaster", flush=True)
    new = wait_for(lambda: (index := leader()) is not None and index != old and index + 1, 60, "a new leader")
    commit = wait_for(lambda: probe.first_commit_after_outage(killed_at), 60, "a primary commits again")
    wait_for(lambda: all(first_ack(log, f"instance{i}", commit or killed_at) for i in range(2)), 60,
             "both instances acknowledge writes after the failover")
    recovered_at = time.monotonic()
    figures["unplanned_first_probe_commit"] = (commit - killed_at) if commit else None
    for i in range(2):
        figures[f"unplanned_quiet_instance{i}"] = quiet_window(log, f"instance{i}", killed_at - 1, recovered_at)
        first = first_ack(log, f"instance{i}", commit or killed_at, of="end")
        if commit and first:
            figures[f"unplanned_after_commit_instance{i}"] = first - commit
    time.sleep(3)

    # Planned: a switchover to the synchronous standby.
    leader_index = (new or 1) - 1
    sync = wait_for(lambda: next((m["name"] for m in members(REST_PORTS[leader_index]) if m.get("role") == "sync_standby"), None),
                    60, "a synchronous standby after the failover")
    switched_at = time.monotonic()
    status, raw = rest(REST_PORTS[leader_index], "/switchover", "POST", {"leader": f"node{leader_index + 1}", "candidate": sync})
    check(status == 200, f"Patroni accepted the switchover to {sync} ({status} {raw[:120]!r})")
    wait_for(lambda: (index := leader()) is not None and f"node{index + 1}" == sync, 60, "the switchover's new leader")
    time.sleep(3)
    wait_for(lambda: all(first_ack(log, f"instance{i}", time.monotonic() - 2) for i in range(2)), 60,
             "both instances acknowledge writes after the switchover")
    settled_at = time.monotonic()
    for i in range(2):
        figures[f"switchover_quiet_instance{i}"] = quiet_window(log, f"instance{i}", switched_at, settled_at)
    time.sleep(2)
    stop.set()
    for thread in writers:
        thread.join(timeout=30)

    # The follower catches up with a feed nobody writes to any more: two empty long-polls in a row.
    follower.quiet_pages = 0
    wait_for(lambda: follower.quiet_pages >= 2, 60, "the follower reaches the feed's head")
    follower_stop.set()
    follower.join(timeout=30)
    followed = follower.events

    # The sessions that must move with the primary did: one purge leader, both commit listeners.
    wait_for(lambda: on_primary(PURGE_LEADERS) == "1", 90, "one instance holds the purge lock on the new primary")
    check(on_primary(PURGE_LEADERS) == "1", "one purge leader on the new primary")
    wait_for(lambda: on_primary(LISTENERS) == "2", 30, "both instances listen for commits on the new primary")
    check(on_primary(LISTENERS) == "2", "both instances' commit listeners are on the new primary")

    # What every caller was answered.
    entries = log.select()
    odd = [e for e in entries if not (200 <= e["status"] < 300 or e["status"] == 503)]
    check(not odd, f"every answer was 2xx or 503 ({len(odd)} others: {sorted({(e['kind'], e['status'], e.get('error')) for e in odd})[:5]})")
    refused = [e for e in entries if e["status"] == 503]
    check(all(e["retry_after"] for e in refused), f"every 503 carried Retry-After ({len(refused)} answers)")
    check(all(e["error"] in ("unavailable", "not_ready", "service_unavailable") for e in refused),
          f"every 503 named why: {sorted({e['error'] for e in refused})}")
    writes = [e for e in entries if e["kind"] in ("signup", "change")]
    acked = [e for e in writes if 200 <= e["status"] < 300]
    feed_reads = [e for e in entries if e["kind"] == "feed"]
    figures.update({
        "writes": len(writes), "acknowledged": len(acked), "refused_503": sum(1 for e in writes if e["status"] == 503),
        "feed_reads": len(feed_reads), "feed_reads_503": sum(1 for e in feed_reads if e["status"] == 503),
    })

    # Nothing acknowledged is lost; nothing is seen twice or skipped.
    ids = [event["event_id"] for event in followed]
    check(len(ids) == len(set(ids)), f"the follower saw no event twice ({len(ids) - len(set(ids))} repeats)")
    everything = whole_feed(bases[0], reader)
    check([e["event_id"] for e in everything] == ids,
          f"the follower saw the whole feed in its order ({len(ids)} followed, {len(everything)} in the feed)")
    registered = {e["account_id"] for e in everything if e["type"] == "account.registered"}
    names = {(e["account_id"], (e.get("data") or {}).get("display_name")) for e in everything if e["type"] == "profile.updated"}
    signups = [e for e in writes if e["kind"] == "signup" and e["status"] == 201]
    lost_signups = [e for e in signups if e["account_id"] not in registered]
    lost_changes = [(a["account_id"], n) for w in writers for a in w.accounts for n in a["acked"] if (a["account_id"], n) not in names]
    figures["lost"] = len(lost_signups) + len(lost_changes)
    figures["feed_events"] = len(everything)
    check(not lost_signups, f"every acknowledged sign-up is in the new primary's feed ({len(signups)} acknowledged)")
    check(not lost_changes, f"every acknowledged change is in the feed ({sum(len(a['acked']) for w in writers for a in w.accounts)} acknowledged)")

    # The webhook resumed from its cursor: every event, in the feed's order (a push retried after
    # the failover may come twice: at least once, never a gap).
    def pushed_ids():
        with Receiver.lock:
            return list(dict.fromkeys(event["event_id"] for event in Receiver.pushed))
    wait_for(lambda: len(pushed_ids()) >= len(everything), 60, "the webhook catches up")
    check(pushed_ids() == [e["event_id"] for e in everything],
          f"the webhook pushed every event in the feed's order ({len(pushed_ids())} of {len(everything)},"
          f" {len(Receiver.pushed) - len(pushed_ids())} sent again)")
    figures["webhook_sent_again"] = len(Receiver.pushed) - len(pushed_ids())

    # Sessions and refresh tokens made before the failover still work.
    sessions = [a for w in writers for a in w.accounts]
    me = [call(bases[i % 2], "GET", "/me", token=a["access_token"])[0] for i, a in enumerate(sessions)]
    check(all(s == 200 for s in me), f"every access token is still valid ({me.count(200)} of {len(me)})")
    refreshed = [call(bases[i % 2], "POST", "/auth/token/refresh", {"refresh_token": a["refresh_token"]})[0]
                 for i, a in enumerate(sessions)]
    check(all(s == 200 for s in refreshed), f"every refresh token still refreshes ({refreshed.count(200)} of {len(refreshed)})")

    # Loose bounds only (a slow machine must not fail CI); the figures are what BENCHMARKS.md reads.
    for i in range(2):
        check(figures.get(f"unplanned_quiet_instance{i}", 99) <= 30, f"instance{i} wrote again within 30 s of the kill")
        check(figures.get(f"unplanned_after_commit_instance{i}", 99) <= 5,
              f"instance{i} wrote again within 5 s of the new primary's first commit")
        check(figures.get(f"switchover_quiet_instance{i}", 99) <= 15, f"instance{i} wrote again within 15 s of the switchover")
    print("fault run figures: " + json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in figures.items()}), flush=True)


def main():
    # A CI timeout's SIGTERM stops the services too (the `with` blocks' exits), not only this script.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    receiver = ThreadingHTTPServer(("127.0.0.1", free_port()), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    environment = dict(os.environ)
    environment.update({
        "DATABASE_URL": os.environ["HA_DATABASE_URL"],
        "LEDGER_READ_DATABASE_URL": os.environ["HA_READ_DATABASE_URL"],
        "LEDGER_DELIVERY_WEBHOOK_URL": f"http://127.0.0.1:{receiver.server_address[1]}/deliveries",
        "LEDGER_MASTER_KEY": base64.b64encode(os.urandom(32)).decode(),
        "LEDGER_SCRYPT_LOG_N": "10",
        # Every writer signs up from 127.0.0.1: the per-client limits are not what this run checks.
        "LEDGER_IP_SIGNUP_LIMIT": "100000",
        "LEDGER_IP_LOOKUP_LIMIT": "100000",
        # The webhook receiver is on loopback.
        "LEDGER_WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true",
        "HA_HOOK_URL": f"http://127.0.0.1:{receiver.server_address[1]}/hook",
    })
    log_path = os.environ.get("LEDGER_HA_SERVER_LOG")
    try:
        with ExitStack() as stack:
            bases = [stack.enter_context(serving(environment, log_path)) for _ in range(2)]
            run(bases, environment)
    finally:
        receiver.shutdown()
    finish("fault run", "fault run: nothing acknowledged lost, no event skipped or repeated, no 500")


if __name__ == "__main__":
    main()
