"""What the Python checks of a running `ledger serve` share (scripts/browser_tests.py,
scripts/consumer_tests.py): their pass/fail lines, a free port, JSON calls, and the service
started on a fresh database and stopped again."""

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        failures.append(what)


def finish(name, success_line):
    """Exits 1 naming how many checks failed, else prints `success_line`."""
    if failures:
        print(f"{name}: {len(failures)} check(s) failed", file=sys.stderr)
        sys.exit(1)
    print(success_line)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(base, method, path, body=None, token=None, headers=None):
    """(status, headers, raw body) of one call; a JSON body when `body` is given."""
    call = urllib.request.Request(base + path, method=method, data=json.dumps(body).encode() if body is not None else None)
    call.add_header("Content-Type", "application/json")
    if token:
        call.add_header("Authorization", "Bearer " + token)
    for name, value in (headers or {}).items():
        call.add_header(name, value)
    try:
        with urllib.request.urlopen(call, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def api(base, method, path, body=None, token=None, reauth=None):
    """(status, parsed JSON body)."""
    status, _, raw = request(base, method, path, body, token, {"X-Reauth-Token": reauth} if reauth else None)
    return status, json.loads(raw) if raw else {}


@contextlib.contextmanager
def serving(environment, log_path, port=None):
    """`ledger serve --migrate` (LEDGER_BINARY, DATABASE_URL from `environment`) on `port` (a
    free loopback one by default) until it is ready; yields its base URL and stops it afterwards."""
    port = port or free_port()
    base = f"http://127.0.0.1:{port}"
    log = open(log_path or os.devnull, "ab")
    server = subprocess.Popen(
        [os.environ["LEDGER_BINARY"], "serve", "--migrate", "--host", "127.0.0.1", "--port", str(port)],
        env=environment, stdout=log, stderr=log)
    try:
        for _ in range(300):
            try:
                if urllib.request.urlopen(base + "/readyz", timeout=1).status == 200:
                    break
            except Exception:
                time.sleep(0.1)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:  # a hung shutdown must not outlive the run
            server.kill()
            server.wait(timeout=20)
        log.close()
