#!/usr/bin/env bash
# Checks docker/compose.yaml as far as a machine without a container engine can: Debian's
# docker-compose (1.29, installed by scripts/test.sh) parses, validates against the Compose
# schema and interpolates it (`config`), with the one variable it requires set to a placeholder;
# then the rendered file must run `serve` (purging by default: no --no-purge) and pass through
# every relay and purge variable docs/configuration.md documents. Exits 1 naming what is wrong.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v docker-compose >/dev/null || {
  echo "check-compose: docker-compose is not installed (scripts/test.sh installs it)" >&2
  exit 1
}
rendered=$(LEDGER_MASTER_KEY=check-compose-placeholder docker-compose -f docker/compose.yaml config) || {
  echo "check-compose: docker/compose.yaml is not a valid compose file (docker-compose config above)" >&2
  exit 1
}
python3 -c '
import sys, yaml
services = yaml.safe_load(sys.stdin)["services"]
ledger = services.get("ledger") or {}
problems = [f"no {name} service" for name in ("postgres", "ledger") if name not in services]
command = ledger.get("command")
if command != ["serve"]:
    problems.append(f"the ledger service runs {command}, not [serve] (which purges by default)")
environment = ledger.get("environment") or {}
passed = [
    "LEDGER_SMTP_URL", "LEDGER_SMTP_CA_FILE", "LEDGER_EMAIL_FROM", "LEDGER_SUPPORT_EMAIL",
    "LEDGER_TWILIO_ACCOUNT_SID", "LEDGER_TWILIO_AUTH_TOKEN", "LEDGER_TWILIO_FROM", "LEDGER_TWILIO_BASE_URL",
    "LEDGER_TEMPLATES_DIR", "LEDGER_BRAND_NAME", "LEDGER_BRAND_URL", "LEDGER_BRAND_COLOR",
    "LEDGER_PURGE_AFTER_SECONDS", "LEDGER_PURGE_INTERVAL_SECONDS", "LEDGER_PURGE_TAKEOVER_SECONDS",
]
problems += [f"the ledger service does not pass {name} through" for name in passed if name not in environment]
for problem in problems:
    print(f"check-compose: {problem}", file=sys.stderr)
if not problems:
    print("check-compose: docker/compose.yaml is valid and passes every relay and purge variable through")
sys.exit(1 if problems else 0)
' <<<"$rendered"
