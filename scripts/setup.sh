#!/usr/bin/env bash
# Installs what building and testing need on Debian 12, when it is missing. Safe to re-run.
set -euo pipefail

# What building and running need (curl and jq for the README's walk-through); scripts add theirs
# through LEDGER_EXTRA_PACKAGES (the test run: docker-compose, python3, chromium).
packages=(libpq-dev libssl-dev libcurl4-openssl-dev libcrypt-dev libargon2-dev libvips-dev pkg-config postgresql postgresql-client curl jq ${LEDGER_EXTRA_PACKAGES:-})
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo_=""; [ "$(id -u)" -eq 0 ] || sudo_="sudo"
  $sudo_ apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Debian's postgresql package starts a cluster on 5432; this project never uses it, but it
# should not hold memory on a CI machine either.
if command -v pg_lsclusters >/dev/null && pg_lsclusters -h 2>/dev/null | grep -q online; then
  pg_ctlcluster --force "$(pg_lsclusters -h | awk 'NR==1{print $1}')" main stop >/dev/null 2>&1 || true
fi

if ! command -v swift >/dev/null; then
  for candidate in /opt/swift/usr/bin /usr/share/swift/usr/bin; do
    [ -x "$candidate/swift" ] && export PATH="$candidate:$PATH" && break
  done
fi
command -v swift >/dev/null || {
  echo "setup: Swift 6 is not installed; get it from swift.org (or swiftly) and re-run" >&2
  exit 1
}
