#!/usr/bin/env bash
# An upper bound for the OTP benchmark on this machine, whatever the service's design:
# PostgreSQL alone doing the writes of OTP request + verify pairs, group-committed B pairs to a
# transaction (as if the service batched requests across connections), with pgbench; beside
# the same run's single-row INSERT ceiling at 32 clients, and with wrk installed, the HTTP-only
# rate of the service (`GET /healthz`).
#
#   [LEDGER_EXTRA_PACKAGES=wrk] scripts/bench/otp-bound.sh [SECONDS]
#
# A pair's writes, kept to the minimum the product needs and in the real schema:
#   request: 1 event (`ledger_append_batch`, new streams), the `otp_requests` row, the outbox row;
#   delivery: the dispatcher's claim and mark-delivered, one each for the batch;
#   verify: 2 events (the request stream, an existing account stream), the `sessions` row,
#           the `accounts` version, the `otp_requests` row closed.
# Left out, so the bound is generous: every read (limits, owner lookups, stream reads, subject
# keys), encryption, locks, and all of the service's and the load generator's own CPU.
# pairs/s ≤ 1 / (1/pg_pairs + 3/http_rps): a pair is at least three HTTP exchanges (request,
# SMS webhook, verify) and the writes above, on the same cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/setup.sh
seconds="${1:-15}"
bench_workdir otp-bound
bench_start
export LOG_LEVEL=warning
"$ledger" migrate >/dev/null
bench_database_socket
export PGHOST=$PG_CLUSTER_DIR

psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
CREATE TABLE bound_accounts (n int PRIMARY KEY, account_id uuid NOT NULL);
INSERT INTO bound_accounts SELECT n, gen_random_uuid() FROM generate_series(1, 20000) n;
INSERT INTO stream_catalog (stream_id, stream_type, created_at)
SELECT account_id, 'account', now() FROM bound_accounts;
INSERT INTO accounts (account_id, version, created_at) SELECT account_id, 1, now() FROM bound_accounts;
VACUUM ANALYZE;
SQL

# One pgbench transaction = B pairs: the request transaction, the delivery, the verify transaction.
pair_script() {
  cat <<SQL
\\set b $1
\\set k random(1, 20000 - $1)
SELECT array_agg(gen_random_uuid())::text AS reqs FROM generate_series(1, :b::int) \\gset
BEGIN;
SELECT count(*) FROM ledger_append_batch(:reqs::uuid[], array_fill('otp'::text, ARRAY[:b::int]),
    array_fill('no_stream'::text, ARRAY[:b::int]), array_fill(0::bigint, ARRAY[:b::int]), array_fill(NULL::uuid, ARRAY[:b::int]),
    array_fill(1, ARRAY[:b::int]), now(), ARRAY(SELECT gen_random_uuid() FROM generate_series(1, :b::int)),
    array_fill('phone.otp_issued'::text, ARRAY[:b::int]), array_fill(1, ARRAY[:b::int]),
    decode(repeat('78', 200 * :b::int), 'hex'), array_fill(200, ARRAY[:b::int]),
    (SELECT jsonb_agg('[{"a":"b"}]'::jsonb) FROM generate_series(1, :b::int)));
INSERT INTO otp_requests (request_id, account_id, purpose, phone_e164, client_address, created_at, expires_at)
SELECT r, gen_random_uuid(), 'sign_in', '+995555' || lpad((random() * 999999)::int::text, 6, '0'), '10.0.0.1',
       now(), now() + interval '5 minutes'
  FROM unnest(:reqs::uuid[]) r;
INSERT INTO outbox (id, channel, recipient, template, code, locale, created_at, next_attempt_at)
SELECT gen_random_uuid(), 'sms', '+995555000000', 'otp', '123456', 'en', now(), now() FROM generate_series(1, :b::int);
COMMIT;
SELECT count(*) FROM ledger_outbox_claim(now(), now() + interval '60 seconds', :b::int, ARRAY['sms', 'email', 'provider']);
SELECT ledger_outbox_delivered(ARRAY(SELECT id FROM outbox WHERE delivered_at IS NULL AND failed_at IS NULL
                                       AND next_attempt_at > now() LIMIT :b::int), now());
BEGIN;
SELECT count(*) FROM ledger_append_batch(
    (:reqs::uuid[]) || ARRAY(SELECT account_id FROM bound_accounts WHERE n >= :k::int AND n < :k::int + :b::int ORDER BY n),
    array_fill('otp'::text, ARRAY[2 * :b::int]), array_fill('any'::text, ARRAY[2 * :b::int]),
    array_fill(0::bigint, ARRAY[2 * :b::int]), array_fill(NULL::uuid, ARRAY[2 * :b::int]), array_fill(1, ARRAY[2 * :b::int]),
    now(), ARRAY(SELECT gen_random_uuid() FROM generate_series(1, 2 * :b::int)),
    array_fill('phone.otp_verified'::text, ARRAY[2 * :b::int]), array_fill(1, ARRAY[2 * :b::int]),
    decode(repeat('78', 200 * 2 * :b::int), 'hex'), array_fill(200, ARRAY[2 * :b::int]),
    (SELECT jsonb_agg('[{"a":"b"}]'::jsonb) FROM generate_series(1, 2 * :b::int)));
INSERT INTO sessions (session_id, account_id, method, access_token_sha256, refresh_token_sha256, created_at, last_used_at,
                      access_expires_at, refresh_expires_at)
SELECT gen_random_uuid(), account_id, 'phone', sha256(gen_random_uuid()::text::bytea), sha256(gen_random_uuid()::text::bytea),
       now(), now(), now() + interval '1 hour', now() + interval '30 days'
  FROM bound_accounts WHERE n >= :k::int AND n < :k::int + :b::int;
UPDATE accounts a SET version = a.version + 1 FROM bound_accounts b
 WHERE b.n >= :k::int AND b.n < :k::int + :b::int AND a.account_id = b.account_id;
UPDATE otp_requests SET closed_at = now() WHERE request_id = ANY(:reqs::uuid[]);
COMMIT;
SQL
}

../shared/bench/pg-ceiling write 32 "$seconds"
best=0
for variant in ${VARIANTS:-16:2 16:4 32:2}; do
  batch=${variant%:*} clients=${variant#*:}
  pair_script "$batch" >"$work/pair.sql"
  tps=$(pgbench -n -M prepared -c "$clients" -j "$(( clients < 2 ? 1 : 2 ))" -T "$seconds" -f "$work/pair.sql" 2>&1 |
        sed -nE 's/^tps = ([0-9.]+).*/\1/p')
  pairs=$(awk -v t="$tps" -v b="$batch" 'BEGIN{printf "%d", t * b}')
  echo "PostgreSQL writes only: $batch pairs a transaction, $clients clients: $pairs pairs/s"
  [ "$pairs" -gt "$best" ] && best=$pairs
done
../shared/bench/pg-ceiling write 32 "$seconds"
if command -v wrk >/dev/null; then
  bench_serve
  rps=$(wrk -t2 -c32 -d"${seconds}s" "http://127.0.0.1:$http_port/healthz" | awk '/Requests\/sec/{print $2}')
  echo "http floor: GET /healthz at 32 connections: $rps requests/s"
  echo "bound: 1 / (1/$best + 3/$rps) = $(awk -v p="$best" -v r="$rps" 'BEGIN{printf "%d", 1 / (1/p + 3/r)}') pairs/s"
fi
