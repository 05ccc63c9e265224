#!/usr/bin/env bash
# repro_delay.sh RR-TUI DIR: does the softmax reproducer's kernel time depend on how long the
# host takes around the held launch? Replay's host path (Rust, an NVTX range, the watchdog) is
# not the reproducer's. The reproducer waits RR_D1 µs (spinning) after each restore before it
# queues the blocking kernel, and RR_D2 µs after queuing the timed launch before it releases it.
# Three rounds of replay and the reproducer at D1, D2 in {0, 5, 15, 40, 100}.
set -u
RR=$1 D=$2
REPS=${REPS:-1000}
source "$(dirname "$0")/repro_lib.sh"
probe_record
SPIN='{ static const char *e = getenv("ENV"); static long us = e ? atol(e) : 0; auto t0 = std::chrono::steady_clock::now(); while (std::chrono::steady_clock::now() - t0 < std::chrono::microseconds(us)) {} }'
sed -e "s/^        restore();\$/&\n        ${SPIN//ENV/RR_D1}/" -e "s/^        \*flag = 1;\$/        ${SPIN//ENV/RR_D2}\n&/" \
    -e 's/^#include <vector>$/&\n#include <chrono>\n#include <cstdlib>/' "$D/r/repro.cpp" >"$D/r/delay.cpp"
[ "$(grep -c steady_clock::now "$D/r/delay.cpp")" = 2 ] || echo "delay: patterns not found"
(cd "$D/r" && nvcc -O2 -std=c++17 delay.cpp -lcuda -o delay) || exit 1
for round in 1 2 3; do
  line="round $round: replay $(summary) | reproducer"
  for d in 0 5 15 40 100; do line="$line D1=$d $(RR_D1=$d median "$D/r/delay")"; done
  line="$line |"
  for d in 5 15 40 100; do line="$line D2=$d $(RR_D2=$d median "$D/r/delay")"; done
  echo "$line"
done
