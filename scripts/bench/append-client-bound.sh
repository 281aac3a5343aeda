#!/usr/bin/env bash
# Issue 27, part 1: the most the store's client reaches whatever its SQL costs, beside the same
# run's ceiling (../shared/bench/pg-ceiling) at the same client count, on a private cluster with
# default durability.
#
# It builds a scratch copy of HEAD with scripts/bench/patches/append-bare-bound.patch applied (a
# git worktree under /tmp, removed at the end; the patch is never for main). In that copy the
# group-commit batcher sends each batch as one bare INSERT of rows the client has versioned and
# chained itself: no stream head read, no check, no PL/pgSQL, so the SQL costs what a row
# costs. The chain it writes does not verify; it only bounds any design from above.
#
#   store    `ledger-bench append --writers N` as built from HEAD.
#   bare     the patched batcher's INSERT alone.
#   locked   the same INSERT taking the streams' advisory locks in the statement: the least a
#            design that keeps the feed order (docs/architecture.md "Event store rules") takes.
#   thread   the bare INSERT sent by one dedicated thread that blocks on its own connection, as
#            pgbench's loop does: no pool, no flusher start, no linger. Until the flusher itself
#            ran on a blocking thread (after 1718eca) this measured what awaiting every result
#            through the readiness thread cost.
#
# The ceiling runs before and after the four, and the ratios are to their mean. With `perf`
# on the machine it then counts, at 1 writer, the client's CPU, context switches and system
# calls per append for the store, the bare insert and the thread.
#
#   scripts/bench/append-client-bound.sh [SECONDS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/setup.sh
seconds="${1:-8}"
rounds="${2:-2}"

tree=$(mktemp -d /tmp/ledger-bound-tree.XXXXXX)
rmdir "$tree"
git worktree add --detach "$tree" HEAD >/dev/null
trap 'stop_cluster; git worktree remove --force "$tree"' EXIT
git -C "$tree" apply "$PWD/scripts/bench/patches/append-bare-bound.patch"
(cd "$tree" && swift build -c release --product ledger-bench >&2)
patched="$tree/.build/release/ledger-bench"

bench_start
"$ledger" migrate >/dev/null

source scripts/bench/append-common.sh

for round in $(seq 1 "$rounds"); do
  for writers in 1 8 32; do
    before=$(ceiling_tps "$writers")
    store=$(appends "$bench" "$writers")
    bare=$(appends "$patched" "$writers" LEDGER_BENCH_APPEND_SQL=bare)
    locked=$(appends "$patched" "$writers" LEDGER_BENCH_APPEND_SQL=locked)
    thread=$(appends "$patched" "$writers" LEDGER_BENCH_THREAD=1)
    after=$(ceiling_tps "$writers")
    mean=$(python3 -c "print(($before + $after) / 2)")
    printf 'round=%d writers=%d ceiling=%.0f/%.0f store=%.0f (%s) bare=%.0f (%s) locked=%.0f (%s) thread=%.0f (%s)\n' \
      "$round" "$writers" "$before" "$after" "$store" "$(ratio "$store" "$mean")" "$bare" "$(ratio "$bare" "$mean")" \
      "$locked" "$(ratio "$locked" "$mean")" "$thread" "$(ratio "$thread" "$mean")"
  done
done

perf_per_append store "$bench"
perf_per_append bare "$patched" LEDGER_BENCH_APPEND_SQL=bare
perf_per_append thread "$patched" LEDGER_BENCH_THREAD=1
