#!/usr/bin/env bash
# Measurements behind the recorder's graph, host-memory and texture support and its launch
# overhead (tests/gpu/probes/README.md). Run on the GPU machine from the repository root:
#   bash tests/gpu/probes/explore.sh [target/release/rr-tui]
# Logs go to $OUT (or /tmp/rr-probes).
set -u
RR=$(realpath "${1:-target/release/rr-tui}" 2>/dev/null)
O=${OUT:-/tmp/rr-probes}; mkdir -p "$O"
W=$(mktemp -d)
CUDA=${CUDA_HOME:-/usr/local/cuda}
INC="-I$CUDA/include -I$CUDA/extras/CUPTI/include"
LIB="-L$CUDA/lib64 -L$CUDA/extras/CUPTI/lib64"
export LD_LIBRARY_PATH="$CUDA/lib64:$CUDA/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
L="$O/explore.log"
{
echo "== environment"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1
ls $CUDA/extras/CUPTI/lib64/libcupti.so* $CUDA/lib64/libcupti.so* 2>&1 | head -3
python3 -c 'import torch, jax; print("torch", torch.__version__, "jax", jax.__version__)' 2>&1 | tail -1
echo "== build"
gcc -O2 -shared -fPIC -o $W/libcupti_probe.so tests/gpu/probes/cupti_probe.c $INC $LIB -lcupti -lcuda || echo "BUILD FAIL probe"
gcc -O2 -shared -fPIC -o $W/libprocaddr_hook.so tests/gpu/probes/procaddr_hook.c $INC -ldl || echo "BUILD FAIL hook"
nvcc -O2 -arch=sm_90 -o $W/graph_probe tests/gpu/probes/graph_probe.cu $INC $LIB -lcuda -lcupti || echo "BUILD FAIL graph_probe"
for s in graph_api host_memory textures bench_record; do nvcc -O2 -arch=sm_90 -o $W/$s tests/gpu/samples/$s.cu || echo "BUILD FAIL $s"; done
echo "== graph probe"; $W/graph_probe
echo "== samples: plain vs traced"
} >"$L" 2>&1
run_traced() { # name cmd...
  local name=$1; shift
  local p t
  p=$(timeout 300 "$@" 2>>"$L" | tail -1)
  t=$(PROBE_MODE=trace PROBE_LOG="$O/trace-$name.txt" CUDA_INJECTION64_PATH=$W/libcupti_probe.so timeout 300 "$@" 2>>"$L" | tail -1)
  echo "$name: plain $p traced $t" >>"$L"
}
if [ -z "${SKIP_SAMPLES:-}" ]; then
run_traced graph_api $W/graph_api
run_traced host_memory $W/host_memory
run_traced textures $W/textures
run_traced torch_capture python3 tests/gpu/samples/torch_graphs.py capture
run_traced torch_compile python3 tests/gpu/samples/torch_graphs.py compile
run_traced jax python3 tests/gpu/samples/jax_graphs.py
# Several traces into one file each (at most 8 files come back).
cat "$O"/trace-graph_api.txt "$O"/trace-host_memory.txt "$O"/trace-textures.txt > "$O/trace-cuda.txt" 2>/dev/null
rm -f "$O"/trace-graph_api.txt "$O"/trace-host_memory.txt "$O"/trace-textures.txt
fi
{ echo "== JAX twice, plain (determinism)"; for i in 1 2; do python3 tests/gpu/samples/jax_graphs.py 2>/dev/null | tail -1; done; } >>"$L" 2>&1
{
P="CUDA_INJECTION64_PATH=$W/libcupti_probe.so"
echo "== launch storm, launch-bound: 200000 launches of a ~3 us kernel, 7 interleaved rounds"
python3 tests/gpu/probes/storm.py 7 $W/bench_record 200000 4096 plain=: floor-none=PROBE_MODE=floor-none,$P: \
  floor-launch=PROBE_MODE=floor-launch,$P: floor-symbol=PROBE_MODE=floor-symbol,$P: procaddr=LD_PRELOAD=$W/libprocaddr_hook.so: \
  "rr-tui=:$RR record --dir $W/rec --overwrite --kernels ^nothing$ --"
HOOK_VERBOSE=1 LD_PRELOAD=$W/libprocaddr_hook.so $W/bench_record storm 1000 2>&1 | sort | uniq -c | sort -rn | head -20
echo "== GPU-bound: 50000 launches over 8M words, 5 rounds"
python3 tests/gpu/probes/storm.py 5 $W/bench_record 50000 8388608 plain=: floor-launch=PROBE_MODE=floor-launch,$P: \
  "rr-tui=:$RR record --dir $W/rec --overwrite --kernels ^nothing$ --"
} >>"$L" 2>&1
echo "log: $L"; tail -n 40 "$L"
