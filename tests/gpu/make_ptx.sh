#!/usr/bin/env bash
# Rebuild the committed PTX of rr-tui's own kernels (GPU machine: needs nvcc) into $1 (default:
# next to the sources), and check the leaf hash against its host reference.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-crates/rr-cuda/kernels}
nvcc -ptx -arch=compute_75 -O3 -o "$out/leaf_hash.ptx" crates/rr-cuda/kernels/leaf_hash.cu
nvcc -O3 -arch=native -o /tmp/leaf_hash_check tests/gpu/probes/leaf_hash_check.cu
/tmp/leaf_hash_check
