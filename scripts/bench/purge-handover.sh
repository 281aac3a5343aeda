#!/usr/bin/env bash
# The purge's handover after `kill -9`: two `ledger serve` on one database, both ready
# to run the purge; the one running it (`ledger_purge_leader 1` on /metrics) is killed with
# SIGKILL, and the figure is the time until the other's /metrics says it runs it. Each run
# first waits a random part of the followers' retry period, so the kill falls anywhere in their
# cycle; the killed instance comes back as the next follower. Also times PostgreSQL freeing the
# dead leader's lock (`pg_locks`). Prints every run and the median. Release build, private
# cluster with default durability.
#
#   scripts/bench/purge-handover.sh [RUNS] [LEDGER_PURGE_TAKEOVER_SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/setup.sh
source scripts/pg-cluster.sh
runs="${1:-9}"
takeover="${2:-30}"

work=$(mktemp -d /tmp/ledger-bench-purge-handover.XXXXXX)
pids=(0 0)
cleanup() {
  for pid in "${pids[@]}"; do [ "$pid" -gt 0 ] && kill -9 "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  stop_cluster
  rm -rf "$work"
}
trap cleanup EXIT

swift build -c release --product ledger >&2
ledger=.build/release/ledger
start_cluster durable 200
as_postgres "$pg_bin/createdb" -h 127.0.0.1 -p "$PG_CLUSTER_PORT" -U postgres ledger
export DATABASE_URL="postgresql://postgres@127.0.0.1:$PG_CLUSTER_PORT/ledger"
export PGHOST=127.0.0.1 PGPORT=$PG_CLUSTER_PORT PGUSER=postgres PGDATABASE=ledger
export LEDGER_MASTER_KEY=$(head -c 32 /dev/urandom | base64)
# Nothing listens there: messages wait in the outbox (no message is sent in this run).
export LEDGER_DELIVERY_WEBHOOK_URL=http://127.0.0.1:9/deliveries
export LEDGER_PURGE_TAKEOVER_SECONDS=$takeover LOG_LEVEL=warning
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; $(date -u +%Y-%m-%dT%H:%MZ); PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}')"
"$ledger" migrate >/dev/null

ports=($((20000 + RANDOM % 15000)) $((35000 + RANDOM % 15000)))
# The purge's lock key (PurgeLeadership.lockKey), as pg_locks shows a bigint key: its low 32 bits.
lock_objid=$((0x4C45444745525055 & 0xFFFFFFFF))

serve() { # index
  "$ledger" serve --host 127.0.0.1 --port "${ports[$1]}" >>"$work/serve-$1.log" 2>&1 &
  pids[$1]=$!
  for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:${ports[$1]}/readyz" >/dev/null && return; sleep 0.05; done
  echo "ledger serve $1 did not get ready" >&2
  exit 1
}
# The instance's ledger_purge_leader, or nothing when it does not answer (yet).
leader_gauge() { curl -sf "http://127.0.0.1:${ports[$1]}/metrics" 2>/dev/null | awk '$1 == "ledger_purge_leader" {print $2+0}'; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

serve 0
serve 1
handovers=()
for run in $(seq 1 "$runs"); do
  # Settled: exactly one leads (and the other reports 0).
  leader=""
  for _ in $(seq 1 $((takeover * 40))); do
    a=$(leader_gauge 0) b=$(leader_gauge 1)
    if [ "$a" = 1 ] && [ "$b" = 0 ]; then leader=0; break; fi
    if [ "$a" = 0 ] && [ "$b" = 1 ]; then leader=1; break; fi
    sleep 0.05
  done
  [ -n "$leader" ] || { echo "no single leader emerged" >&2; exit 1; }
  follower=$((1 - leader))
  # Anywhere in the follower's retry cycle (every takeover / 2 seconds).
  sleep "$(awk -v t="$takeover" -v r="$RANDOM" 'BEGIN {printf "%.3f", t / 2 * r / 32768}')"

  kill -9 "${pids[$leader]}"
  killed=$(now_ms)
  wait "${pids[$leader]}" 2>/dev/null || true
  pids[$leader]=0
  freed=""
  until [ -n "$freed" ] && [ "$(leader_gauge "$follower")" = 1 ]; do
    if [ -z "$freed" ]; then
      holders=$(psql -Atqc "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid::bigint = $lock_objid AND granted")
      # 0, or 1 once the follower holds it already.
      [ "$holders" = 0 ] || [ "$(leader_gauge "$follower")" = 1 ] && freed=$(($(now_ms) - killed))
    else
      sleep 0.01
    fi
    [ $(($(now_ms) - killed)) -lt $((takeover * 2000)) ] || { echo "no takeover within twice the bound" >&2; exit 1; }
  done
  handover=$(($(now_ms) - killed))
  handovers+=("$handover")
  echo "bench purge-handover run=$run takeover_s=$takeover lock_freed_ms=$freed handover_ms=$handover"
  serve "$leader"
done
median=$(printf '%s\n' "${handovers[@]}" | sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}')
echo "bench purge-handover runs=$runs takeover_s=$takeover median_handover_ms=$median min_ms=$(printf '%s\n' "${handovers[@]}" | sort -n | head -1) max_ms=$(printf '%s\n' "${handovers[@]}" | sort -n | tail -1)"
