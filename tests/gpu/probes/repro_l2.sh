#!/usr/bin/env bash
# repro_l2.sh RR-TUI DIR: why the softmax reproducer times 3-5 % slower than its replay, after
# repro_gap.sh found that the L2 state the restore leaves differs. Records torch_ops.py's
# SoftMax (KERNELS=REGEX for another), then, two rounds each:
#  - replay and the reproducer as written;
#  - both with L2 flushed before each sample (replay --cold; the reproducer with a memset over
#    twice the L2 after each restore): equal times here say the gap is the cache state only;
#  - the reproducer with 1 GiB / 257 MiB allocated before anything else, which moves every
#    later allocation in physical memory: whether placement, not the restore, makes the gap;
#  - the reproducer restoring its segments in reverse order.
# Then Nsight Compute in application replay mode (each pass a whole run, so the cache state is
# the program's own), caches and clocks left alone, on launches 20-24 of both: duration, DRAM
# bytes, L2 hit rate, instructions, registers. Run on the GPU machine.
set -u
RR=$1 D=$2
REPS=${REPS:-300}
KERNELS=${KERNELS:-SoftMax}
mkdir -p "$D"
"$RR" record --dir "$D/rec" --kernels "$KERNELS" -- python3 tests/gpu/samples/torch_ops.py >"$D/record.txt" 2>&1 || { tail "$D/record.txt"; exit 1; }
J=$(ls "$D"/rec/*.json | grep -v report | head -n 1)
"$RR" inspect "$J" | head -40
"$RR" repro "$J" --out "$D/r" --force >/dev/null || exit 1
build() { (cd "$D/r" && nvcc -O2 -std=c++17 "$1" -lcuda -o "$2") || echo "$1 did not build"; }
S="$D/r/repro.cpp"
sed -e 's/^        restore();$/        restore();\n        { static CUdeviceptr fl = 0; if (!fl) CHECK(cuMemAlloc(\&fl, 100u << 20)); CHECK(cuMemsetD8(fl, 0, 100u << 20)); CHECK(cuCtxSynchronize()); }/' "$S" >"$D/r/repro_cold.cpp"
sed -e 's/^    CHECK(cuCtxSetCurrent(ctx));$/&\n    { CUdeviceptr pad; CHECK(cuMemAlloc(\&pad, 1ull << 30)); }/' "$S" >"$D/r/repro_shift.cpp"
sed -e 's/^    CHECK(cuCtxSetCurrent(ctx));$/&\n    { CUdeviceptr pad; CHECK(cuMemAlloc(\&pad, 257ull << 20)); }/' "$S" >"$D/r/repro_shift2.cpp"
# Reverse restore order: walk the copies from the last (offsets computed up front).
sed -e 's/^        size_t off = 0;$/        size_t off = 0; std::vector<size_t> offs(N_COPY); for (size_t i = 0; i < N_COPY; i++) { offs[i] = off; if (!COPY[i].host) off += COPY[i].size; }/' \
    -e 's/^        for (size_t i = 0; i < N_COPY; i++) {$/        for (size_t k = N_COPY; k-- > 0;) { size_t i = k; off = offs[i];/' "$S" >"$D/r/repro_rev.cpp"
grep -c "offs\[i\]" "$D/r/repro_rev.cpp" >/dev/null || echo "reverse variant: pattern not found"
sed -e 's/uint64_t timeout_ns = 1000000000ull;/uint64_t timeout_ns = 1000000ull;/' "$S" >"$D/r/repro_ncu.cpp"
for v in repro repro_cold repro_shift repro_shift2 repro_rev repro_ncu; do build "$v.cpp" "$v" & done
wait
summary() {
  "$RR" replay "$J" --json --repetitions "$REPS" "$@" 2>/dev/null | python3 -c 'import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e.get("event") == "summary":
        print("%.3f (restore %.1f us, discarded %s)" % (e["kernel_ns"]["median"] / 1e3, e["restore_ns"]["median"] / 1e3, e.get("discarded")))'
}
median() { "$@" --repetitions "$REPS" 2>&1 | grep -oE 'median [0-9.]+ us' | grep -oE '[0-9.]+'; }
for round in 1 2; do
  echo "round $round: replay $(summary)"
  echo "round $round: reproducer $(median "$D/r/repro")"
  echo "round $round: replay --cold $(summary --cold)"
  echo "round $round: reproducer, L2 flushed after each restore $(median "$D/r/repro_cold")"
  echo "round $round: reproducer, 1 GiB allocated first $(median "$D/r/repro_shift")"
  echo "round $round: reproducer, 257 MiB allocated first $(median "$D/r/repro_shift2")"
  echo "round $round: reproducer, restored in reverse order $(median "$D/r/repro_rev")"
done
[ -n "${NO_NCU:-}" ] && exit 0
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,smsp__inst_executed.sum,launch__registers_per_thread,launch__grid_size,sm__cycles_elapsed.avg.per_second
NCU=(timeout 150 ncu --replay-mode application --cache-control none --clock-control none --metrics "$M" --kernel-name regex:"$KERNELS" --launch-skip 20 --launch-count 5 --csv)
"${NCU[@]}" "$D/r/repro_ncu" --repetitions 30 >"$D/ncu-repro.csv" 2>"$D/ncu-repro.err"
"${NCU[@]}" --target-processes all "$RR" replay "$J" --events-only --repetitions 30 >"$D/ncu-replay.csv" 2>"$D/ncu-replay.err"
for f in repro replay; do
  echo "ncu, $f:"; tail -n 3 "$D/ncu-$f.err"
  python3 - "$D/ncu-$f.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows:
    print("  no rows"); sys.exit()
head = rows[0]
name, value, unit = head.index("Metric Name"), head.index("Metric Value"), head.index("Metric Unit")
got = collections.defaultdict(list)
for r in rows[1:]:
    got[(r[name], r[unit])].append(r[value])
for (m, u), vs in got.items():
    print("  %s (%s): %s" % (m, u, " ".join(vs)))
PY
done
