#!/usr/bin/env bash
# Regenerate record-fixtures/ on the GPU machine (nvcc, a GPU, python3 with xxhash):
#   bash tests/gpu/make_fixtures.sh OUTDIR
# then copy OUTDIR/* to record-fixtures/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(realpath -m "${1:?usage: make_fixtures.sh OUTDIR}")
work=$(mktemp -d)
nvcc -cubin -arch=sm_90 -O3 -o "$work/kernels.cubin" "$here/kernels.cu"
nvcc -O2 -o "$work/record_harness" "$here/record_harness.cu" -lcuda
export RR_CUBIN="$work/kernels.cubin"
rm -rf "$out" && mkdir -p "$out"
"$work/record_harness" llvm "$out/llvm-two-kernels" two-kernels 4096
"$work/record_harness" llvm "$out/llvm-no-report" extras 32768 --no-report
"$work/record_harness" rrtui "$out/rrtui-stencil3d" 16
for d in "$out"/*/; do python3 "$here/name_records.py" "$d"; done
