# Sourced by the scripts: a private PostgreSQL cluster on a free port, as the postgres user
# when run as root (initdb refuses root). Sets PG_CLUSTER_DIR and PG_CLUSTER_PORT.
#   start_cluster durable|fast [max_connections]
#   stop_cluster
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)

# A port nothing listens on, below the kernel's range of ephemeral ports: a port in that range
# can be held by an outgoing connection (or its TIME_WAIT), which a connect test does not see
# but which makes a server's bind fail.
free_local_port() {
  local candidate low=32768 high
  read -r low high </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
  [ "$low" -gt 12000 ] || low=32768
  for _ in $(seq 1 50); do
    candidate=$((10000 + RANDOM % (low - 10000)))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then echo "$candidate"; return 0; fi
  done
  echo "no free port found" >&2
  return 1
}

as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start_cluster() {
  local mode="$1" connections="${2:-300}"
  [ -x "$pg_bin/initdb" ] || { echo "no PostgreSQL server binaries found" >&2; return 1; }
  PG_CLUSTER_DIR=$(mktemp -d /tmp/ledger-cluster.XXXXXX)
  [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$PG_CLUSTER_DIR"
  as_postgres "$pg_bin/initdb" -D "$PG_CLUSTER_DIR/data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  {
    echo "listen_addresses = '127.0.0.1'"
    echo "unix_socket_directories = '$PG_CLUSTER_DIR'"
    echo "max_connections = $connections"
    if [ "$mode" = durable ]; then
      echo "shared_buffers = '512MB'"
    else
      echo "shared_buffers = '256MB'"
      echo "fsync = off"
      echo "synchronous_commit = off"
      echo "full_page_writes = off"
    fi
    # Extra settings for one run (diagnostics: PG_CLUSTER_EXTRA_CONF="log_min_duration_statement = 0").
    [ -z "${PG_CLUSTER_EXTRA_CONF:-}" ] || echo "$PG_CLUSTER_EXTRA_CONF"
  } >>"$PG_CLUSTER_DIR/data/postgresql.conf"
  # A port that was free when looked at may be taken before the server binds it (another
  # cluster of the run starting or stopping): then again, on another port.
  local attempt
  for attempt in 1 2 3; do
    PG_CLUSTER_PORT=$(free_local_port) || return 1
    if as_postgres "$pg_bin/pg_ctl" -D "$PG_CLUSTER_DIR/data" -l "$PG_CLUSTER_DIR/server.log" -o "-p $PG_CLUSTER_PORT" -w -t 60 start >/dev/null; then
      export PG_CLUSTER_DIR PG_CLUSTER_PORT
      return 0
    fi
    echo "pg-cluster: the server did not start on port $PG_CLUSTER_PORT (attempt $attempt); its log ends:" >&2
    tail -5 "$PG_CLUSTER_DIR/server.log" >&2 || true
  done
  return 1
}

stop_cluster() {
  [ -n "${PG_CLUSTER_DIR:-}" ] || return 0
  as_postgres "$pg_bin/pg_ctl" -D "$PG_CLUSTER_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$PG_CLUSTER_DIR"
}
