#!/usr/bin/env bash
# repro_ramp.sh RR-TUI DIR: the softmax reproducer's gap to replay holds with L2 flushed on both
# sides (repro_l2.sh), so it is not the cache state alone. Here: the samples themselves, in
# order, with the SM clock each one's probe measured: whether the reproducer's timing loop starts
# before the GPU has clocked up (it launches the kernel once before it, replay loads, checks and
# fingerprints first), by quartile of the run; both at 300 and 3000 repetitions, and the
# reproducer after 2000 untimed launches. Then Nsight Compute in application replay mode on both
# (launches 20-24): duration, SM clock, DRAM bytes, L2 hit rate, instructions, registers.
set -u
RR=$1 D=$2
source "$(dirname "$0")/repro_lib.sh"
probe_record
S="$D/r/repro.cpp"
# Every sample on stderr: "S microseconds MHz".
sed -e 's|^        if (probe\[1\]) t.mhz.push_back(.*$|&\n        std::fprintf(stderr, "S %.3f %.0f\\n", ms * 1000.0, probe[1] ? double(probe[0]) * 1e3 / double(probe[1]) : 0.0);|' "$S" >"$D/r/repro_dump.cpp"
# The same after 2000 untimed restore+launch pairs (the GPU busy for about half a second).
sed -e 's|^        Timings t = time_launches(o.repetitions, restore, launch, stream);$|        time_launches(2000, restore, launch, stream);\n&|' "$D/r/repro_dump.cpp" >"$D/r/repro_hot.cpp"
sed -e 's/uint64_t timeout_ns = 1000000000ull;/uint64_t timeout_ns = 1000000ull;/' "$S" >"$D/r/repro_ncu.cpp"
grep -q 'std::fprintf(stderr, "S' "$D/r/repro_dump.cpp" || echo "dump: pattern not found"
grep -q 'time_launches(2000' "$D/r/repro_hot.cpp" || echo "hot: pattern not found"
for v in repro_dump repro_hot repro_ncu; do (cd "$D/r" && nvcc -O2 -std=c++17 $v.cpp -lcuda -o $v) || echo "$v did not build" & done
wait
quartiles() {
  python3 -c 'import sys, statistics as st
rows = [l.split() for l in sys.stdin if l.strip()]
us = [float(r[0]) for r in rows]; mhz = [float(r[1]) for r in rows]
n = len(us); q = max(1, n // 4)
parts = ["q%d %.3f us @%.0f MHz" % (i + 1, st.median(us[i*q:(i+1)*q]), st.median(mhz[i*q:(i+1)*q])) for i in range(4)]
print("median %.3f, min clock %.0f MHz, first 5: %s | %s" % (st.median(us), min(mhz), " ".join("%.2f@%.0f" % (a, b) for a, b in zip(us[:5], mhz[:5])), ", ".join(parts)))'
}
replay_samples() {
  "$RR" replay "$J" --json --repetitions "$1" 2>/dev/null | python3 -c 'import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e.get("event") == "rep":
        print(e["kernel_ns"] / 1e3, e.get("clock_mhz") or 0)'
}
repro_samples() { "$1" --repetitions "$2" 2>&1 >/dev/null | awk '$1 == "S" {print $2, $3}'; }
for round in 1 2; do
  for n in 300 3000; do
    echo "round $round, $n: replay     $(replay_samples $n | quartiles)"
    echo "round $round, $n: reproducer $(repro_samples "$D/r/repro_dump" $n | quartiles)"
  done
  echo "round $round, 300 after 2000 untimed: reproducer $(repro_samples "$D/r/repro_hot" 300 | quartiles)"
done
[ -n "${NO_NCU:-}" ] && exit 0
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum,launch__registers_per_thread
NCU=(timeout 120 ncu --replay-mode application --cache-control none --clock-control none --metrics "$M" --kernel-name regex:softmax --launch-skip 20 --launch-count 5 --csv)
"${NCU[@]}" "$D/r/repro_ncu" --repetitions 30 >"$D/ncu-repro.csv" 2>"$D/ncu-repro.err"
"${NCU[@]}" "$RR" replay "$J" --events-only --repetitions 30 >"$D/ncu-replay.csv" 2>"$D/ncu-replay.err"
for f in repro replay; do
  echo "ncu, $f:"
  python3 - "$D/ncu-$f.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows or "Metric Name" not in rows[0]:
    print("  no rows"); sys.exit()
head = rows[0]
name, value, unit = head.index("Metric Name"), head.index("Metric Value"), head.index("Metric Unit")
got = collections.defaultdict(list)
for r in rows[1:]:
    got[(r[name], r[unit])].append(r[value])
for (m, u), vs in got.items():
    print("  %s (%s): %s" % (m, u, " ".join(vs)))
PY
  grep -E "ERROR|==PROF== Disconnected|No kernels" "$D/ncu-$f.err" | head -3
done
