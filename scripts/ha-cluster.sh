# A three-node Patroni cluster with etcd on this machine, from Debian's `patroni` and
# `etcd-server` (sourced; installs them when missing), for the failover run and for trials:
# deploy/patroni/patroni.yml filled in for each node, synchronous replication, strict.
#
#   start_ha_cluster      (database HA_DATABASE, default postgres) sets HA_DIR, HA_PG_PORTS (3), HA_REST_PORTS (3), HA_DATABASE_URL (libpq
#                         multi-host, read-write), HA_READ_DATABASE_URL (prefer-standby) and HA_REST_PASSWORD (the
#                         REST API's user `patroni`, for switchovers)
#   ha_leader             the leader's node name (node1…node3), from Patroni's REST API
#   ha_node_pid NAME      the pid of NAME's Patroni; ha_postmaster_pid NAME, its postmaster's
#   stop_ha_cluster
source "$(dirname "${BASH_SOURCE[0]}")/pg-cluster.sh"

ha_install() {
  command -v patroni >/dev/null && command -v etcd >/dev/null && return 0
  [ "$(id -u)" -eq 0 ] || { echo "patroni and etcd-server are missing: apt-get install patroni etcd-server" >&2; return 1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q patroni etcd-server >/dev/null
}

ha_free_port() {
  local candidate
  for _ in $(seq 1 100); do
    # Below the kernel's ephemeral range (32768 and up here): a port an outgoing connection holds
    # cannot be seen by a connect, and the server's bind would then fail.
    candidate=$((16000 + RANDOM % 16000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null && [[ " ${HA_TAKEN_PORTS:-} " != *" $candidate "* ]]; then
      HA_TAKEN_PORTS="${HA_TAKEN_PORTS:-} $candidate"
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

start_ha_cluster() {
  ha_install || return 1
  HA_DIR=$(mktemp -d /tmp/ledger-ha.XXXXXX)
  chmod 755 "$HA_DIR"
  local etcd_client etcd_peer password replication
  etcd_client=$(ha_free_port); etcd_peer=$(ha_free_port)
  password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
  replication=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
  HA_REST_PASSWORD=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
  mkdir -p "$HA_DIR/etcd"
  [ "$(id -u)" -eq 0 ] && chown -R postgres:postgres "$HA_DIR"
  as_postgres etcd --name ha --data-dir "$HA_DIR/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_client" --advertise-client-urls "http://127.0.0.1:$etcd_client" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
    --initial-cluster "ha=http://127.0.0.1:$etcd_peer" >"$HA_DIR/etcd.log" 2>&1 &
  echo $! >"$HA_DIR/etcd.pid"
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$etcd_client/health" >/dev/null && break; sleep 0.1; done
  HA_PG_PORTS=() HA_REST_PORTS=()
  local hosts=() node
  for node in 1 2 3; do
    HA_PG_PORTS+=("$(ha_free_port)"); HA_REST_PORTS+=("$(ha_free_port)")
    hosts+=("127.0.0.1:${HA_PG_PORTS[-1]}")
    mkdir -p "$HA_DIR/node$node"
    [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$HA_DIR/node$node"
    NODE_NAME="node$node" NODE_HOST=127.0.0.1 REST_PORT="${HA_REST_PORTS[-1]}" PG_PORT="${HA_PG_PORTS[-1]}" \
      ETCD_HOSTS="127.0.0.1:$etcd_client" LOOP_WAIT="${HA_LOOP_WAIT:-1}" MAX_CONNECTIONS="${HA_MAX_CONNECTIONS:-200}" \
      CLIENT_NETWORK=127.0.0.1/32 DATA_DIR="$HA_DIR/node$node/data" PG_BIN="$pg_bin" PGPASS_FILE="$HA_DIR/node$node/pgpass" \
      SUPERUSER_PASSWORD="$password" REPLICATION_PASSWORD="$replication" SOCKET_DIR="$HA_DIR/node$node" \
      REST_USERNAME=patroni REST_PASSWORD="$HA_REST_PASSWORD" \
      python3 -c 'import os, sys; sys.stdout.write(os.path.expandvars(sys.stdin.read()))' \
      <"$(dirname "${BASH_SOURCE[0]}")/../deploy/patroni/patroni.yml" >"$HA_DIR/node$node.yml"
    chmod 600 "$HA_DIR/node$node.yml"  # it holds the passwords
    [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$HA_DIR/node$node.yml"
    as_postgres patroni "$HA_DIR/node$node.yml" >"$HA_DIR/node$node.log" 2>&1 &
    echo $! >"$HA_DIR/node$node.pid"
    # The first node bootstraps alone; the others clone it once it leads.
    [ "$node" = 1 ] && ha_wait_leader 60
  done
  ha_wait_members 120 || { echo "the HA cluster did not come up: see $HA_DIR" >&2; return 1; }
  local joined
  joined=$(IFS=,; echo "${hosts[*]}")
  local database=${HA_DATABASE:-postgres}
  [ "$database" = postgres ] || as_postgres "$pg_bin/createdb" -h "$HA_DIR/$(ha_leader)" -p "${HA_PG_PORTS[$(($(ha_leader | tr -dc 0-9) - 1))]}" "$database"
  HA_DATABASE_URL="postgresql://postgres:$password@$joined/$database?target_session_attrs=read-write&connect_timeout=2"
  HA_READ_DATABASE_URL="postgresql://postgres:$password@$joined/$database?target_session_attrs=prefer-standby&connect_timeout=2"
  export HA_DIR HA_DATABASE_URL HA_READ_DATABASE_URL HA_REST_PASSWORD
}

# The name of the node whose REST API says it is the leader (primary); empty when none is.
ha_leader() {
  local index
  for index in "${!HA_REST_PORTS[@]}"; do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${HA_REST_PORTS[$index]}/primary")" = 200 ]; then
      echo "node$((index + 1))"; return 0
    fi
  done
}

ha_wait_leader() {
  local deadline=$((SECONDS + $1))
  while [ $SECONDS -lt $deadline ]; do [ -n "$(ha_leader)" ] && return 0; sleep 0.5; done
  return 1
}

# Waits until a leader and its synchronous standbys are running.
ha_wait_members() {
  local deadline=$((SECONDS + $1)) leader
  while [ $SECONDS -lt $deadline ]; do
    leader=$(ha_leader)
    if [ -n "$leader" ]; then
      local port=${HA_REST_PORTS[$((${leader#node} - 1))]}
      if curl -s "http://127.0.0.1:$port/cluster" | python3 -c '
import json, sys
members = json.load(sys.stdin).get("members", [])
running = [m for m in members if m.get("state") in ("running", "streaming")]
sync = [m for m in members if m.get("role") == "sync_standby"]
sys.exit(0 if len(running) == 3 and len(sync) == 2 else 1)'; then
        return 0
      fi
    fi
    sleep 0.5
  done
  return 1
}

# The Patroni process itself (the pid file holds the `runuser` that started it when run as root).
ha_node_pid() { pgrep -f "python3? [^ ]*/patroni $HA_DIR/$1.yml" | head -1; }
ha_postmaster_pid() { head -1 "$HA_DIR/$1/data/postmaster.pid" 2>/dev/null; }

stop_ha_cluster() {
  [ -n "${HA_DIR:-}" ] && [ -d "$HA_DIR" ] || return 0
  local node pid
  # Patroni stops its postmaster on TERM; the pid files hold the `runuser` that started each
  # process when run as root, so the processes themselves are found by their command line.
  for node in 1 2 3; do
    pid=$(ha_node_pid "node$node") && [ -n "$pid" ] && kill "$pid" 2>/dev/null
  done
  for node in 1 2 3; do
    for _ in $(seq 1 100); do [ -z "$(ha_node_pid "node$node")" ] && break; sleep 0.1; done
    pid=$(ha_node_pid "node$node") && [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    # A postmaster Patroni left running (it was killed itself): only if the pid is still this
    # node's postgres (its command line names the node's directory).
    pid=$(ha_postmaster_pid "node$node") && [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = postgres ] &&
      tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$HA_DIR/node$node" && kill -9 "$pid" 2>/dev/null
  done
  pkill -f "etcd --name ha --data-dir $HA_DIR/etcd" 2>/dev/null
  for _ in $(seq 1 50); do pgrep -f "etcd --name ha --data-dir $HA_DIR/etcd" >/dev/null || break; sleep 0.1; done
  rm -rf "$HA_DIR"
  HA_DIR=""
  return 0
}
