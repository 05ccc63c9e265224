#!/usr/bin/env bash
# repro_vs_replay.sh RR-TUI JSON DIR: where a reproducer's kernel time parts from replay's.
# Times the same instance, two rounds each, as: replay (hot, the default), replay --events-only
# (no blocking kernel, no clock probe), replay --cold (L2 flushed before each sample), the
# reproducer as written, and the reproducer with its restore queued on the kernel's stream
# (cuMemcpyDtoDAsync) instead of synchronous copies. Prints one median (µs) per line.
# Run on the GPU machine: bash tests/gpu/probes/repro_vs_replay.sh .gpu-build/rr-tui X.json /tmp/rv
set -u
RR=$1 J=$2 D=$3
REPS=${REPS:-300}
mkdir -p "$D"
"$RR" inspect "$J" >"$D/inspect.txt" 2>&1
"$RR" repro "$J" --out "$D/r" --force >/dev/null || exit 1
build() { (cd "$D/r" && nvcc -O2 -std=c++17 "$1" -lcuda -o "$2"); }
build repro.cpp repro || exit 1
# The restore on the timing stream: every synchronous device copy becomes an async one on it.
sed -e 's/CHECK(cuMemcpyDtoD(c.addr, pristine + off, c.size));/CHECK(cuMemcpyDtoDAsync(c.addr, pristine + off, c.size, RR_STREAM));/' \
    -e 's/^struct Restorer {/static CUstream RR_STREAM = nullptr;\nstruct Restorer {/' \
    -e 's/^std::vector<double> time_launches(unsigned n, const Restorer \&restore, Launcher \&launch, CUstream stream) {/&\n    RR_STREAM = stream;/' \
    "$D/r/repro.cpp" >"$D/r/repro_async.cpp"
build repro_async.cpp repro_async || echo "the async variant did not build"
replay() {
  "$RR" replay "$J" --json --repetitions "$REPS" "$@" 2>/dev/null | python3 -c 'import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e.get("event") == "summary": print("%.3f" % (e["kernel_ns"]["median"] / 1e3))'
}
median() { "$@" --repetitions "$REPS" 2>&1 | grep -oE 'median [0-9.]+ us' | grep -oE '[0-9.]+'; }
for round in 1 2; do
  echo "round $round: replay $(replay)"
  echo "round $round: replay --events-only $(replay --events-only)"
  echo "round $round: replay --cold $(replay --cold)"
  echo "round $round: reproducer $(median "$D/r/repro")"
  [ -x "$D/r/repro_async" ] && echo "round $round: reproducer, restore on the stream $(median "$D/r/repro_async")"
done
