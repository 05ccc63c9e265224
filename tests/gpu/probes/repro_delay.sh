#!/usr/bin/env bash
# repro_delay.sh RR-TUI DIR: does the softmax reproducer's kernel time depend on how long the
# host takes around the held launch? Replay's host path (Rust, an NVTX range, the watchdog) is
# not the reproducer's. The reproducer waits RR_D1 µs (spinning) after each restore before it
# queues the blocking kernel, and RR_D2 µs after queuing the timed launch before it releases it.
# Three rounds of replay and the reproducer at D1, D2 in {0, 5, 15, 40, 100}.
set -u
RR=$1 D=$2
REPS=${REPS:-1000}
KERNELS=${KERNELS:-SoftMax}
mkdir -p "$D"
"$RR" record --dir "$D/rec" --kernels "$KERNELS" -- python3 tests/gpu/samples/torch_ops.py >"$D/record.txt" 2>&1 || { tail "$D/record.txt"; exit 1; }
J=$(ls "$D"/rec/*.json | grep -v report | head -n 1)
"$RR" repro "$J" --out "$D/r" --force >/dev/null || exit 1
SPIN='{ static const char *e = getenv("ENV"); static long us = e ? atol(e) : 0; auto t0 = std::chrono::steady_clock::now(); while (std::chrono::steady_clock::now() - t0 < std::chrono::microseconds(us)) {} }'
sed -e "s/^        restore();\$/&\n        ${SPIN//ENV/RR_D1}/" -e "s/^        \*flag = 1;\$/        ${SPIN//ENV/RR_D2}\n&/" \
    -e 's/^#include <vector>$/&\n#include <chrono>\n#include <cstdlib>/' "$D/r/repro.cpp" >"$D/r/delay.cpp"
[ "$(grep -c steady_clock::now "$D/r/delay.cpp")" = 2 ] || echo "delay: patterns not found"
(cd "$D/r" && nvcc -O2 -std=c++17 delay.cpp -lcuda -o delay) || exit 1
summary() {
  "$RR" replay "$J" --json --repetitions "$REPS" 2>/dev/null | python3 -c 'import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e.get("event") == "summary":
        print("%.3f" % (e["kernel_ns"]["median"] / 1e3))'
}
median() { "$@" --repetitions "$REPS" 2>&1 | grep -oE 'median [0-9.]+ us' | grep -oE '[0-9.]+'; }
for round in 1 2 3; do
  line="round $round: replay $(summary) | reproducer"
  for d in 0 5 15 40 100; do line="$line D1=$d $(RR_D1=$d median "$D/r/delay")"; done
  line="$line |"
  for d in 5 15 40 100; do line="$line D2=$d $(RR_D2=$d median "$D/r/delay")"; done
  echo "$line"
done
