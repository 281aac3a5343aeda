#!/usr/bin/env bash
# The store's appends as built from HEAD beside the same as built from an earlier revision,
# both beside the same run's ceiling (../shared/bench/pg-ceiling) at 1, 8 and 32 writers, on a
# private cluster with default durability: what a change to the append path gained. The ceiling
# runs before and after the two, and the ratios are to their mean. With `perf` on the machine it
# then counts, at 1 writer, each one's client CPU, context switches and system calls per append.
#
# The earlier revision is built in a scratch git worktree under /tmp, removed at the end; or
# give the path of a `ledger-bench` built from it already.
#
#   scripts/bench/append-versus.sh REVISION|LEDGER_BENCH_BINARY [SECONDS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/setup.sh
revision="${1:?usage: append-versus.sh REVISION [SECONDS] [ROUNDS]}"
seconds="${2:-8}"
rounds="${3:-2}"

if [ -x "$revision" ] && [ -f "$revision" ]; then
  earlier=$revision
  label=earlier
  trap stop_cluster EXIT
else
  tree=$(mktemp -d /tmp/ledger-versus-tree.XXXXXX)
  rmdir "$tree"
  git worktree add --detach "$tree" "$revision" >/dev/null
  trap 'stop_cluster; git worktree remove --force "$tree"' EXIT
  (cd "$tree" && swift build -c release --product ledger-bench >&2)
  earlier="$tree/.build/release/ledger-bench"
  label=$revision
fi

bench_start
"$ledger" migrate >/dev/null
source scripts/bench/append-common.sh
echo "HEAD $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources || echo ' with uncommitted changes') beside $revision"

for round in $(seq 1 "$rounds"); do
  for writers in 1 8 32; do
    before=$(ceiling_tps "$writers")
    then=$(appends "$earlier" "$writers")
    now=$(appends "$bench" "$writers")
    after=$(ceiling_tps "$writers")
    mean=$(python3 -c "print(($before + $after) / 2)")
    printf 'round=%d writers=%d ceiling=%.0f/%.0f %s=%.0f (%s) HEAD=%.0f (%s)\n' \
      "$round" "$writers" "$before" "$after" "$label" "$then" "$(ratio "$then" "$mean")" "$now" "$(ratio "$now" "$mean")"
  done
done

perf_per_append "$label" "$earlier"
perf_per_append HEAD "$bench"
