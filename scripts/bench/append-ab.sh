#!/usr/bin/env bash
# Two builds' group commit side by side on one private cluster: pg-ceiling's INSERTs, then
# `ledger-bench append` of each build, at 1 and 8 writers, ROUNDS times, so that both meet the
# same disk (this VM's WAL flushes vary several-fold within minutes).
#
#   scripts/bench/append-ab.sh BEFORE_LEDGER_BENCH AFTER_LEDGER_BENCH [SECONDS] [ROUNDS]
set -euo pipefail
before="$1"
after="$2"
seconds="${3:-8}"
rounds="${4:-2}"
cd "$(dirname "$0")/../.."
source scripts/bench/setup.sh
trap stop_cluster EXIT
bench_start
for _ in $(seq "$rounds"); do
  for writers in 1 8; do
    $ceiling write "$writers" "$seconds"
    "$before" append --writers "$writers" --seconds "$seconds" | sed 's/^/before /'
    "$after" append --writers "$writers" --seconds "$seconds" | sed 's/^/after  /'
  done
done
