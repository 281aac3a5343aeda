#!/usr/bin/env bash
# Runs the whole test suite against a private, throwaway PostgreSQL cluster:
# installs missing packages, starts the cluster (as the postgres user when run as root),
# runs `swift test`, and stops the cluster whatever happens.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$pg_bin/initdb" ] || { echo "test: no PostgreSQL server binaries found" >&2; exit 1; }

cluster_dir=$(mktemp -d /tmp/ledger-test-cluster.XXXXXX)
port=""
for _ in $(seq 1 50); do
  candidate=$((20000 + RANDOM % 30000))
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then port=$candidate; break; fi
done
[ -n "$port" ] || { echo "test: no free port found" >&2; exit 1; }
as_pg=()
if [ "$(id -u)" -eq 0 ]; then
  chown postgres:postgres "$cluster_dir"
  as_pg=(runuser -u postgres --)
fi
stop_cluster() {
  "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$cluster_dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$cluster_dir"
}
trap stop_cluster EXIT

"${as_pg[@]}" "$pg_bin/initdb" -D "$cluster_dir/data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
cat >>"$cluster_dir/data/postgresql.conf" <<CONF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$cluster_dir'
max_connections = 400
shared_buffers = '256MB'
fsync = off
synchronous_commit = off
full_page_writes = off
CONF
"${as_pg[@]}" "$pg_bin/pg_ctl" -D "$cluster_dir/data" -l "$cluster_dir/server.log" -w -t 60 start >/dev/null
echo "test: PostgreSQL on 127.0.0.1:$port ($cluster_dir)" >&2

export LEDGER_TEST_PG_PORT=$port
swift test "$@"
