#!/usr/bin/env bash
# the global feed read from a hot standby beside the primary, and beside the
# same run's COPY ceiling: a private durable cluster, 1,000,000 events loaded on it, a standby
# made by pg_basebackup -R (streaming replication) on a port of its own.
#
#   scripts/bench/standby-feed.sh [EVENTS]
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/setup.sh
events="${1:-1000000}"

standby_dir=$(mktemp -d /tmp/ledger-standby.XXXXXX)
cleanup() {
  as_postgres "$pg_bin/pg_ctl" -D "$standby_dir/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$standby_dir"
  stop_cluster
}
trap cleanup EXIT
bench_start
[ "$(id -u)" -eq 0 ] && chown postgres:postgres "$standby_dir"
# Load on the primary first (and measure it), then copy it to the standby.
"$bench" feed --events "$events"
standby_port=$((PG_CLUSTER_PORT + 1))
as_postgres "$pg_bin/pg_basebackup" -h 127.0.0.1 -p "$PG_CLUSTER_PORT" -U postgres -D "$standby_dir/data" -R -X stream -c fast
{
  echo "port = $standby_port"
  echo "unix_socket_directories = '$standby_dir'"
  echo "hot_standby = on"
} | as_postgres tee -a "$standby_dir/data/postgresql.conf" >/dev/null
as_postgres "$pg_bin/pg_ctl" -D "$standby_dir/data" -l "$standby_dir/server.log" -w -t 60 start >/dev/null
echo "standby on 127.0.0.1:$standby_port"
"$bench" feed --events "$events" --read-database-url "postgresql://postgres@127.0.0.1:$standby_port/ledger"
$ceiling read "$events"
