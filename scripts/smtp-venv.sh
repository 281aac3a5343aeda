#!/usr/bin/env bash
# Makes .build/smtp-venv with the pinned aiosmtpd (scripts/smtp-requirements.txt) for
# scripts/smtp-server.py, the real SMTP server of the SMTP tests and benchmark, and the openssl
# command the tests make their certificates with; prints the venv's python. Rebuilt whenever the
# requirements or the Python change; safe to run from several processes at once (flock).
#
#   python=$(scripts/smtp-venv.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
LEDGER_EXTRA_PACKAGES="${LEDGER_EXTRA_PACKAGES:-} python3 python3-venv openssl" source scripts/setup.sh >&2

venv=.build/smtp-venv
requirements=scripts/smtp-requirements.txt
mkdir -p .build
exec 9>.build/smtp-venv.lock
flock 9
stamp=$({ cat "$requirements"; python3 --version; } | sha256sum | cut -d' ' -f1)
if [ "$(cat "$venv/.requirements-sha256" 2>/dev/null)" != "$stamp" ]; then
  echo "smtp-venv: installing aiosmtpd into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$requirements" >&2
  echo "$stamp" >"$venv/.requirements-sha256"
fi
echo "$PWD/$venv/bin/python"
