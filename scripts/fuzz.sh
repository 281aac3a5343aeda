#!/usr/bin/env bash
# Fuzzes the HTTP API against openapi.yaml with schemathesis: no answer may be a 5xx, and every
# answer (status, content type, headers, body) must be one the document describes.
#
# Installs the pinned schemathesis (scripts/fuzz-requirements.txt) into a venv under .build,
# starts `ledger serve` on a free loopback port against a fresh database — `ledger_fuzz` on the
# cluster of scripts/test.sh when PG_CLUSTER_PORT is set, else a cluster of its own — with an
# API key holding every scope, and runs a bounded, seeded schemathesis run against it.
# scripts/fuzz_hooks.py picks each operation's credentials. Afterwards it runs `ledger projections
# rebuild` on the store the fuzz left, while the service runs. Stops everything it started on exit.
#
#   scripts/fuzz.sh                       # alone: builds the ledger binary first
#   LEDGER_FUZZ_SEED=N scripts/fuzz.sh    # another seed (a failure prints the seed to rerun with)
#   scripts/fuzz.sh --include-path /me    # further arguments go to `schemathesis run`
#
# Settings: LEDGER_FUZZ_SEED (default 20240601), LEDGER_FUZZ_EXAMPLES (cases per operation and
# phase, default 50), LEDGER_FUZZ_TIMEOUT (seconds for the whole schemathesis run, default 240),
# LEDGER_FUZZ_SERVER_LOG (a file to append the service's whole log to; otherwise only its errors
# are shown, when the run fails).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
LEDGER_EXTRA_PACKAGES="${LEDGER_EXTRA_PACKAGES:-} python3 python3-venv" source scripts/setup.sh
source scripts/pg-cluster.sh

seed=${LEDGER_FUZZ_SEED:-20240601}
examples=${LEDGER_FUZZ_EXAMPLES:-50}
time_limit=${LEDGER_FUZZ_TIMEOUT:-240}
venv=.build/fuzz-venv
requirements=scripts/fuzz-requirements.txt
report=$root/.build/fuzz-junit.xml

work=$(mktemp -d /tmp/ledger-fuzz.XXXXXX)
server_log=$work/server.log
server_pid=""
own_cluster=0
database=ledger_fuzz
status=1
cleanup() {
  set +e # whatever fails here, the rest still has to be stopped and removed
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if [ "$status" -ne 0 ] && [ -s "$server_log" ]; then
    crash=$(grep -n -m1 -E 'Fatal error|Program crashed' "$server_log" | cut -d: -f1 || true)
    if [ -n "$crash" ]; then
      echo "fuzz: the service crashed:" >&2
      sed -n "$crash,$((crash + 29))p" "$server_log" >&2
    elif grep -qE '^[^ ]+ (error|critical) ' "$server_log"; then
      echo "fuzz: errors in the service's log (the last 40):" >&2
      grep -E '^[^ ]+ (error|critical) ' "$server_log" | tail -40 >&2
    else
      echo "fuzz: the service's log (last 20 lines):" >&2
      tail -20 "$server_log" >&2
    fi
  fi
  [ -z "${LEDGER_FUZZ_SERVER_LOG:-}" ] || cat "$server_log" >>"$LEDGER_FUZZ_SERVER_LOG" 2>/dev/null || true
  if [ "$own_cluster" -eq 1 ]; then
    stop_cluster
  elif [ -n "${PG_CLUSTER_PORT:-}" ]; then
    "$pg_bin/dropdb" -h 127.0.0.1 -p "$PG_CLUSTER_PORT" -U postgres --if-exists --force "$database" >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { free_local_port; }

# The venv is rebuilt whenever the pinned requirements or the Python change.
source scripts/python-venv.sh
python_venv "$venv" "$requirements" fuzz

swift build --product ledger >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
ledger=$(swift build --show-bin-path)/ledger

if [ -n "${PG_CLUSTER_PORT:-}" ]; then
  "$pg_bin/dropdb" -h 127.0.0.1 -p "$PG_CLUSTER_PORT" -U postgres --if-exists --force "$database"
else
  start_cluster fast 100
  own_cluster=1
fi
"$pg_bin/createdb" -h 127.0.0.1 -p "$PG_CLUSTER_PORT" -U postgres "$database"

export DATABASE_URL="postgresql://postgres@127.0.0.1:$PG_CLUSTER_PORT/$database?connect_timeout=5"
LEDGER_MASTER_KEY=$(head -c 32 /dev/urandom | base64)
export LEDGER_MASTER_KEY
# Cheap password hashing, and per-address limits high enough that the fuzzer gets past them.
export LEDGER_SCRYPT_LOG_N=10 LEDGER_IP_OTP_LIMIT=100000 LEDGER_IP_LOGIN_FAILURE_LIMIT=100000
export LEDGER_IP_SIGNUP_LIMIT=100000 LEDGER_IP_LOOKUP_LIMIT=100000
# The seeded subscription points at a closed loopback port (nothing is ever delivered).
export LEDGER_WEBHOOK_ALLOW_PRIVATE_NETWORKS=true
# No network: the providers' keys come from an empty local JWKS (every ID token is refused).
echo '{"keys":[]}' >"$work/jwks.json"
export LEDGER_APPLE_JWKS=$work/jwks.json LEDGER_GOOGLE_JWKS=$work/jwks.json
export LEDGER_APPLE_CLIENT_IDS=ledger-fuzz LEDGER_GOOGLE_CLIENT_IDS=ledger-fuzz
# The support console on, so its pages are fuzzed too (every change from here is another origin's).
export LEDGER_CONSOLE_ORIGIN=https://support.ledger.test
export LOG_LEVEL=${LOG_LEVEL:-info}

"$ledger" migrate >>"$server_log" 2>&1
api_key=$("$ledger" keys create --name fuzz --scope events:read,audit:read,holds:write,sessions:introspect,admin 2>>"$server_log" | tail -1)

# Started on a free port; should another process take that port first, again on another.
for attempt in 1 2 3; do
  port=$(free_port)
  # --dev: messages go to the log sink (no delivery webhook here); migrations are applied above.
  "$ledger" serve --dev --host 127.0.0.1 --port "$port" >>"$server_log" 2>&1 &
  server_pid=$!
  url="http://127.0.0.1:$port"
  for _ in $(seq 1 120); do
    curl -fsS -o /dev/null "$url/readyz" 2>/dev/null && break 2
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "$server_pid" 2>/dev/null; then echo "fuzz: the service did not become ready" >&2; exit 1; fi
  grep -q "Address already in use" "$server_log" && [ "$attempt" -lt 3 ] && continue
  echo "fuzz: the service exited before it was ready" >&2
  exit 1
done
curl -fsS -o /dev/null "$url/readyz" || { echo "fuzz: the service did not become ready" >&2; exit 1; }

# Real identifiers, which the fuzzer mixes into the ids it makes up for the audit, hold and
# subscription paths (random ones only ever find nothing): an account and a subscription.
json_field() { "$venv/bin/python" -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
account_id=$(curl -fsS -X POST "$url/auth/email/signup" -H 'Content-Type: application/json' \
  -d "{\"email\":\"schemathesis-0@example.org\",\"password\":\"$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')\"}" |
  json_field account_id)
subscription_id=$(curl -fsS -X POST "$url/subscriptions" -H 'Content-Type: application/json' -H "Authorization: Bearer $api_key" \
  -d "{\"url\":\"http://127.0.0.1:9/fuzz\",\"secret\":\"whsec_$(head -c 32 /dev/urandom | base64)\"}" |
  json_field id)
echo "\"$account_id\"" >"$work/accounts.dict"
echo "\"$subscription_id\"" >"$work/subscriptions.dict"
# Strings that parsers of lists, numbers and paths trip over, mixed into every generated string
# parameter (query, header, path): separators alone, signs, overflows, special numbers.
printf '"%s"\n' ';' ',' ';;' ',;' ';q=0' 'q=' '*' '=' '&' '%' '%%' '\\' '/' '..' '-' '_' ' ' '' \
  '0' '-0' '-1' '1e309' '-1e309' 'NaN' 'Infinity' '9223372036854775808' '-9223372036854775809' \
  'null' 'true' '[]' '{}' >"$work/edge.dict"

cat >"$work/schemathesis.toml" <<'TOML'
# No state carried over between runs (schemathesis would replay earlier failures first).
[cache]
enabled = false

[generation]
database = "none"

[dictionaries]
accounts = { from-file = "accounts.dict" }
subscriptions = { from-file = "subscriptions.dict" }
edge = { from-file = "edge.dict" }

[generation.dictionaries]
string = { dictionary = "edge", probability = 0.1 }

# Every warning but the one saying that edge strings break formats (uuids, dates, emails): that
# is what they are for.
[warnings]
display = ["missing_auth", "missing_test_data", "base_url_mismatch", "validation_mismatch", "missing_deserializer",
  "unused_openapi_auth", "unsupported_regex", "method_not_allowed", "constants_extraction", "unmatched_filter",
  "unresolvable_reference", "low_valid_rate", "rate_limited", "timeout_units"]

[[operations]]
include-path-regex = '^/accounts/\{id\}/'
parameters = { "path.id" = { dictionary = "accounts", probability = 0.7 } }

[[operations]]
include-path-regex = '^/subscriptions/\{id\}'
parameters = { "path.id" = { dictionary = "subscriptions", probability = 0.7 } }
TOML

# Schemathesis masks credentials in the requests it prints, not in the responses: a failure's
# report may show a sign-up's tokens. Those accounts live only as long as this run, but its
# report is redacted like the test secrets scripts/test.sh scans for (the service's own log is
# left as it is, for that scan to read).
redact='s/\b(l[arkg]_)[A-Za-z0-9_-]{43}\b/\1[redacted]/g; s/[A-Za-z0-9._%+-]+@example\.com\b/[redacted]@example.com/g'

# GET /events/stream is left out: its 200 is an endless stream (whose messages openapi.yaml,
# being OpenAPI 3.1, describes as text); its parameters are GET /events' and fuzzed there.
echo "fuzz: schemathesis against $url, seed $seed, $examples examples per operation" >&2
started=$SECONDS
rm -f "$report"
set +e
(
  cd "$work" &&
  LEDGER_FUZZ_URL=$url LEDGER_FUZZ_API_KEY=$api_key SCHEMATHESIS_HOOKS=$root/scripts/fuzz_hooks.py \
    timeout --kill-after=10 "$time_limit" \
    "$root/$venv/bin/schemathesis" --config-file "$work/schemathesis.toml" run "$root/openapi.yaml" \
      --url "$url" \
      --seed "$seed" \
      --max-examples "$examples" \
      --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
      --exclude-path /events/stream \
      --request-timeout 20 \
      --workers 1 \
      --no-color \
      --report junit --report-junit-path "$report" \
      "$@" 2>&1
) | sed -u -E "$redact"
run_status=${PIPESTATUS[0]}
set -e

# Exit 0 only counts when the report shows operations were tested: a schema that failed to
# load or a filter that matched nothing must not pass silently.
if ! kill -0 "$server_pid" 2>/dev/null; then
  echo "fuzz: the service died during the run" >&2
elif [ "$run_status" -eq 124 ] || [ "$run_status" -eq 137 ]; then
  echo "fuzz: schemathesis did not finish within $time_limit s" >&2
elif [ "$run_status" -eq 1 ]; then
  echo "fuzz: schemathesis found failures (above); reproduce with LEDGER_FUZZ_SEED=$seed scripts/fuzz.sh" >&2
elif [ "$run_status" -ne 0 ]; then
  echo "fuzz: schemathesis could not run (exit $run_status; see above)" >&2
elif ! grep -q '<testcase' "$report" 2>/dev/null; then
  echo "fuzz: schemathesis exited 0 but tested no operation" >&2
else
  # Then the store the fuzz left is rebuilt while the service still runs: `ledger projections
  # rebuild` end to end (its configuration, the retention cut-offs it prints) on whatever
  # accounts and code requests the fuzzer made.
  rebuilt=$("$ledger" projections rebuild 2>>"$server_log") || rebuilt=""
  if ! grep -q '^left out, as the retention sweep deletes them' <<<"$rebuilt"; then
    echo "fuzz: ledger projections rebuild of the fuzzed store failed (the service's log has why)" >&2
  elif ! curl -fsS -o /dev/null "$url/readyz"; then
    echo "fuzz: the service was not ready after the rebuild" >&2
  else
    status=0
    echo "fuzz: passed in $SECONDS s (schemathesis $((SECONDS - started)) s); then $(grep '^rebuilt' <<<"$rebuilt")" >&2
  fi
fi
exit "$status"
