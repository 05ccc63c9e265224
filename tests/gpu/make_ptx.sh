#!/usr/bin/env bash
# Rebuild the committed PTX of rr-tui's own kernels (GPU machine: needs nvcc) into $1 (default:
# next to the sources), and check the leaf hash against its host reference. (nvcc 13.0 from PyPI's
# nvidia-cuda-nvcc, nvidia-cuda-crt and nvidia-nvvm 13.0 builds the same PTX without a GPU.)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-crates/rr-cuda/kernels}
nvcc -ptx -arch=compute_75 -O3 -o "$out/leaf_hash.ptx" crates/rr-cuda/kernels/leaf_hash.cu
nvcc -ptx -arch=compute_75 -O3 -o "$out/snapshot.ptx" crates/rr-cuda/kernels/snapshot.cu
nvcc -O3 -arch=native -o /tmp/leaf_hash_check tests/gpu/probes/leaf_hash_check.cu
/tmp/leaf_hash_check
