#!/usr/bin/env bash
# repro_streams.sh RR-TUI DIR: the softmax reproducer's kernel time sits about 0.15 µs above
# replay's in every process (repro_hist.sh: both distributions have the same modes, shifted),
# and no change to the reproducer's restore moved it (repro_globals.sh). What else differs is
# the context: replay creates a second stream and loads a second module (the device verifier's
# fingerprints) after the kernel's stream, and more allocations. Three rounds of 300 each:
#  - replay, and replay --verify-on-host (no device verifier: no second stream or module);
#  - the reproducer, and with a second stream created after the kernel's (RR_EXTRA_STREAMS=1),
#    or before it (RR_STREAMS_BEFORE=1);
#  - both with CUDA_DEVICE_MAX_CONNECTIONS=1 (one hardware queue for every stream).
set -u
RR=$1 D=$2
REPS=${REPS:-300}
source "$(dirname "$0")/repro_lib.sh"
probe_record
EXTRA='{ const char *e = getenv("RR_EXTRA_STREAMS"); for (int i = 0; e \&\& i < atoi(e); i++) { CUstream s; CHECK(cuStreamCreate(\&s, CU_STREAM_NON_BLOCKING)); } }'
BEFORE='{ const char *e = getenv("RR_STREAMS_BEFORE"); for (int i = 0; e \&\& i < atoi(e); i++) { CUstream s; CHECK(cuStreamCreate(\&s, CU_STREAM_NON_BLOCKING)); } }'
sed -e "s/^    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));\$/    $BEFORE\n&\n    $EXTRA/" \
    -e 's/^#include <vector>$/&\n#include <cstdlib>/' "$D/r/repro.cpp" >"$D/r/streams.cpp"
grep -q RR_EXTRA_STREAMS "$D/r/streams.cpp" || echo "streams: pattern not found"
(cd "$D/r" && nvcc -O2 -std=c++17 streams.cpp -lcuda -o streams) || exit 1
for round in 1 2 3; do
  echo "round $round: replay $(summary) | --verify-on-host $(summary --verify-on-host) | reproducer $(median "$D/r/streams") | +1 stream after $(RR_EXTRA_STREAMS=1 median "$D/r/streams") | +1 before $(RR_STREAMS_BEFORE=1 median "$D/r/streams") | one connection: replay $(CUDA_DEVICE_MAX_CONNECTIONS=1 summary) reproducer $(CUDA_DEVICE_MAX_CONNECTIONS=1 median "$D/r/streams")"
done
