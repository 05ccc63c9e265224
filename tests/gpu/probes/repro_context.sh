#!/usr/bin/env bash
# repro_context.sh RR-TUI DIR: under Nsight Compute softmax runs identically from the
# reproducer and from replay (repro_ncu.sh: same duration, launch statistics, instructions);
# only the CUDA-event interval around it differs, by ~0.15 µs. What replay's process has that
# the reproducer's does not, added to the reproducer one at a time (three rounds each):
#  pinned:  36 page-locked host buffers of 4 MiB (replay's staging pool, kept for the session);
#  modules: a second module loaded (the timing PTX again; replay loads the device verifier's);
#  all:     both, the pristine copy 4 KiB-aligned and a 100 MB buffer after it (the flush
#           buffer), and a second stream.
set -u
RR=$1 D=$2
REPS=${REPS:-1000}
source "$(dirname "$0")/repro_lib.sh"
probe_record
S="$D/r/repro.cpp"
PINNED='s/^    reserve_and_map(dev);$/&\n    for (int i = 0; i < 36; i++) { void *p; CHECK(cuMemHostAlloc(\&p, 4u << 20, 0)); }/'
MODULE='s/^    CHECK(cuModuleGetFunction(\&clock_fn, bm, "rr_clock"));$/&\n    { CUmodule m2; CHECK(cuModuleLoadData(\&m2, TIMING_PTX)); }/'
ALIGN='s/if (!COPY\[i\].host) \(device_bytes\|off\) += COPY\[i\].size;/if (!COPY[i].host) \1 += (COPY[i].size + 4095) \& ~size_t(4095);/; s/^            off += c.size;$/            off += (c.size + 4095) \& ~size_t(4095);/'
FLUSH='s/^        } else {$/            { CUdeviceptr fb; CHECK(cuMemAlloc(\&fb, 100u << 20)); }\n&/'
STREAM2='s/^    CHECK(cuStreamCreate(\&stream, CU_STREAM_NON_BLOCKING));$/&\n    { CUstream s2; CHECK(cuStreamCreate(\&s2, CU_STREAM_NON_BLOCKING)); }/'
sed -e "$PINNED" "$S" >"$D/r/pinned.cpp"
sed -e "$MODULE" "$S" >"$D/r/modules.cpp"
sed -e "$PINNED" -e "$MODULE" -e "$ALIGN" -e "$FLUSH" -e "$STREAM2" "$S" >"$D/r/all.cpp"
for v in pinned modules all; do cmp -s "$S" "$D/r/$v.cpp" && echo "$v: no change made"; done
echo "all: $(diff "$S" "$D/r/all.cpp" | grep -c '^>') lines added or changed (7 expected)"
for v in repro pinned modules all; do (cd "$D/r" && nvcc -O2 -std=c++17 $v.cpp -lcuda -o $v) || echo "$v did not build" & done
wait
for round in 1 2 3; do
  echo "round $round: replay $(summary) | reproducer $(median "$D/r/repro") | pinned $(median "$D/r/pinned") | modules $(median "$D/r/modules") | all $(median "$D/r/all")"
done
