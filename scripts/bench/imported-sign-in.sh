#!/usr/bin/env bash
# What the first sign-in of an imported account costs: ROUNDS accounts imported with a bcrypt
# hash at cost 10 (PyPI's bcrypt), each signed in twice over HTTP to `ledger serve` (the
# production configuration, LEDGER_SCRYPT_LOG_N as set, 17 by default): the first checks bcrypt
# and replaces the hash with scrypt (`password.rehashed`), the second is the native path. Beside
# them, in the same run: a bcrypt check and a scrypt hash alone (Python's libraries), and
# /healthz, the floor of any request.
#
#   scripts/bench/imported-sign-in.sh [ROUNDS]
set -euo pipefail
rounds="${1:-20}"
cd "$(dirname "$0")/../.."
source scripts/bench/setup.sh
source scripts/python-venv.sh
bench_workdir signin
bench_start
bench_database_socket
"$ledger" migrate >/dev/null
python_venv .build/hash-venv scripts/foreign-hash-requirements.txt bench
.build/hash-venv/bin/python scripts/bench/import_file.py "$rounds" "$work/users.jsonl"
"$ledger" import "$work/users.jsonl" --format jsonl >/dev/null
LEDGER_DELIVERY_WEBHOOK_URL=http://127.0.0.1:9/unused bench_serve_production
sign_in() {
  curl -s -o /dev/null -w '%{http_code} %{time_total}\n' -X POST "http://127.0.0.1:$http_port/auth/email/login" \
    -H 'Content-Type: application/json' -d "{\"email\": \"user$1@bench.example\", \"password\": \"bench-password-$(($1 % 64))\"}"
}
median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2)}'; }
for i in $(seq 0 $((rounds - 1))); do sign_in "$i"; done >"$work/first"
for i in $(seq 0 $((rounds - 1))); do sign_in "$i"; done >"$work/second"
for _ in $(seq 1 "$rounds"); do curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$http_port/healthz"; done >"$work/health"
grep -vc '^200 ' "$work/first" "$work/second" | grep -v ':0$' && { echo "a sign-in failed" >&2; exit 1; }
rehashed=$(psql -X -qtA -c "SELECT count(*) FROM events WHERE event_type = 'password.rehashed'")
.build/hash-venv/bin/python - "$rounds" <<'PY'
import hashlib, statistics, sys, time, bcrypt
rounds = int(sys.argv[1])
hashed = bcrypt.hashpw(b"bench-password-0", bcrypt.gensalt(rounds=10))
def timed(f):
    samples = []
    for _ in range(rounds):
        start = time.perf_counter(); f(); samples.append(time.perf_counter() - start)
    return statistics.median(samples)
print("alone bcrypt_cost10_check_ms=%.1f scrypt_ln17_hash_ms=%.1f" % (
    1000 * timed(lambda: bcrypt.checkpw(b"bench-password-0", hashed)),
    1000 * timed(lambda: hashlib.scrypt(b"bench-password-0", salt=b"0123456789abcdef", n=1 << 17, r=8, p=1, maxmem=256 << 20, dklen=32))))
PY
echo "sign-in rounds=$rounds first_ms=$(cut -d' ' -f2 "$work/first" | median | awk '{printf "%.1f", $1*1000}') second_ms=$(cut -d' ' -f2 "$work/second" | median | awk '{printf "%.1f", $1*1000}') healthz_ms=$(median <"$work/health" | awk '{printf "%.2f", $1*1000}') rehashed=$rehashed"
