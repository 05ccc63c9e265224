#!/usr/bin/env bash
# repro_ncu.sh RR-TUI DIR: Nsight Compute's launch statistics and occupancy for softmax's
# reproducer and replay (kernel replay mode, caches and clocks left alone, launches 10-12):
# whether the two launch the kernel differently (registers, shared memory configuration and
# so L1 size, cache configuration, waves), and its instructions and L1/L2 hit rates; then both
# again with CUDA_MODULE_LOADING=EAGER (plain timing, three rounds).
set -u
RR=$1 D=$2
source "$(dirname "$0")/repro_lib.sh"
probe_record
sed -e 's/uint64_t timeout_ns = 1000000000ull;/uint64_t timeout_ns = 1000000ull;/' "$D/r/repro.cpp" >"$D/r/repro_ncu.cpp"
(cd "$D/r" && nvcc -O2 -std=c++17 repro_ncu.cpp -lcuda -o repro_ncu && nvcc -O2 -std=c++17 repro.cpp -lcuda -o repro) || exit 1
cmp "$D/r/data/kernel.cubin" "$(ls "$D"/rec/images/* | head -n 1)" && echo "the reproducer's image is the record's"
M=smsp__inst_executed.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,gpu__time_duration.sum
NCU=(timeout 150 ncu --cache-control none --clock-control none --section LaunchStats --section Occupancy --metrics "$M" --kernel-name regex:softmax --launch-skip 10 --launch-count 3 --print-details all)
"${NCU[@]}" "$D/r/repro_ncu" --repetitions 20 >"$D/ncu-repro.txt" 2>&1
"${NCU[@]}" "$RR" replay "$J" --repetitions 20 >"$D/ncu-replay.txt" 2>&1
python3 - "$D/ncu-repro.txt" "$D/ncu-replay.txt" <<'PY'
import re, sys, collections
def table(path):
    got = collections.OrderedDict()
    for line in open(path, errors="replace"):
        m = re.match(r"\s{4,}(\S.*?\S)\s{2,}(\S+)?\s+([\d,.]+|\S+)\s*$", line)
        if m and not line.strip().startswith("=="):
            got.setdefault(m.group(1), []).append(m.group(3))
    return got
a, b = table(sys.argv[1]), table(sys.argv[2])
print("%-48s %-28s %s" % ("metric", "reproducer", "replay"))
for k in list(a) + [k for k in b if k not in a]:
    va, vb = " ".join(a.get(k, [])), " ".join(b.get(k, []))
    print("%-48s %-28s %s%s" % (k[:48], va[:28], vb[:40], "" if va == vb else "   <-"))
PY
tail -n 5 "$D/ncu-replay.txt"
summary() {
  "$RR" replay "$J" --json --repetitions 1000 2>/dev/null | python3 -c 'import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e.get("event") == "summary":
        print("%.3f" % (e["kernel_ns"]["median"] / 1e3))'
}
median() { "$@" --repetitions 1000 2>&1 | grep -oE 'median [0-9.]+ us' | grep -oE '[0-9.]+'; }
for round in 1 2 3; do
  echo "round $round: replay $(summary) reproducer $(median "$D/r/repro") | EAGER: replay $(CUDA_MODULE_LOADING=EAGER summary) reproducer $(CUDA_MODULE_LOADING=EAGER median "$D/r/repro")"
done
