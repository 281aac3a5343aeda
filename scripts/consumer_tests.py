"""Event consumers with their own libraries: what a backend team uses, not code of ours.

Starts `ledger serve` (the binary and DATABASE_URL from the environment) and checks:
- openapi.yaml generates a client with openapi-python-client without a warning, and that client
  signs up, reads the hub and reads the feed;
- webhook pushes verify with the `standardwebhooks` and `svix` libraries (a tampered body and a
  stranger's secret do not), a retried batch keeps its `webhook-id`, and after a secret rotation
  both secrets verify for the overlap;
- the feed (`Accept: application/cloudevents-batch+json`), the SSE stream
  (`Accept: application/cloudevents+json`) and a `"format": "cloudevents"` subscription's pushes
  parse with the `cloudevents` SDK, and a consumer resuming from `ledgercursor` alone sees every
  event once, in the plain feed's order;
- a purged account's events stay redacted in every form;
- JWT access tokens verify with PyJWT and joserfc against the published key set
  (scripts/token_consumers.py).
"""

import base64
import importlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import standardwebhooks
import svix.webhooks
from cloudevents.core.bindings.http import HTTPMessage, from_http_event
from cloudevents.core.formats.json import JSONFormat
from service_harness import api, check, finish, free_port, request, serving
from token_consumers import check_tokens

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PASSWORD = "violet-harbor-91"


class Receiver(BaseHTTPRequestHandler):
    """A webhook receiver: keeps every push (headers and raw body); fails while told to."""

    pushes = []
    attempts = []
    failing = 0
    lock = threading.Lock()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        headers = {name.lower(): value for name, value in self.headers.items()}
        with Receiver.lock:
            Receiver.attempts.append((self.path, headers))
            if self.path == "/deliveries":
                status = 204
            elif Receiver.failing > 0:
                Receiver.failing -= 1
                status = 503
            else:
                Receiver.pushes.append((self.path, headers, body))
                status = 204
        self.send_response(status)
        self.end_headers()

    def log_message(self, *args):
        pass


def pushes_to(path, count, timeout=30):
    """The first `count` pushes to `path`, waiting for the dispatcher."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        with Receiver.lock:
            found = [push for push in Receiver.pushes if push[0] == path]
        if len(found) >= count:
            return found
        time.sleep(0.1)
    raise AssertionError(f"{count} pushes to {path} did not arrive ({len(found)} did)")


def key(environment, name, scope):
    """A new API key, as an operator makes one."""
    output = subprocess.run(
        [os.environ["LEDGER_BINARY"], "keys", "create", "--name", name, "--scope", scope],
        env=environment, capture_output=True, text=True, check=True).stdout
    return output.strip().splitlines()[-1]


def generated_client(workdir):
    """openapi-python-client's client of openapi.yaml, imported; any warning fails the check."""
    config = os.path.join(workdir, "generator.yml")
    with open(config, "w") as out:
        # No formatter runs after generation; GET /openapi.yaml's 200 is read as text (its `text/plain` form).
        out.write("post_hooks: []\n")
    result = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "openapi-python-client"), "generate", "--path",
         os.path.join(ROOT, "openapi.yaml"), "--meta", "none", "--output-path", os.path.join(workdir, "ledger_client"),
         "--config", config],
        capture_output=True, text=True)
    output = result.stdout + result.stderr
    check(result.returncode == 0 and "warning" not in output.lower(), "openapi-python-client generates the client without a warning")
    if "warning" in output.lower():
        print(output, file=sys.stderr)
    sys.path.insert(0, workdir)
    return importlib.import_module("ledger_client")


def drive_generated_client(base, reader):
    workdir = tempfile.mkdtemp(prefix="ledger-client-")
    client_package = generated_client(workdir)
    sign_up = importlib.import_module("ledger_client.api.default.email_sign_up")
    auth_methods = importlib.import_module("ledger_client.api.default.auth_methods")
    read_events = importlib.import_module("ledger_client.api.default.read_events")
    body_model = importlib.import_module("ledger_client.models.email_sign_up_body").EmailSignUpBody
    anonymous = client_package.Client(base_url=base)
    session = sign_up.sync(client=anonymous, body=body_model(email="generated@example.com", password=PASSWORD))
    check(session is not None and bool(getattr(session, "access_token", None)), "the generated client signs up")
    signed_in = client_package.AuthenticatedClient(base_url=base, token=session.access_token)
    hub = auth_methods.sync(client=signed_in)
    check(hub is not None and hub.email == "generated@example.com", "the generated client reads the hub")
    backend = client_package.AuthenticatedClient(base_url=base, token=reader)
    page = read_events.sync(client=backend, limit=1000)
    check(page is not None and any(event.type_ == "account.registered" for event in page.events),
          "the generated client reads the feed")


def verify_standard(push, secret):
    """(standardwebhooks verifies, svix verifies) for a push under `secret`."""
    _, headers, body = push
    results = []
    for verifier in (standardwebhooks.Webhook(secret), svix.webhooks.Webhook(secret)):
        try:
            verifier.verify(body, headers)
            results.append(True)
        except Exception:
            results.append(False)
    return results


def plain_feed(base, reader):
    """Every event of the plain feed, in order."""
    events, cursor = [], None
    while True:
        _, page = api(base, "GET", "/events?limit=500" + (f"&after={cursor}" if cursor else ""), token=reader)
        if not page["events"]:
            return events
        events += page["events"]
        cursor = page["next_cursor"]


def cloud_events_feed(base, reader, after=None, limit=3):
    """Every event of the CloudEvents feed, resuming from each page's last `ledgercursor` alone."""
    events, cursor = [], after
    while True:
        status, headers, raw = request(
            base, "GET", f"/events?limit={limit}" + (f"&after={cursor}" if cursor else ""), token=reader,
            headers={"Accept": "application/cloudevents-batch+json"})
        if status != 200 or headers.get("Content-Type") != "application/cloudevents-batch+json":
            check(False, f"the CloudEvents feed answers a batch ({status} {headers.get('Content-Type')})")
            return events
        batch = [JSONFormat().read(None, json.dumps(element)) for element in json.loads(raw)]
        if not batch:
            return events
        events += batch
        cursor = batch[-1].get_extension("ledgercursor")


def sse_cloud_events(base, reader, count):
    """The first `count` SSE messages with Accept: application/cloudevents+json, parsed by the SDK."""
    call = urllib.request.Request(base + "/events/stream")
    call.add_header("Authorization", "Bearer " + reader)
    call.add_header("Accept", "text/event-stream, application/cloudevents+json")
    events = []
    with urllib.request.urlopen(call, timeout=30) as response:
        data = []
        for line in response:
            line = line.decode().rstrip("\n")
            if line.startswith("data: "):
                data.append(line[6:])
            elif line == "" and data:
                message = HTTPMessage(headers={"content-type": "application/cloudevents+json"}, body="\n".join(data).encode())
                events.append(from_http_event(message))
                data = []
                if len(events) >= count:
                    break
    return events


def run(base, environment):
    reader = key(environment, "consumer", "events:read")
    admin = key(environment, "ops", "admin")
    auditor = key(environment, "auditor", "audit:read")
    drive_generated_client(base, reader)

    # Subscriptions: one with a secret made for it (plain pushes), one in the CloudEvents format.
    hook = f"http://127.0.0.1:{environment['RECEIVER_PORT']}"
    status, plain = api(base, "POST", "/subscriptions", {"url": hook + "/plain"}, admin)
    check(status == 201 and plain.get("secret", "").startswith("whsec_"), "a subscription without a secret gets a whsec_ one, once")
    status, read_back = api(base, "GET", f"/subscriptions/{plain['id']}", token=admin)
    check(status == 200 and "secret" not in read_back, "the secret is not shown again")
    status, cloud = api(base, "POST", "/subscriptions", {"url": hook + "/cloud", "format": "cloudevents"}, admin)
    check(status == 201 and cloud.get("format") == "cloudevents", "a CloudEvents subscription")
    status, refused = api(base, "POST", "/subscriptions", {"url": hook + "/x", "secret": "a-plain-secret-of-old"}, admin)
    check(status == 422, "a secret not in the whsec_ form is refused")

    # A failing receiver first: the retried batch keeps its webhook-id.
    with Receiver.lock:
        Receiver.failing = 1
    for index in range(3):
        status, _ = api(base, "POST", "/auth/email/signup", {"email": f"consumer{index}@example.com", "password": PASSWORD})
        check(status == 201, f"sign-up {index}")
    first = pushes_to("/plain", 1)[0]
    with Receiver.lock:
        tries = [headers.get("webhook-id") for path, headers in Receiver.attempts if path == "/plain"]
    check(len(tries) >= 2 and tries[0] == tries[1], "a retried batch carries the same webhook-id")
    check(verify_standard(first, plain["secret"]) == [True, True], "standardwebhooks and svix verify a push")
    tampered = (first[0], first[1], first[2] + b" ")
    check(verify_standard(tampered, plain["secret"]) == [False, False], "a tampered body fails both")
    stranger = "whsec_" + base64.b64encode(os.urandom(32)).decode()
    check(verify_standard(first, stranger) == [False, False], "another secret fails both")
    ids = [push[1]["webhook-id"] for push in pushes_to("/plain", 1)]
    check(len(set(ids)) == len(ids), "each batch its own webhook-id")

    # Rotation: the next pushes verify under the old and the new secret alike.
    status, rotated = api(base, "POST", f"/subscriptions/{plain['id']}/rotate-secret", token=admin)
    check(status == 200 and rotated["secret"].startswith("whsec_") and rotated["secret"] != plain["secret"], "rotate-secret")
    before = len(pushes_to("/plain", 1))
    api(base, "POST", "/auth/email/signup", {"email": "rotated@example.com", "password": PASSWORD})
    after_rotation = pushes_to("/plain", before + 1)[-1]
    check(verify_standard(after_rotation, rotated["secret"]) == [True, True], "after rotation the new secret verifies")
    check(verify_standard(after_rotation, plain["secret"]) == [True, True], "and the old one, for the overlap")

    # CloudEvents: the subscription's pushes, the feed, the stream.
    plain_events = plain_feed(base, reader)
    cloud_pushes = pushes_to("/cloud", 1)
    parsed = []
    for _, headers, body in cloud_pushes:
        check(headers.get("content-type") == "application/cloudevents-batch+json", "a CloudEvents push is a batch")
        parsed += [JSONFormat().read(None, json.dumps(element)) for element in json.loads(body)]
    check(bool(parsed) and all(event.get_type().startswith("fit321.ledger.") for event in parsed), "the SDK parses the pushes")
    resumed = cloud_events_feed(base, reader)
    check([event.get_id() for event in resumed] == [event["event_id"] for event in plain_events],
          "resuming from ledgercursor alone: every event once, in the feed's order")
    middle = resumed[len(resumed) // 2]
    rest = cloud_events_feed(base, reader, after=middle.get_extension("ledgercursor"), limit=100)
    check([event.get_id() for event in rest] == [event.get_id() for event in resumed[len(resumed) // 2 + 1:]],
          "a consumer that stopped mid-way resumes right after its last CloudEvent")
    first_cloud = resumed[0]
    check(first_cloud.get_source() == "urn:321fit:account-ledger" and first_cloud.get_subject() == plain_events[0]["account_id"]
          and first_cloud.get_extension("ledgerversion") == plain_events[0]["version"], "the mapping: source, subject, version")
    streamed = sse_cloud_events(base, reader, 4)
    check([event.get_id() for event in streamed] == [event["event_id"] for event in plain_events[:4]],
          "the SDK parses SSE messages in the feed's order")
    status, headers, raw = request(base, "GET", "/events?limit=2", token=reader, headers={"Accept": "text/csv"})
    check(status == 200 and "events" in json.loads(raw), "an unknown Accept keeps the plain form")

    # Redacted stays redacted in every form: an account deleted and purged (the service runs the
    # purge at once here: LEDGER_PURGE_AFTER_SECONDS=0) leaves its events with data null.
    status, session = api(base, "POST", "/auth/email/signup", {"email": "leaving@example.com", "password": PASSWORD})
    access = session["access_token"]
    _, me = api(base, "GET", "/me", token=access)
    _, grant = api(base, "POST", "/auth/reauth/password", {"password": PASSWORD}, token=access)
    call = urllib.request.Request(base + "/me", method="DELETE")
    call.add_header("Authorization", "Bearer " + access)
    call.add_header("X-Reauth-Token", grant["reauth_token"])
    with urllib.request.urlopen(call, timeout=30) as response:
        check(response.status == 202, "the account is deleted")
    victim = me["account_id"]

    def sealed(events, type_of):
        """The account's events but `account.purged` (stored unsealed: it holds nothing personal)."""
        return [event for event in events if type_of(event) != "account.purged"]

    deadline = time.time() + 60
    history = {}
    while time.time() < deadline:
        _, history = api(base, "GET", f"/accounts/{victim}/events", token=auditor)
        if any(event["type"] == "account.purged" for event in history.get("events", [])):
            break
        time.sleep(0.5)
    shredded = sealed(history.get("events", []), lambda event: event["type"])
    check(bool(shredded) and all(event["redacted"] and event["data"] is None for event in shredded), "the purge shredded the account")
    after = [event for event in cloud_events_feed(base, reader, limit=500) if event.get_subject() == victim]
    mine = sealed(after, lambda event: event.get_type().removeprefix("fit321.ledger."))
    check(bool(mine) and all(event.get_data() is None for event in mine), "purged: data null in the CloudEvents feed")
    plain_after = sealed([event for event in plain_feed(base, reader) if event["account_id"] == victim], lambda event: event["type"])
    check(bool(plain_after) and all(event["data"] is None and event["redacted"] for event in plain_after), "and in the plain feed")
    everything = plain_feed(base, reader)
    streamed = [event for event in sse_cloud_events(base, reader, len(everything)) if event.get_subject() == victim]
    streamed = sealed(streamed, lambda event: event.get_type().removeprefix("fit321.ledger."))
    check(bool(streamed) and all(event.get_data() is None for event in streamed), "and in the CloudEvents stream")


def main():
    receiver_port = free_port()
    receiver = ThreadingHTTPServer(("127.0.0.1", receiver_port), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    environment = dict(os.environ)
    environment.update(
        {
            "LEDGER_DELIVERY_WEBHOOK_URL": f"http://127.0.0.1:{receiver_port}/deliveries",
            "LEDGER_MASTER_KEY": base64.b64encode(os.urandom(32)).decode(),
            "LEDGER_SCRYPT_LOG_N": "10",
            "LEDGER_WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true",
            "LEDGER_PURGE_AFTER_SECONDS": "0",
            "LEDGER_PURGE_INTERVAL_SECONDS": "1",
            "RECEIVER_PORT": str(receiver_port),
        }
    )
    try:
        with serving(environment, os.environ.get("LEDGER_CONSUMER_SERVER_LOG")) as base:
            run(base, environment)
        check_tokens(environment, os.environ.get("LEDGER_CONSUMER_SERVER_LOG"), key(environment, "backend", "events:read"))
    finally:
        receiver.shutdown()
    finish("consumers", "consumers: every check passed")


if __name__ == "__main__":
    main()
