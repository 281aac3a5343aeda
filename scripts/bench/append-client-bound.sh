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
#            pgbench's loop does, instead of the flusher task awaiting the socket through the
#            readiness thread: what the connection model costs.
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

ceiling_tps() { $ceiling write "$1" "$seconds" | sed -E 's/.*tps=([0-9.]+).*/\1/'; }
appends() { # binary writers [environment…]
  local binary=$1 writers=$2
  shift 2
  env "$@" "$binary" append --writers "$writers" --seconds "$seconds" | sed -E 's/.*appends_per_s=([0-9.]+).*/\1/'
}
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }

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

command -v perf >/dev/null || exit 0
for variant in store bare thread; do
  binary=$patched
  case $variant in
    store) binary=$bench; variables=() ;;
    bare) variables=(LEDGER_BENCH_APPEND_SQL=bare) ;;
    thread) variables=(LEDGER_BENCH_THREAD=1) ;;
  esac
  out=$(env "${variables[@]}" perf stat -x, \
          -e task-clock,context-switches,raw_syscalls:sys_enter -- "$binary" append --writers 1 --seconds 5 2>&1) || continue
  python3 - "$variant" "$out" <<'PY'
import re, sys
variant, out = sys.argv[1], sys.argv[2]
appends = float(re.search(r"events=(\d+)", out).group(1))
counters = {line.split(",")[2]: float(line.split(",")[0]) for line in out.splitlines()
            if line.count(",") >= 3 and line.split(",")[0].replace(".", "").isdigit()}
print(f"perf writers=1 {variant}: client CPU {counters['task-clock'] / appends:.3f} ms, "
      f"{counters['context-switches'] / appends:.1f} context switches, "
      f"{counters['raw_syscalls:sys_enter'] / appends:.1f} system calls an append")
PY
done
