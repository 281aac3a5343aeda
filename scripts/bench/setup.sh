# Shared set-up of the benchmark scripts (sourced): packages, the release binaries, and a
# private cluster with default durability holding a `ledger` database. Sets `ledger` and `bench`
# (the service's and the benchmarks' binaries), DATABASE_URL, PG* and a fresh LEDGER_MASTER_KEY, and
# `ceiling` (the command that measures the same run's ceiling);
# the caller's EXIT trap must call stop_cluster.
source scripts/setup.sh
source scripts/pg-cluster.sh

# The same run's ceiling (../shared/bench/pg-ceiling), run with bash when the shared copy has
# lost its executable bit.
ceiling="$(cd .. && pwd)/shared/bench/pg-ceiling"
[ -x "$ceiling" ] || ceiling="bash $ceiling"

bench_start() {
  swift build -c release --product ledger >&2
  swift build -c release --product ledger-bench >&2
  ledger=.build/release/ledger
  bench=.build/release/ledger-bench
  start_cluster durable 200
  as_postgres "$pg_bin/createdb" -h 127.0.0.1 -p "$PG_CLUSTER_PORT" -U postgres ledger
  export DATABASE_URL="postgresql://postgres@127.0.0.1:$PG_CLUSTER_PORT/ledger"
  export PGHOST=127.0.0.1 PGPORT=$PG_CLUSTER_PORT PGUSER=postgres PGDATABASE=ledger
  export LEDGER_MASTER_KEY=$(head -c 32 /dev/urandom | base64)
  echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; $(date -u +%Y-%m-%dT%H:%MZ); PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}')"
}

# Points DATABASE_URL (the service's and the ceiling's) at the cluster's Unix socket, as a
# same-host deployment would reach it: over loopback TCP both sides run a TCP stack for every
# statement. LEDGER_BENCH_DB_TCP=1 keeps TCP, to compare.
bench_database_socket() {
  [ "${LEDGER_BENCH_DB_TCP:-0}" = 1 ] || export DATABASE_URL="postgresql://postgres@/ledger?host=$PG_CLUSTER_DIR&port=$PG_CLUSTER_PORT"
  echo "service to PostgreSQL: $([ "${LEDGER_BENCH_DB_TCP:-0}" = 1 ] && echo "TCP 127.0.0.1" || echo "Unix socket")"
}

# A scratch directory in $work, removed on exit with the service (when started) and the cluster.
bench_workdir() {
  work=$(mktemp -d "/tmp/ledger-bench-$1.XXXXXX")
  trap bench_cleanup EXIT
}

bench_cleanup() {
  [ -n "${server:-}" ] && kill "$server" 2>/dev/null
  wait 2>/dev/null
  stop_cluster
  rm -rf "$work"
}

# `bench_serve` without --dev: the production configuration (the caller exports a way out, such
# as LEDGER_DELIVERY_WEBHOOK_URL).
bench_serve_production() {
  http_port=${http_port:-$((20000 + RANDOM % 30000))}
  "$ledger" serve --port "$http_port" --host 127.0.0.1 >"$work/serve.log" 2>&1 &
  server=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$http_port/readyz" >/dev/null && break; sleep 0.1; done
}

# Starts `ledger serve` on 127.0.0.1:$http_port (a random port unless set), logging to
# $work/serve.log, and waits until it is ready. Sets $server to its pid.
bench_serve() {
  http_port=${http_port:-$((20000 + RANDOM % 30000))}
  # --dev: messages go to the log sink, as a benchmark needs no delivery webhook.
  "$ledger" serve --dev --port "$http_port" --host 127.0.0.1 >"$work/serve.log" 2>&1 &
  server=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$http_port/readyz" >/dev/null && break; sleep 0.1; done
}
