// Kernels of the GPU test suite and of the committed fixtures (record-fixtures/).
// Compiled to an sm_90 cubin: nvcc -cubin -arch=sm_90 -O3 kernels.cu -o kernels.cubin
//
// The LLVM-layout kernels take only 8-byte parameters and end with the OpenMP `dyn_ptr` slot,
// as libomptarget's kernels do, so their records are byte-for-byte what libomptarget writes.

#include <cstdint>

__device__ float g_scale = 1.0f;       // overwritten by the application before launch
__constant__ float c_bias[8];          // likewise

// Grid-stride loop: the result does not depend on the launch geometry, so geometry overrides
// still verify against the recorded output.
extern "C" __global__ void rr_saxpy(float *y, const float *x, double a, long n, void *dyn_ptr) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
    y[i] = (float)a * x[i] + y[i];
}

// Reads a __device__ and a __constant__ global: replay must restore both by name.
extern "C" __global__ void rr_scale_global(float *out, const float *in, long n, void *dyn_ptr) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
    out[i] = in[i] * g_scale + c_bias[i % 8];
}

// Reverses each block's tile through dynamic shared memory (64 KiB: above the 48 KiB default).
extern "C" __global__ void rr_smem_reverse(float *data, long n, long tile, void *dyn_ptr) {
  extern __shared__ float s[];
  long base = blockIdx.x * tile;
  for (long i = threadIdx.x; i < tile; i += blockDim.x)
    s[i] = base + i < n ? data[base + i] : 0.0f;
  __syncthreads();
  for (long i = threadIdx.x; i < tile; i += blockDim.x)
    if (base + i < n) data[base + i] = s[tile - 1 - i];
}

// Floating-point atomics in scheduling order: the sums differ in their last bits from run to
// run, so verification needs --tolerance.
extern "C" __global__ void rr_atomic_sum(float *out, const float *in, long n, void *dyn_ptr) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
    atomicAdd(&out[i % 8], in[i]);
}

// A 3-D stencil with 4-byte parameters: rr-tui's own format (3-D geometry, parameter buffer
// layout, scattered cudaMalloc segments).
extern "C" __global__ void rr_stencil3d(float *out, const float *in, const float *coef, int nx, int ny, int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || y >= ny || z >= nz) return;
  auto at = [&](int i, int j, int k) {
    i = min(max(i, 0), nx - 1); j = min(max(j, 0), ny - 1); k = min(max(k, 0), nz - 1);
    return in[((long)k * ny + j) * nx + i];
  };
  out[((long)z * ny + y) * nx + x] = coef[0] * at(x, y, z) + coef[1] * (at(x - 1, y, z) + at(x + 1, y, z)) +
                                     coef[2] * (at(x, y - 1, z) + at(x, y + 1, z)) + coef[3] * (at(x, y, z - 1) + at(x, y, z + 1)) +
                                     g_scale * c_bias[0];
}
