#!/usr/bin/env bash
# The store's group commit with one transaction in flight (the default: a second only after a
# 5 ms stall) beside two (`--stall-ms 0`: another whenever appends wait behind the one in
# flight), both beside the same run's ceiling (../shared/bench/pg-ceiling) at 1, 8 and 32
# writers, on a private cluster with default durability. The ceiling runs before and after the
# two, and the ratios are to their mean.
#
#   scripts/bench/append-in-flight.sh [SECONDS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/setup.sh
seconds="${1:-8}"
rounds="${2:-2}"
bench_start
trap stop_cluster EXIT
"$ledger" migrate >/dev/null
source scripts/bench/append-common.sh
echo "HEAD $(git rev-parse --short HEAD): one transaction in flight beside two (--stall-ms 0)"
for round in $(seq 1 "$rounds"); do
  for writers in 1 8 32; do
    before=$(ceiling_tps "$writers")
    one=$(appends "$bench" "$writers")
    two=$("$bench" append --writers "$writers" --seconds "$seconds" --stall-ms 0 | sed -E 's/.*appends_per_s=([0-9.]+).*/\1/')
    after=$(ceiling_tps "$writers")
    mean=$(python3 -c "print(($before + $after) / 2)")
    printf 'round=%d writers=%d ceiling=%.0f/%.0f one=%.0f (%s) two=%.0f (%s)\n' \
      "$round" "$writers" "$before" "$after" "$one" "$(ratio "$one" "$mean")" "$two" "$(ratio "$two" "$mean")"
  done
done
