"""Schemathesis hooks for scripts/fuzz.sh (loaded through SCHEMATHESIS_HOOKS).

Authentication follows each operation's `security` in openapi.yaml:
- `apiKey`: the API key fuzz.sh created with every scope (LEDGER_FUZZ_API_KEY);
- `bearer` (also where it is optional, `[{}, {bearer: []}]`): the access token of an account
  signed up here for the purpose. The fuzzer may end that session (`POST /auth/logout`) or
  change the account's password, so a `401` makes schemathesis drop the cached token and ask
  again: a fresh account is signed up (never a re-login, whose password may have changed);
- none: no `Authorization` header.

The accounts use addresses at example.org and a random password, so nothing this run
sends looks like the test secrets that scripts/test.sh scans for; schemathesis masks the
`Authorization` header in what it prints, and fuzz.sh redacts the tokens of responses.

Header values the HTTP client cannot send (leading whitespace, line breaks: a generated
`X-Device-Token` of " "), are left out rather than failing the run as a network error. A finite `wait` of `GET /events` above one second is read as one: an empty long-poll would
otherwise hold each generated case for up to 30 seconds. Values the service must refuse
(negative, not a number, infinite) are sent as generated.
"""

import itertools
from collections.abc import MutableMapping
import json
import math
import os
import secrets
import threading
import urllib.request

import schemathesis

BASE_URL = os.environ["LEDGER_FUZZ_URL"].rstrip("/")
API_KEY = os.environ["LEDGER_FUZZ_API_KEY"]
# Unlike the address (a password similar to it would be refused).
PASSWORD = secrets.token_urlsafe(18)
_accounts = itertools.count(1)
_accounts_lock = threading.Lock()


def _schemes(operation) -> frozenset:
    """The security scheme names an operation accepts (the document has no global `security`)."""
    requirements = operation.definition.raw.get("security") or []
    return frozenset(name for requirement in requirements for name in requirement)


def _sign_up() -> str:
    """Signs up a new account and returns its access token."""
    with _accounts_lock:
        number = next(_accounts)
    body = json.dumps({"email": f"schemathesis-{number}@example.org", "password": PASSWORD}).encode()
    request = urllib.request.Request(
        BASE_URL + "/auth/email/signup", data=body, method="POST", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)["access_token"]


def _cache_key(case, context) -> str:
    schemes = _schemes(context.operation)
    return "apiKey" if "apiKey" in schemes else "bearer" if "bearer" in schemes else "none"


@schemathesis.auth(refresh_interval=600, cache_by_key=_cache_key, retry_on=[401])
class LedgerAuth:
    """An API key or a session token, as the operation's `security` asks."""

    def get(self, case, context):
        kind = _cache_key(case, context)
        if kind == "apiKey":
            return API_KEY
        if kind == "bearer":
            return _sign_up()
        return None

    def set(self, case, data, context):
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {data}"


def _sendable(value) -> bool:
    """Whether the HTTP client can send this header value at all (requests refuses leading
    whitespace and line breaks: a stateful link may carry a response field such as " " there)."""
    return not isinstance(value, str) or (value == value.lstrip() and not any(c in value for c in "\r\n\0"))


@schemathesis.hook
def before_call(context, case, kwargs):
    for headers in (case.headers, kwargs.get("headers")):
        if isinstance(headers, MutableMapping):
            for name in [name for name, value in headers.items() if not _sendable(value)]:
                del headers[name]
    if case.operation.path == "/events" and isinstance(case.query, dict):
        try:
            wait = float(case.query.get("wait"))
        except (TypeError, ValueError):
            return
        if math.isfinite(wait) and wait > 1:
            case.query["wait"] = 1
