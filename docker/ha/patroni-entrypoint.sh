#!/usr/bin/env bash
# The entrypoint of the Patroni node image (docker/ha/Dockerfile): fills in
# deploy/patroni/patroni.yml (copied into the image) from the container's environment, writes it
# to /etc/patroni/config.yml (where `patronictl` finds it too: PATRONICTL_CONFIG_FILE) and execs
# `patroni` on it. Rendered afresh at every start, so a changed variable takes effect on a restart
# (the `bootstrap:` part only when the cluster is first made).
#
#   patroni-entrypoint.sh            render, then exec patroni
#   patroni-entrypoint.sh render     print the rendered configuration and exit (scripts/check-compose.sh)
#   patroni-entrypoint.sh CMD ARG…   exec CMD (psql, patronictl, bash, …)
#
# Required: NODE_NAME, NODE_HOST (the address the other nodes and the clients reach this one at),
# ETCD_HOSTS (host:port,host:port,…), CLIENT_NETWORK (the CIDR pg_hba admits), SUPERUSER_PASSWORD,
# REST_USERNAME and REST_PASSWORD (Patroni's REST API user for changes),
# REPLICATION_PASSWORD. Defaulted: the rest (below). Every ${NAME} of the template must end up
# set and non-empty, or this stops naming the missing ones; the passwords must come back out of the
# YAML as the same strings (letters and digits are safe: `openssl rand -hex 24`).
set -euo pipefail

: "${LEDGER_PATRONI_TEMPLATE:=/usr/share/account-ledger/patroni/patroni.yml}"
: "${LEDGER_PATRONI_CONFIG:=/etc/patroni/config.yml}"
export REST_PORT="${REST_PORT:-8008}"
export PG_PORT="${PG_PORT:-5432}"
# 1 s, as in scripts/ha-cluster.sh, whose failover times docs/operations.md quotes (the template's
# ttl is 10 s, retry_timeout 4 s).
export LOOP_WAIT="${LOOP_WAIT:-1}"
export MAX_CONNECTIONS="${MAX_CONNECTIONS:-200}"
export PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"
# The data directory lives in the volume mounted at /var/lib/postgresql/patroni.
export DATA_DIR="${DATA_DIR:-/var/lib/postgresql/patroni/data}"
export PGPASS_FILE="${PGPASS_FILE:-/tmp/pgpass}"
export SOCKET_DIR="${SOCKET_DIR:-/var/run/postgresql}"

render() {
  python3 - "$LEDGER_PATRONI_TEMPLATE" <<'PY'
import os, re, sys, yaml

template = open(sys.argv[1], encoding="utf-8").read()
placeholder = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
missing = sorted({name for name in placeholder.findall(template) if not os.environ.get(name)})
if missing:
    sys.exit(f"patroni-entrypoint: set {', '.join(missing)} (the ${{…}} of {sys.argv[1]})")
rendered = placeholder.sub(lambda match: os.environ[match.group(1)], template)
try:
    config = yaml.safe_load(rendered)
except yaml.YAMLError as error:
    sys.exit(f"patroni-entrypoint: the rendered configuration is not YAML: {error}")
authentication = config["postgresql"]["authentication"]
for role, variable in (("superuser", "SUPERUSER_PASSWORD"), ("replication", "REPLICATION_PASSWORD")):
    if authentication[role]["password"] != os.environ[variable]:
        sys.exit(f"patroni-entrypoint: {variable} reads back from the YAML as something else; use letters and digits, not digits alone (openssl rand -hex 24)")
sys.stdout.write(rendered)
PY
}

case "${1:-}" in
  render)
    render
    ;;
  "")
    umask 077
    render >"$LEDGER_PATRONI_CONFIG.tmp"
    mv "$LEDGER_PATRONI_CONFIG.tmp" "$LEDGER_PATRONI_CONFIG"
    # PID 1: Patroni reaps its own orphans when it is, and stops PostgreSQL on SIGTERM.
    exec patroni "$LEDGER_PATRONI_CONFIG"
    ;;
  *)
    exec "$@"
    ;;
esac
