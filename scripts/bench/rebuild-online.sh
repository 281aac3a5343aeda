#!/usr/bin/env bash
# `ledger projections rebuild` while commands run. A store of ACCOUNTS x 100
# account events (`ledger-bench history`; default 10,000 x 100 = 1,000,000), projected once by a
# quiet rebuild; then `ledger-bench rebuild`: 8 writers edit profiles through the service's
# command path for BASELINE seconds without a rebuild, then again during a rebuild, and the
# longest command of each is printed. The same run's ceiling: `pg-ceiling read` (COPY of
# 1,000,000 rows) for the rebuild's read rate, `pg-ceiling write 8` for the commands.
#
#   scripts/bench/rebuild-online.sh [ACCOUNTS] [BASELINE]
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/setup.sh
accounts=${1:-10000}
baseline=${2:-10}
bench_workdir rebuild
bench_start
export LEDGER_DB_MAX_CONNECTIONS=8 LOG_LEVEL=warning

"$ledger" migrate >/dev/null
"$bench" history --accounts "$accounts" --events-per-account 100 | tail -2 | head -1
echo "events: $(psql -X -A -t -c 'SELECT count(*) FROM events'); database: $(psql -X -A -t -c "SELECT pg_size_pretty(pg_database_size('ledger'))")"
"$ledger" projections rebuild | tail -2
$ceiling read 1000000
$ceiling write 8 10
"$bench" rebuild --writers 8 --baseline-seconds "$baseline"
