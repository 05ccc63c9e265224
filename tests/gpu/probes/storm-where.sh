#!/usr/bin/env bash
# storm-where.sh RR ROUNDS: where a launch storm's time goes with the recorder loaded, variants
# interleaved (storm.py; STORM_PIN=gpu pins them, which did not narrow the spread on the GPU
# machine): the recorder (interposed launches), the preloaded C hook alone, the hook with CUPTI
# subscribed as the recorder subscribes (floor-rr: the recorder's structure without its code),
# and that CUPTI floor alone. Logs to $OUT (or /tmp).
set -u
RR=$(realpath "$1"); ROUNDS=${2:-25}
OUTDIR=${OUT:-/tmp}; W=$(mktemp -d)
CUDA=${CUDA_HOME:-/usr/local/cuda}
nvcc -O2 -arch=sm_90 -o "$W/bench_record" tests/gpu/samples/bench_record.cu
gcc -O2 -shared -fPIC -o "$W/libcupti_probe.so" tests/gpu/probes/cupti_probe.c -I"$CUDA/include" -I"$CUDA/extras/CUPTI/include" -L"$CUDA/lib64" -lcupti -lcuda
gcc -O2 -shared -fPIC -o "$W/libprocaddr_hook.so" tests/gpu/probes/procaddr_hook.c -I"$CUDA/include" -ldl
P="CUDA_INJECTION64_PATH=$W/libcupti_probe.so,LD_LIBRARY_PATH=$CUDA/lib64,PROBE_MODE"
H="LD_PRELOAD=$W/libprocaddr_hook.so"
{
  echo "200000 launches of a ~3 us kernel, interleaved rounds:"
  python3 tests/gpu/probes/storm.py "$ROUNDS" "$W/bench_record" 200000 4096 plain=: \
    "rr-tui=:$RR record --dir $W/storm --overwrite --kernels ^nothing$ --" \
    "hook=$H:" "hook+floor-rr=$H,$P=floor-rr:" "floor-rr=$P=floor-rr:"
} 2>&1 | tee "$OUTDIR/storm-where.txt"
