#!/usr/bin/env bash
# repro_gap.sh RR-TUI DIR: why a cuBLAS GEMM's reproducer times 4–7 % slower than its replay
# (KERNELS=REGEX picks another of torch_ops.py's kernels, e.g. KERNELS=SoftMax).
# Records torch_ops.py's first GEMM, then times, two rounds each: replay (its summary: median
# and samples discarded as throttled), replay --events-only, the reproducer as written, and the
# reproducer with one untimed launch before each timed one (the kernel's own reads warm L2), and
# the reproducer restoring on the kernel's stream as replay does.
# Then Nsight Compute, caches and clocks left alone (--cache-control none --clock-control none),
# on 8 launches of each: duration, DRAM bytes read, L2 hit rate, SM clock. Run on the GPU
# machine: bash tests/gpu/probes/repro_gap.sh .gpu-build/rr-tui $OUT/gap
set -u
RR=$1 D=$2
REPS=${REPS:-300}
KERNELS=${KERNELS:-gemm|xmma}
mkdir -p "$D"
"$RR" record --dir "$D/rec" --kernels "$KERNELS" -- python3 tests/gpu/samples/torch_ops.py >"$D/record.txt" 2>&1 || { tail "$D/record.txt"; exit 1; }
J=$(ls "$D"/rec/*.json | grep -v report | head -n 1)
"$RR" inspect "$J" >"$D/inspect.txt" 2>&1
"$RR" repro "$J" --out "$D/r" --force >/dev/null || exit 1
build() { (cd "$D/r" && nvcc -O2 -std=c++17 "$1" -lcuda -o "$2"); }
build repro.cpp repro || exit 1
# Warm: the kernel once, untimed, after each restore (GEMM with beta 0 rewrites the same output).
sed -e 's/^        restore();$/        restore();\n        launch();\n        CHECK(cuStreamSynchronize(stream));/' \
    "$D/r/repro.cpp" >"$D/r/repro_warm.cpp"
# The input restored once, before the first launch only (a kernel whose output is not its
# input computes the same every time): whether the restore's copies are what differs.
sed -e 's/^        restore();$/        if (r == 0) restore();/' "$D/r/repro.cpp" >"$D/r/repro_once.cpp"
# Under ncu, a blocking kernel would wait out its 1 s timeout: make it 1 ms.
sed -e 's/uint64_t timeout_ns = 1000000000ull;/uint64_t timeout_ns = 1000000ull;/' "$D/r/repro.cpp" >"$D/r/repro_ncu.cpp"
# The restore queued on the kernel's stream (cuMemcpyDtoDAsync), as replay restores.
sed -e 's/CHECK(cuMemcpyDtoD(c.addr, pristine + off, c.size));/CHECK(cuMemcpyDtoDAsync(c.addr, pristine + off, c.size, RR_STREAM));/' \
    -e 's/^struct Restorer {/static CUstream RR_STREAM = nullptr;\nstruct Restorer {/' \
    -e 's/^std::vector<double> time_launches(unsigned n, const Restorer \&restore, Launcher \&launch, CUstream stream) {/&\n    RR_STREAM = stream;/' \
    "$D/r/repro.cpp" >"$D/r/repro_async.cpp"
# Every SM woken (an empty kernel on 4 blocks per SM, waited for) after each restore: SMs idle
# during the restore's copies against the data the kernel reads.
sed -e 's/^        \*flag = 0;$/        *flag = 1;\n        CHECK(cuLaunchKernel(block_fn, 1056, 1, 1, 128, 1, 1, 0, stream, block_args, nullptr));\n        CHECK(cuStreamSynchronize(stream));\n        *flag = 0;/' \
    "$D/r/repro.cpp" >"$D/r/repro_wake.cpp"
# The first recorded segment copied again after each restore (the restore copies in address
# order; the kernel reads the first segment, which the later 86 MiB may push out of L2).
sed -e 's/^        CHECK(cuCtxSynchronize());$/        if (pristine \&\& N_COPY \&\& !COPY[0].host) CHECK(cuMemcpyDtoD(COPY[0].addr, pristine, COPY[0].size));\n        CHECK(cuCtxSynchronize());/' \
    "$D/r/repro.cpp" >"$D/r/repro_first.cpp"
# As replay's loop: a one-thread 20 µs spin queued after the stop event (replay's clock probe;
# here rr_block on a flag never set, with a 20 µs timeout).
sed -e 's/^        CHECK(cuEventRecord(stop, stream));$/&\n        { static uint64_t spin_ns = 20000; static CUdeviceptr never = 0; if (!never) { unsigned *w; CHECK(cuMemHostAlloc((void **)\&w, 4, CU_MEMHOSTALLOC_DEVICEMAP)); *w = 0; CHECK(cuMemHostGetDevicePointer(\&never, w, 0)); } void *a[] = {\&never, \&spin_ns}; CHECK(cuLaunchKernel(block_fn, 1, 1, 1, 1, 1, 1, 0, stream, a, nullptr)); }/' \
    "$D/r/repro.cpp" >"$D/r/repro_probe.cpp"
# The release 10 µs later (replay's host takes that much longer between hold and release).
sed -e 's/^        \*flag = 1;$/        { auto t0 = std::chrono::steady_clock::now(); while (std::chrono::steady_clock::now() - t0 < std::chrono::microseconds(10)) {} }\n        *flag = 1;/' \
    -e 's/^#include <vector>$/#include <vector>\n#include <chrono>/' \
    "$D/r/repro.cpp" >"$D/r/repro_late.cpp"
build repro_probe.cpp repro_probe || echo "the probe variant did not build"
build repro_late.cpp repro_late || echo "the late-release variant did not build"
build repro_wake.cpp repro_wake || echo "the wake variant did not build"
build repro_first.cpp repro_first || echo "the first-segment variant did not build"
build repro_warm.cpp repro_warm || echo "the warm variant did not build"
build repro_async.cpp repro_async || echo "the async variant did not build"
build repro_ncu.cpp repro_ncu || echo "the ncu variant did not build"
build repro_once.cpp repro_once || echo "the restore-once variant did not build"
summary() {
  "$RR" replay "$J" --json --repetitions "$REPS" "$@" 2>/dev/null | python3 -c 'import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e.get("event") == "summary":
        print("%.3f (discarded %s, clock %s MHz)" % (e["kernel_ns"]["median"] / 1e3, e.get("discarded"), e.get("clock_mhz", {}).get("median") if isinstance(e.get("clock_mhz"), dict) else e.get("clock_mhz")))'
}
median() { "$@" --repetitions "$REPS" 2>&1 | grep -oE 'median [0-9.]+ us' | grep -oE '[0-9.]+'; }
for round in 1 2; do
  echo "round $round: replay $(summary)"
  echo "round $round: replay --events-only $(summary --events-only)"
  echo "round $round: reproducer $(median "$D/r/repro")"
  echo "round $round: reproducer, warmed by an untimed launch $(median "$D/r/repro_warm")"
  echo "round $round: reproducer, restore on the kernel's stream $(median "$D/r/repro_async")"
  echo "round $round: reproducer, every SM woken after the restore $(median "$D/r/repro_wake")"
  echo "round $round: reproducer, the first segment copied again last $(median "$D/r/repro_first")"
  echo "round $round: reproducer, a 20 µs one-thread spin after the stop event $(median "$D/r/repro_probe")"
  echo "round $round: reproducer, released 10 µs later $(median "$D/r/repro_late")"
  echo "round $round: reproducer, the input restored once only $(median "$D/r/repro_once")"
done
M=gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,sm__cycles_elapsed.avg.per_second
NCU=(ncu --cache-control none --clock-control none --metrics "$M" --kernel-name regex:"$KERNELS" --launch-skip 4 --launch-count 8 --csv)
[ -n "${NO_NCU:-}" ] && exit 0
"${NCU[@]}" "$D/r/repro_ncu" --repetitions 16 >"$D/ncu-repro.csv" 2>"$D/ncu-repro.err"
"${NCU[@]}" "$RR" replay "$J" --events-only --repetitions 16 >"$D/ncu-replay.csv" 2>"$D/ncu-replay.err"
for f in repro replay; do
  echo "ncu, $f:"
  python3 - "$D/ncu-$f.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows:
    print("  no rows"); sys.exit()
head = rows[0]
name, value = head.index("Metric Name"), head.index("Metric Value")
unit = head.index("Metric Unit")
got = collections.defaultdict(list)
for r in rows[1:]:
    got[(r[name], r[unit])].append(r[value])
for (m, u), vs in got.items():
    print("  %s (%s): %s" % (m, u, " ".join(vs)))
PY
done
