#!/usr/bin/env bash
# Checks docker/compose.yaml and docker/ha/compose.yaml as far as a machine without a container
# engine can: Debian's docker-compose (1.29, installed by scripts/test.sh) parses, validates against
# the Compose schema and interpolates each (`config`), with the variables it requires set to
# placeholders. Then docker/compose.yaml must run `serve` (purging by default: no --no-purge) and
# pass through every relay and purge variable docs/configuration.md documents; docker/ha/compose.yaml
# must run three Patroni nodes and `serve` replicas that do the same on libpq multi-host URLs
# naming the three (read-write for DATABASE_URL, prefer-standby for LEDGER_READ_DATABASE_URL); and
# the Patroni image's entrypoint (docker/ha/patroni-entrypoint.sh) must fill deploy/patroni/patroni.yml
# in to valid YAML. Exits 1 naming what is wrong.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v docker-compose >/dev/null || {
  echo "check-compose: docker-compose is not installed (scripts/test.sh installs it)" >&2
  exit 1
}
# The variables docs/configuration.md documents that the serve services pass through.
export CHECK_COMPOSE_PASSED="LEDGER_SMTP_URL LEDGER_SMTP_CA_FILE LEDGER_EMAIL_FROM LEDGER_SUPPORT_EMAIL
  LEDGER_TWILIO_ACCOUNT_SID LEDGER_TWILIO_AUTH_TOKEN LEDGER_TWILIO_FROM LEDGER_TWILIO_BASE_URL
  LEDGER_TEMPLATES_DIR LEDGER_BRAND_NAME LEDGER_BRAND_URL LEDGER_BRAND_COLOR
  LEDGER_PURGE_AFTER_SECONDS LEDGER_PURGE_INTERVAL_SECONDS LEDGER_PURGE_TAKEOVER_SECONDS
  LEDGER_TLS_CERT_FILE LEDGER_TLS_KEY_FILE LEDGER_TRUSTED_PROXIES"

rendered=$(LEDGER_MASTER_KEY=check-compose-placeholder docker-compose -f docker/compose.yaml config) || {
  echo "check-compose: docker/compose.yaml is not a valid compose file (docker-compose config above)" >&2
  exit 1
}
python3 -c '
import os, sys, yaml
services = yaml.safe_load(sys.stdin)["services"]
ledger = services.get("ledger") or {}
problems = [f"no {name} service" for name in ("postgres", "ledger") if name not in services]
command = ledger.get("command")
if command != ["serve"]:
    problems.append(f"the ledger service runs {command}, not [serve] (which purges by default)")
environment = ledger.get("environment") or {}
passed = os.environ["CHECK_COMPOSE_PASSED"].split()
problems += [f"the ledger service does not pass {name} through" for name in passed if name not in environment]
for problem in problems:
    print(f"check-compose: {problem}", file=sys.stderr)
if not problems:
    print("check-compose: docker/compose.yaml is valid and passes every relay and purge variable through")
sys.exit(1 if problems else 0)
' <<<"$rendered"

rendered=$(LEDGER_MASTER_KEY=check-compose-placeholder PATRONI_SUPERUSER_PASSWORD=checkcompose1 \
  PATRONI_REPLICATION_PASSWORD=checkcompose2 LEDGER_DB_PASSWORD=checkcompose3 PATRONI_REST_PASSWORD=checkcompose4 \
  docker-compose -f docker/ha/compose.yaml config) || {
  echo "check-compose: docker/ha/compose.yaml is not a valid compose file (docker-compose config above)" >&2
  exit 1
}
python3 -c '
import os, sys, yaml
from urllib.parse import urlsplit, parse_qs
services = yaml.safe_load(sys.stdin)["services"]
problems = []
# The Patroni nodes: the services built from docker/ha/Dockerfile that run Patroni (no command).
nodes = sorted(name for name, service in services.items()
               if (service.get("build") or {}).get("dockerfile") == "docker/ha/Dockerfile" and not service.get("command"))
if len(nodes) != 3:
    problems.append(f"{len(nodes)} Patroni nodes {nodes}, not three")
for name in nodes:
    environment = services[name].get("environment") or {}
    if environment.get("NODE_NAME") != name or environment.get("NODE_HOST") != name:
        problems.append(f"{name}: NODE_NAME and NODE_HOST are not its service name")
    if environment.get("PG_PORT") != "5432" or environment.get("REST_PORT") != "8008":
        problems.append(f"{name}: PG_PORT is not 5432 or REST_PORT not 8008")
    if len((environment.get("ETCD_HOSTS") or "").split(",")) != 3:
        problems.append(f"{name}: ETCD_HOSTS does not name three etcd members")
expected_hosts = [f"{name}:5432" for name in nodes]

def check_url(service, variable, attrs):
    url = (services[service].get("environment") or {}).get(variable) or ""
    parts = urlsplit(url)
    hosts = parts.netloc.rpartition("@")[2].split(",")
    if sorted(hosts) != expected_hosts:
        problems.append(f"{service}: {variable} names {hosts}, not the three nodes {expected_hosts}")
    if parse_qs(parts.query).get("target_session_attrs") != [attrs]:
        problems.append(f"{service}: {variable} lacks target_session_attrs={attrs}")

serving = sorted(name for name, service in services.items() if service.get("command") == ["serve"])
if len(serving) < 2:
    problems.append(f"serve runs in {serving}, not in two replicas")
passed = os.environ["CHECK_COMPOSE_PASSED"].split()
for name in serving:
    check_url(name, "DATABASE_URL", "read-write")
    check_url(name, "LEDGER_READ_DATABASE_URL", "prefer-standby")
    environment = services[name].get("environment") or {}
    problems += [f"{name} does not pass {variable} through" for variable in passed if variable not in environment]
migrating = [name for name, service in services.items() if service.get("command") == ["migrate"]]
if len(migrating) != 1:
    problems.append(f"migrate runs in {migrating}, not in one job")
for name in migrating:
    check_url(name, "DATABASE_URL", "read-write")
    if (services[name].get("depends_on") or {}).get("createdb", {}).get("condition") != "service_completed_successfully":
        problems.append(f"{name} does not wait for createdb to complete")
for problem in problems:
    print(f"check-compose: {problem}", file=sys.stderr)
if not problems:
    print("check-compose: docker/ha/compose.yaml is valid: Patroni on " + ", ".join(nodes) + ", serve in "
          + ", ".join(serving) + " on multi-host URLs (read-write, prefer-standby), every relay and purge variable passed through")
sys.exit(1 if problems else 0)
' <<<"$rendered"

bash -n docker/ha/patroni-entrypoint.sh || {
  echo "check-compose: docker/ha/patroni-entrypoint.sh does not parse (bash -n above)" >&2
  exit 1
}
# The entrypoint's own rendering (`render`), of the template it is given in the image, with one
# node's values; the rendered file must be YAML carrying them.
patroni_config=$(LEDGER_PATRONI_TEMPLATE=deploy/patroni/patroni.yml NODE_NAME=db1 NODE_HOST=db1 \
  ETCD_HOSTS=etcd1:2379,etcd2:2379,etcd3:2379 CLIENT_NETWORK=10.157.0.0/24 \
  SUPERUSER_PASSWORD=checkcompose1 REPLICATION_PASSWORD=checkcompose2 REST_USERNAME=patroni REST_PASSWORD=checkcompose4 \
  bash docker/ha/patroni-entrypoint.sh render) || {
  echo "check-compose: docker/ha/patroni-entrypoint.sh cannot render deploy/patroni/patroni.yml (above)" >&2
  exit 1
}
python3 -c '
import sys, yaml
text = sys.stdin.read()
try:
    config = yaml.safe_load(text)
except yaml.YAMLError as error:
    sys.exit(f"check-compose: deploy/patroni/patroni.yml rendered by the entrypoint is not YAML: {error}")
expected = {
    ("name",): "db1",
    ("restapi", "listen"): "db1:8008",
    ("etcd3", "hosts"): "etcd1:2379,etcd2:2379,etcd3:2379",
    ("postgresql", "listen"): "db1:5432",
    ("postgresql", "bin_dir"): "/usr/lib/postgresql/15/bin",
    ("postgresql", "data_dir"): "/var/lib/postgresql/patroni/data",
    ("postgresql", "authentication", "superuser", "password"): "checkcompose1",
    ("postgresql", "authentication", "replication", "password"): "checkcompose2",
    ("bootstrap", "dcs", "loop_wait"): 1,
    ("bootstrap", "dcs", "postgresql", "parameters", "max_connections"): 200,
}
problems = []
for path, value in expected.items():
    found = config
    for key in path:
        found = found.get(key) if isinstance(found, dict) else None
    if found != value:
        problems.append(".".join(path) + f" is {found!r}, not {value!r}")
if "host all all 10.157.0.0/24 scram-sha-256" not in config["bootstrap"]["pg_hba"]:
    problems.append("pg_hba does not admit CLIENT_NETWORK")
if any("${" in line.split("#")[0] for line in text.splitlines()):
    problems.append("a ${…} is left unfilled")
for problem in problems:
    print(f"check-compose: the rendered deploy/patroni/patroni.yml: {problem}", file=sys.stderr)
if not problems:
    print("check-compose: docker/ha/patroni-entrypoint.sh renders deploy/patroni/patroni.yml to valid YAML")
sys.exit(1 if problems else 0)
' <<<"$patroni_config"
