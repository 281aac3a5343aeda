#!/usr/bin/env bash
# Emails per second through a local SMTP server: the service's SMTP sink
# (`ledger-bench smtp`: templates' stand-in, MIME, libcurl on its thread pool) at 1 and 8
# connections, beside a Python smtplib loop (scripts/bench/smtp-client.py) against the same
# server in the same run. The server is scripts/smtp-server.py (aiosmtpd, one Python process)
# with STARTTLS, AUTH and a self-signed certificate made here; it records nothing.
#
#   scripts/bench/smtp.sh [MESSAGES] [ROUNDS]     # default 1000 messages, 2 rounds
set -euo pipefail
cd "$(dirname "$0")/../.."
messages=${1:-1000}
rounds=${2:-2}
python=$(scripts/smtp-venv.sh)
swift build -c release --product ledger-bench >&2
bench=.build/release/ledger-bench

work=$(mktemp -d /tmp/ledger-bench-smtp.XXXXXX)
server=""
cleanup() {
  [ -z "$server" ] || kill "$server" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj "/CN=ledger bench" \
  -addext subjectAltName=DNS:localhost -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
password=$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')
"$python" scripts/smtp-server.py --cert "$work/cert.pem" --key "$work/key.pem" --user bench --password "$password" \
  >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do grep -q '^port ' "$work/server.log" && break; sleep 0.1; done
port=$(awk '/^port /{print $2; exit}' "$work/server.log")
[ -n "$port" ] || { echo "smtp bench: the server did not start" >&2; cat "$work/server.log" >&2; exit 1; }

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; $(date -u +%Y-%m-%dT%H:%MZ); $(curl --version | head -1 | cut -d' ' -f1-5); $("$python" --version)"
for round in $(seq 1 "$rounds"); do
  for connections in 1 8; do
    LEDGER_SMTP_URL="smtp://bench:$password@localhost:$port" LEDGER_SMTP_CA_FILE="$work/cert.pem" \
      "$bench" smtp --connections "$connections" --messages "$messages"
    "$python" scripts/bench/smtp-client.py --port "$port" --ca-file "$work/cert.pem" --user bench --password "$password" \
      --connections "$connections" --messages "$messages"
  done
done
