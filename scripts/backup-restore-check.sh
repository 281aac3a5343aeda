#!/usr/bin/env bash
# Backups, tested once (docs/backups.md): a base backup and continuous WAL archiving restore the
# ledger to a named point, and the restored feed is exactly the feed at that point.
#
# On a private throwaway PostgreSQL (scripts/pg-cluster.sh, as the postgres user when run as
# root, 127.0.0.1 only) with archive_mode = on and an archive_command that copies each WAL
# segment into the run's temporary directory:
#   1. `ledger serve` on it, an `events:read` API key, a few sign-ups;
#   2. a base backup with pg_basebackup (-X none: its WAL must come from the archive) while the
#      service runs;
#   3. more sign-ups, one account deleted (LEDGER_PURGE_AFTER_SECONDS=0, nothing purged yet), a
#      signed checkpoint, the feed read to its end (its last cursor), `pg_create_restore_point`,
#      then `ledger purge` (it erases the deleted account's data key), more sign-ups and
#      `pg_switch_wal()`; the original is then stopped;
#   4. the base backup restored into a new data directory (recovery.signal, restore_command from
#      the archive, recovery_target_name, recovery_target_action = promote) on another port, and
#      `ledger serve --no-purge` on it: the feed read from the start must have exactly the events
#      up to the recorded cursor (count, ids, last cursor), none of the later sign-ups; `ledger
#      verify` (hash chains) and `ledger verify --checkpoint` must pass; the purged account must
#      be back, readable (what docs/backups.md warns of), and `ledger purge` must erase it again;
#      a new sign-up must be taken.
# Prints `ok`/`FAIL` lines and exits 1 when a check fails. Everything it starts is stopped and
# its temporary directory removed on exit. About 10 seconds here.
#   ./scripts/backup-restore-check.sh          (LEDGER_BINARY: default .build/debug/ledger)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/scripts/pg-cluster.sh"

binary="${LEDGER_BINARY:-$root/.build/debug/ledger}"
[ -x "$binary" ] || { echo "backup check: no ledger binary at $binary (set LEDGER_BINARY, or build it)" >&2; exit 1; }
for tool in pg_basebackup pg_ctl psql createdb; do
  [ -x "$pg_bin/$tool" ] || { echo "backup check: $tool not found in ${pg_bin:-the PostgreSQL bin directory}" >&2; exit 1; }
done
command -v curl >/dev/null && command -v python3 >/dev/null || { echo "backup check: needs curl and python3" >&2; exit 1; }

before_backup=5 before_point=20 after_point=20
password="violet-harbor-91"
started=$SECONDS
failures=0
work="" serve_pid="" restored_data=""

cleanup() {
  local status=$?
  [ -z "$serve_pid" ] || { kill "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null || true; }
  [ -z "$restored_data" ] || as_postgres "$pg_bin/pg_ctl" -D "$restored_data" -m immediate -w stop >/dev/null 2>&1 || true
  stop_cluster
  [ -z "$work" ] || rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
check() { local what="$1"; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }
die() { echo "FAIL $*" >&2; exit 1; }

free_port() { free_local_port; }

work=$(mktemp -d /tmp/ledger-backup-check.XXXXXX)
chmod 755 "$work"
archive="$work/archive" base="$work/base"
mkdir -p "$archive"
[ "$(id -u)" -ne 0 ] || chown postgres:postgres "$work" "$archive"

# --- the original: archiving on ---------------------------------------------------------------
PG_CLUSTER_EXTRA_CONF="wal_level = replica
full_page_writes = on
archive_mode = on
archive_command = 'test ! -f $archive/%f && cp %p $archive/%f'
archive_timeout = 0
max_wal_senders = 4" start_cluster fast 40 || die "the PostgreSQL cluster did not start"
origin_port=$PG_CLUSTER_PORT

sql() { "$pg_bin/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$1" -U postgres -d "${3:-ledger}" -c "$2"; }
"$pg_bin/createdb" -h 127.0.0.1 -p "$origin_port" -U postgres ledger

# The service as a deployment runs it, minus a mail relay: --dev writes messages to its log (and
# .ledger/ under $work) but keeps the configured master key. Fast scrypt, no sign-up limit, a
# deletion due for the purge at once (run here by `ledger purge`, when the script says).
unset LEDGER_READ_DATABASE_URL
export LEDGER_MASTER_KEY
LEDGER_MASTER_KEY=$(head -c 32 /dev/urandom | base64)
export LEDGER_SCHEMA_DIR="$root/schema" LEDGER_SCRYPT_LOG_N=10 LEDGER_IP_SIGNUP_LIMIT=100000 \
  LEDGER_IP_LOOKUP_LIMIT=100000 LEDGER_HTTP_THREADS=1 LEDGER_DB_MAX_CONNECTIONS=4 LOG_LEVEL=info \
  LEDGER_PURGE_AFTER_SECONDS=0

ledger_at() { (cd "$work" && DATABASE_URL="postgresql://postgres@127.0.0.1:$1/ledger" "$binary" "${@:2}"); }

start_serve() { # port-of-database name
  local port
  port=$(free_port) || die "no free port for ledger serve"
  (cd "$work" && DATABASE_URL="postgresql://postgres@127.0.0.1:$1/ledger" \
    exec "$binary" serve --dev --migrate --no-purge --host 127.0.0.1 --port "$port") >>"$work/$2.log" 2>&1 &
  serve_pid=$!
  base_url="http://127.0.0.1:$port"
  for _ in $(seq 1 300); do
    curl -sf -o /dev/null "$base_url/readyz" && return 0
    kill -0 "$serve_pid" 2>/dev/null || break
    sleep 0.1
  done
  tail -20 "$work/$2.log" >&2
  die "ledger serve on the $2 database did not become ready"
}

stop_serve() {
  kill "$serve_pid" 2>/dev/null || true
  wait "$serve_pid" 2>/dev/null || true
  serve_pid=""
}

sign_up() { # email
  local status
  status=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$base_url/auth/email/signup" \
    -H 'Content-Type: application/json' -d "{\"email\":\"$1\",\"password\":\"$password\"}")
  [ "$status" = 201 ] || die "sign-up of $1 answered $status"
}

# The whole feed from the start (or after a cursor), one line per event: cursor, event id,
# account id, type, whether its data is redacted (purged).
read_feed() { # file [after]
  python3 - "$base_url" "$reader" "${2:-}" >"$1" <<'PY'
import json, sys, urllib.request
base, key, cursor = sys.argv[1], sys.argv[2], sys.argv[3] or None
while True:
    call = urllib.request.Request(base + "/events?limit=500" + (f"&after={cursor}" if cursor else ""))
    call.add_header("Authorization", "Bearer " + key)
    with urllib.request.urlopen(call, timeout=30) as response:
        page = json.load(response)
    if not page["events"]:
        break
    for event in page["events"]:
        print(event["cursor"], event["event_id"], event.get("account_id") or "-", event["type"],
              "redacted" if event.get("redacted") else "readable", sep="\t")
    cursor = page["next_cursor"]
PY
}

start_serve "$origin_port" original
reader=$(ledger_at "$origin_port" keys create --name backup-check --scope events:read 2>>"$work/cli.log" | tail -1) || reader=""
[ -n "$reader" ] || die "ledger keys create gave no key"
for i in $(seq 1 "$before_backup"); do sign_up "before-backup-$i@example.com"; done

# --- a base backup while the service runs ---------------------------------------------------------
mkdir -p "$base"; chmod 700 "$base"
[ "$(id -u)" -ne 0 ] || chown postgres:postgres "$base"
as_postgres "$pg_bin/pg_basebackup" -h 127.0.0.1 -p "$origin_port" -U postgres -D "$base" -Fp -X none -c fast \
  >"$work/basebackup.log" 2>&1 || { cat "$work/basebackup.log" >&2; die "pg_basebackup failed"; }
ok "pg_basebackup took a base backup (WAL from the archive only) while the service ran"

for i in $(seq 1 "$before_point"); do sign_up "before-point-$i@example.com"; done

# One account deleted before the point; the purge is due at once but nothing purges yet.
leaving=$(python3 - "$base_url" "$password" <<'PY'
import json, sys, urllib.request
base, password = sys.argv[1], sys.argv[2]
def call(method, path, body=None, token=None, reauth=None):
    request = urllib.request.Request(base + path, method=method, data=json.dumps(body).encode() if body is not None else None)
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    if reauth:
        request.add_header("X-Reauth-Token", reauth)
    with urllib.request.urlopen(request, timeout=30) as response:
        raw = response.read()
        return response.status, json.loads(raw) if raw else {}
_, session = call("POST", "/auth/email/signup", {"email": "before-point-leaving@example.com", "password": password})
_, grant = call("POST", "/auth/reauth/password", {"password": password}, token=session["access_token"])
status, _ = call("DELETE", "/me", token=session["access_token"], reauth=grant["reauth_token"])
print(session["account_id"] if status == 202 else "")
PY
) || true
[ -n "$leaving" ] || die "the deletion of before-point-leaving@example.com did not go through"
key_state() { sql "$1" "SELECT CASE WHEN wrapped_key IS NULL THEN 'erased' ELSE 'present' END FROM subject_keys WHERE subject_id = '$leaving'"; }
ledger_at "$origin_port" checkpoint keygen --private-key "$work/checkpoint.pem" --public-key "$work/checkpoint.pub.pem" \
  >>"$work/cli.log" 2>&1 || die "ledger checkpoint keygen failed"
ledger_at "$origin_port" checkpoint --private-key "$work/checkpoint.pem" --out "$work/checkpoint.json" >>"$work/cli.log" 2>&1 ||
  die "ledger checkpoint failed"

# The feed to its end, then the restore point, then the feed again: equal reads on both sides of
# the point mean nothing was written in between (else try again under a new name).
point=""
for attempt in 1 2 3 4 5; do
  read_feed "$work/feed-before.tsv"
  sql "$origin_port" "SELECT pg_create_restore_point('ledger-check-$attempt')" >/dev/null
  read_feed "$work/feed-after.tsv"
  if cmp -s "$work/feed-before.tsv" "$work/feed-after.tsv" &&
    [ "$(sql "$origin_port" "SELECT count(*) FROM events")" = "$(wc -l <"$work/feed-before.tsv")" ]; then
    point="ledger-check-$attempt"; break
  fi
  sleep 0.5
done
[ -n "$point" ] || die "the feed kept moving around the restore point"
expected_count=$(wc -l <"$work/feed-before.tsv")
expected_cursor=$(tail -1 "$work/feed-before.tsv" | cut -f1)
ok "restore point '$point' at feed cursor $expected_cursor ($expected_count events)"

ledger_at "$origin_port" purge >>"$work/cli.log" 2>&1 || die "ledger purge failed on the original"
check "after the point, ledger purge erased the deleted account's data key on the original" \
  test "$(key_state "$origin_port")" = erased
for i in $(seq 1 "$after_point"); do sign_up "after-point-$i@example.com"; done
read_feed "$work/feed-all.tsv"
comm -13 <(cut -f2 "$work/feed-before.tsv" | sort) <(cut -f2 "$work/feed-all.tsv" | sort) >"$work/feed-later.tsv"
later_count=$(wc -l <"$work/feed-later.tsv")
[ "$later_count" -gt 0 ] || die "the later sign-ups left no events in the feed"
segment=$(sql "$origin_port" "SELECT pg_walfile_name(pg_switch_wal())")
for _ in $(seq 1 300); do [ -f "$archive/$segment" ] && break; sleep 0.1; done
check "pg_switch_wal(): segment $segment is in the archive" test -f "$archive/$segment"

# The original is gone from here on: only the base backup and the archive remain.
stop_serve
stop_cluster
PG_CLUSTER_DIR=""

# --- point-in-time restore ------------------------------------------------------------------------
restored_port=$(free_port) || die "no free port for the restored cluster"
restored_data="$base"
rm -f "$restored_data/postmaster.opts"
{
  echo "# backup-restore-check: the restored copy"
  echo "port = $restored_port"
  echo "unix_socket_directories = '$work'"
  echo "archive_mode = off"
  echo "restore_command = 'cp $archive/%f %p'"
  echo "recovery_target_name = '$point'"
  echo "recovery_target_action = 'promote'"
} >>"$restored_data/postgresql.conf"
touch "$restored_data/recovery.signal"
[ "$(id -u)" -ne 0 ] || chown -R postgres:postgres "$restored_data"
as_postgres "$pg_bin/pg_ctl" -D "$restored_data" -l "$work/restored-postgres.log" -w -t 60 start >/dev/null ||
  { tail -20 "$work/restored-postgres.log" >&2; die "the restored cluster did not start"; }
for _ in $(seq 1 600); do
  [ "$(sql "$restored_port" "SELECT pg_is_in_recovery()" postgres 2>/dev/null)" = f ] && break
  sleep 0.1
done
check "the restored cluster replayed the archive and was promoted" \
  test "$(sql "$restored_port" "SELECT pg_is_in_recovery()" postgres)" = f
check "recovery stopped at restore point '$point'" grep -q "recovery stopping at restore point \"$point\"" "$work/restored-postgres.log"

start_serve "$restored_port" restored
read_feed "$work/feed-restored.tsv"
restored_count=$(wc -l <"$work/feed-restored.tsv")
restored_cursor=$(tail -1 "$work/feed-restored.tsv" | cut -f1)
check "the restored feed has the $expected_count events up to the point (has $restored_count)" \
  test "$restored_count" -eq "$expected_count"
check "the restored feed ends at the recorded cursor $expected_cursor (ends at ${restored_cursor:-nothing})" \
  test "$restored_cursor" = "$expected_cursor"
check "the restored feed has the same events, ids and order" cmp -s "$work/feed-before.tsv" "$work/feed-restored.tsv"
check "none of the $later_count events after the point is in the restored feed" \
  test -z "$(comm -12 "$work/feed-later.tsv" <(cut -f2 "$work/feed-restored.tsv" | sort))"
accounts=$(sql "$restored_port" \
  "SELECT count(*) FILTER (WHERE email LIKE 'before-%'), count(*) FILTER (WHERE email LIKE 'after-point-%') FROM accounts")
check "the restored accounts: $((before_backup + before_point + 1)) from before the point, none after (have ${accounts/|/ and })" \
  test "$accounts" = "$((before_backup + before_point + 1))|0"
verify_output=$(ledger_at "$restored_port" verify 2>>"$work/cli.log") && verified=1 || verified=0
check "ledger verify on the restored database: ${verify_output:-no output}" test "$verified" = 1
checkpoint_output=$(ledger_at "$restored_port" verify --checkpoint "$work/checkpoint.json" \
  --public-key "$work/checkpoint.pub.pem" 2>>"$work/cli.log") && held=1 || held=0
check "ledger verify --checkpoint on the restored database: ${checkpoint_output:-no output}" test "$held" = 1

# The backup predates the purge: the erased account is back, readable, until a purge runs.
readable=$(awk -F'\t' -v id="$leaving" '$3 == id && $5 == "readable"' "$work/feed-restored.tsv" | wc -l)
check "the restore brought the purged account back: its data key is $(key_state "$restored_port"), $readable of its events readable" \
  test "$(key_state "$restored_port")" = present -a "$readable" -gt 0
ledger_at "$restored_port" purge >>"$work/cli.log" 2>&1 || fail "ledger purge failed on the restored database"
read_feed "$work/feed-purged.tsv"
readable=$(awk -F'\t' -v id="$leaving" '$3 == id && $5 == "readable" && $4 != "account.purged"' "$work/feed-purged.tsv" | wc -l)
check "ledger purge on the restored database erased it again: its data key is $(key_state "$restored_port"), $readable events readable" \
  test "$(key_state "$restored_port")" = erased -a "$readable" = 0

sign_up "after-restore@example.com"
read_feed "$work/feed-new.tsv" "$expected_cursor"
check "the restored database takes a sign-up, and the feed continues after the recorded cursor" \
  test "$(cut -f4 "$work/feed-new.tsv" | grep -c '^account.registered$')" = 1
# Transaction ids after the point are handed out again, so a cursor from the lost part of the
# original's feed is past the restored database's new events (docs/backups.md).
lost_cursor=$(tail -1 "$work/feed-all.tsv" | cut -f1)
read_feed "$work/feed-lost-cursor.tsv" "$lost_cursor"
echo "note a consumer still at the original's last cursor $lost_cursor gets $(wc -l <"$work/feed-lost-cursor.tsv") of the" \
  "$(wc -l <"$work/feed-new.tsv") events written since the restore: consumers go back to $expected_cursor or earlier"
stop_serve

elapsed=$((SECONDS - started))
if [ "$failures" -gt 0 ]; then
  echo "backup check: $failures check(s) failed (${elapsed}s)" >&2
  exit 1
fi
echo "backup check: the base backup and the WAL archive restored the ledger to '$point', exactly (${elapsed}s)"
