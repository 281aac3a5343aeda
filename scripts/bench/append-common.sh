# Shared by the append benchmarks (sourced after setup.sh, with `seconds` set): the same run's
# ceiling, a `ledger-bench append` run, a ratio, and the client's cost per append under perf.

# The ceiling's transactions/s at N clients.
ceiling_tps() { $ceiling write "$1" "$seconds" | sed -E 's/.*tps=([0-9.]+).*/\1/'; }

# appends BINARY WRITERS [VARIABLE=VALUE…]: the binary's appends/s.
appends() {
  local binary=$1 writers=$2
  shift 2
  env "$@" "$binary" append --writers "$writers" --seconds "$seconds" | sed -E 's/.*appends_per_s=([0-9.]+).*/\1/'
}

ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }

# perf_per_append LABEL BINARY [VARIABLE=VALUE…]: client CPU, context switches and system calls
# per append at 1 writer (nothing when perf is missing or not allowed).
perf_per_append() {
  local label=$1 binary=$2 out
  shift 2
  command -v perf >/dev/null || return 0
  out=$(env "$@" perf stat -x, -e task-clock,context-switches,raw_syscalls:sys_enter -- \
          "$binary" append --writers 1 --seconds 5 2>&1) || return 0
  python3 - "$label" "$out" <<'PY'
import re, sys
label, out = sys.argv[1], sys.argv[2]
appends = float(re.search(r"events=(\d+)", out).group(1))
counters = {line.split(",")[2]: float(line.split(",")[0]) for line in out.splitlines()
            if line.count(",") >= 3 and line.split(",")[0].replace(".", "").isdigit()}
print(f"perf writers=1 {label}: client CPU {counters['task-clock'] / appends:.3f} ms, "
      f"{counters['context-switches'] / appends:.1f} context switches, "
      f"{counters['raw_syscalls:sys_enter'] / appends:.1f} system calls an append")
PY
}
