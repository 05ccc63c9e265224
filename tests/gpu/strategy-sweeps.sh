#!/usr/bin/env bash
# Issue 17's strategy benchmark on the GPU machine: six exhaustive sweeps of recorded kernels,
# 1 024–2 048 configurations each (grid-stride kernels, whose recorded ThreadsLimits skip some;
# a tiled kernel and a 3-D stencil at the grid that covers their elements), then tests/gpu/compare-strategies.py replays them
# with --simulate, SEEDS seeds per strategy, on every core.
#   bash tests/gpu/strategy-sweeps.sh [rr-tui] [SEEDS]      (sweeps and table under $OUT)
set -u
RR=$(realpath "${1:-target/release/rr-tui}")
SEEDS=${2:-20}
OUTDIR=${OUT:-/tmp/rr-strategies}
mkdir -p "$OUTDIR"
W=$(mktemp -d)
nvcc -cubin -arch=sm_90 -O3 -o "$W/kernels.cubin" tests/gpu/kernels.cu || exit 1
nvcc -O2 -o "$W/harness" tests/gpu/record_harness.cu -lcuda || exit 1
nvcc -O3 -arch=sm_90 -DSLOW=4 -o "$W/ab_prog" tests/gpu/samples/ab_kernel.cu || exit 1
export RR_CUBIN="$W/kernels.cubin"
rec() { local d=$1; shift; "$W/harness" "$@" >/dev/null 2>&1 && python3 tests/gpu/name_records.py "$d" >/dev/null 2>&1; }
rec "$W/big" llvm "$W/big" two-kernels 16777216 || exit 1
rec "$W/small" llvm "$W/small" two-kernels 1048576 || exit 1
"$RR" record --dir "$W/ab" -- "$W/ab_prog" >/dev/null 2>&1 || exit 1
find_json() { python3 - "$1" "$2" <<'PY'
import json, os, sys
d, name = sys.argv[1], sys.argv[2]
for f in sorted(os.listdir(d)):
    if f.endswith(".json") and json.load(open(os.path.join(d, f))).get("Name") == name:
        print(os.path.join(d, f)); break
PY
}
GB="--grid 16..1024:16 --block 32..1024:32"
cases=()
sweep() {  # NAME DESCRIPTOR EXTRA-FLAGS AXES
  local name=$1 desc=$2 extra=$3 axes=$4 t0
  t0=$(date +%s.%N)
  "$RR" tune "$desc" $axes $extra --samples 5 --hot --json-out "$OUTDIR/$name.json" >/dev/null 2>&1
  python3 - "$OUTDIR/$name.json" "$t0" <<'PY'
import json, sys, time
r = json.load(open(sys.argv[1])); n = len(r["trials"])
ok = sum(t["status"] == "ok" for t in r["trials"])
print(f"{sys.argv[1].rsplit('/', 1)[-1]}: {n} configurations, {ok} verified, {time.time() - float(sys.argv[2]):.1f} s, best {r['best']['kernel_ns']['median']:.0f} ns, speed-up {r.get('speedup') or 0:.2f}x")
PY
  cases+=("$OUTDIR/$name.json:$desc:$axes")
}
sweep saxpy-16M "$(find_json "$W/big" rr_saxpy)" "" "$GB"
sweep scale-16M "$(find_json "$W/big" rr_scale_global)" "" "$GB"
sweep saxpy-1M "$(find_json "$W/small" rr_saxpy)" "" "$GB"
sweep scale-1M "$(find_json "$W/small" rr_scale_global)" "" "$GB"
sweep stencil3d "$(ls record-fixtures/rrtui-v2-stencil3d/*.json | head -n 1)" "" "--grid cover --block 8..64:8x1..16x1..4 --shared-mem 0,16384,32768,49152"
sweep ab-scale "$(ls "$W"/ab/*.json | head -n 1)" "" "--grid cover --block 32..1024:32 --shared-mem 0..31744:1024"
python3 tests/gpu/compare-strategies.py "$RR" "$SEEDS" "${cases[@]}" | tee "$OUTDIR/strategies.txt"
