#!/usr/bin/env bash
# repro_hist.sh RR-TUI DIR: the softmax reproducer's and replay's kernel times as histograms
# (32 ns bins, the events' resolution here), 1000 samples each, two rounds: whether the gap is a
# shift of the whole distribution or a different mix of two modes (the first samples of
# repro_ramp.sh alternated between about 5.0 and 5.4 us in the reproducer). Also the samples'
# host-side period: replay's restore+host time against the reproducer's.
set -u
RR=$1 D=$2
N=${N:-1000}
source "$(dirname "$0")/repro_lib.sh"
probe_record
sed -e 's|^        if (probe\[1\]) t.mhz.push_back(.*$|&\n        std::fprintf(stderr, "S %.3f %.0f\\n", ms * 1000.0, probe[1] ? double(probe[0]) * 1e3 / double(probe[1]) : 0.0);|' "$D/r/repro.cpp" >"$D/r/repro_dump.cpp"
(cd "$D/r" && nvcc -O2 -std=c++17 repro_dump.cpp -lcuda -o repro_dump) || exit 1
hist() {
  python3 -c 'import sys, collections, statistics as st
us = [float(l.split()[0]) for l in sys.stdin if l.strip()]
b = collections.Counter(round(u / 0.032) for u in us)
lo, hi = min(b), max(b)
print("  n %d median %.3f mean %.3f p10 %.3f p25 %.3f p75 %.3f min %.3f" % (len(us), st.median(us), st.mean(us), sorted(us)[len(us)//10], sorted(us)[len(us)//4], sorted(us)[3*len(us)//4], min(us)))
for k in range(lo, hi + 1):
    if b[k] * 200 >= len(us):
        print("  %.3f %4d %s" % (k * 0.032, b[k], "#" * (b[k] * 150 // len(us))))'
}
for round in 1 2; do
  echo "round $round: replay"
  "$RR" replay "$J" --json --repetitions "$N" 2>/dev/null | python3 -c 'import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e.get("event") == "rep":
        print(e["kernel_ns"] / 1e3)' | hist
  echo "round $round: reproducer"
  "$D/r/repro_dump" --repetitions "$N" 2>&1 >/dev/null | awk '$1 == "S" {print $2}' | hist
done
