#!/usr/bin/env bash
# repro_sync.sh RR-TUI DIR: the softmax gap survives every change to the reproducer's restore,
# context and host timing before the release (repro_globals/context/delay.sh), and the kernel
# itself runs the same under Nsight Compute (repro_ncu.sh). Left: how the host waits while the
# timed interval runs. Variants: the context's scheduling flag set to spin, yield, or blocking
# sync; the host sleeping 50 µs after the release before it synchronises (no polling while the
# kernel runs); and polling the stop event with cuEventQuery instead of synchronising.
set -u
RR=$1 D=$2
REPS=${REPS:-1000}
source "$(dirname "$0")/repro_lib.sh"
probe_record
S="$D/r/repro.cpp"
for f in SPIN YIELD BLOCKING_SYNC; do
  sed -e "s/^    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));\$/    CHECK(cuDevicePrimaryCtxSetFlags(dev, CU_CTX_SCHED_$f));\n&/" "$S" >"$D/r/sched_$f.cpp"
done
sed -e 's/^        \*flag = 1;$/&\n        usleep(50);/' -e 's/^#include <vector>$/&\n#include <unistd.h>/' "$S" >"$D/r/sleep.cpp"
sed -e 's/^        \*flag = 1;$/&\n        while (cuEventQuery(stop) == CUDA_ERROR_NOT_READY) {}/' "$S" >"$D/r/query.cpp"
for v in sched_SPIN sched_YIELD sched_BLOCKING_SYNC sleep query; do cmp -s "$S" "$D/r/$v.cpp" && echo "$v: no change made"; done
for v in repro sched_SPIN sched_YIELD sched_BLOCKING_SYNC sleep query; do (cd "$D/r" && nvcc -O2 -std=c++17 $v.cpp -lcuda -o $v) || echo "$v did not build" & done
wait
for round in 1 2 3; do
  line="round $round: replay $(summary) | reproducer $(median "$D/r/repro")"
  for v in sched_SPIN sched_YIELD sched_BLOCKING_SYNC sleep query; do line="$line | $v $(median "$D/r/$v")"; done
  echo "$line"
done
