#!/usr/bin/env bash
# Rebuild the committed PTX of rr-tui's own kernels (GPU machine: needs nvcc) into $1 (default:
# next to the sources), and check the leaf hash against its host reference. (nvcc 13.0 from PyPI's
# nvidia-cuda-nvcc, nvidia-cuda-crt and nvidia-nvvm 13.0 builds the same PTX without a GPU.)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-crates/rr-cuda/kernels}
# The PTX's ISA version is set to 7.0 (CUDA 11 drivers load it; the kernels use nothing newer,
# which ptxas checks): nvcc 13 writes 9.0, which only CUDA 13 drivers load.
for k in leaf_hash snapshot; do
  nvcc -ptx -arch=compute_75 -O3 -o "$out/$k.ptx" "crates/rr-cuda/kernels/$k.cu"
  sed -i 's/^\.version .*/.version 7.0/' "$out/$k.ptx"
done
nvcc -O3 -arch=native -o /tmp/leaf_hash_check tests/gpu/probes/leaf_hash_check.cu
/tmp/leaf_hash_check
