# Shared set-up of the benchmark scripts (sourced): packages, the release binary, and a private
# cluster with default durability holding a `ledger` database. Sets `ledger` (the binary),
# DATABASE_URL, PG* and a fresh LEDGER_MASTER_KEY; the caller's EXIT trap must call stop_cluster.
source scripts/setup.sh
source scripts/pg-cluster.sh

bench_start() {
  swift build -c release --product ledger >&2
  ledger=.build/release/ledger
  start_cluster durable 200
  as_postgres "$pg_bin/createdb" -h 127.0.0.1 -p "$PG_CLUSTER_PORT" -U postgres ledger
  export DATABASE_URL="postgresql://postgres@127.0.0.1:$PG_CLUSTER_PORT/ledger"
  export PGHOST=127.0.0.1 PGPORT=$PG_CLUSTER_PORT PGUSER=postgres PGDATABASE=ledger
  export LEDGER_MASTER_KEY=$(head -c 32 /dev/urandom | base64)
  echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; $(date -u +%Y-%m-%dT%H:%MZ); PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}')"
}
