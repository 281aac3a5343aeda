#!/usr/bin/env bash
# Purge benchmark: ACCOUNTS deleted accounts of ~20 events each, due for purge, purged
# with one worker, then as many again with two workers; release build, private cluster with
# default durability.
#
#   scripts/bench/purge.sh [ACCOUNTS]
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/setup.sh
accounts="${1:-10000}"
trap stop_cluster EXIT
bench_start
export LOG_LEVEL=warning
for workers in 1 2; do
  "$bench" purge --accounts "$accounts" --workers "$workers"
done
