// Two kernels whose profiles are known in advance, for `rr-tui profile` and `--energy`:
// rr_triad streams three 512 MiB arrays (a = b + s*c: 2 reads and 1 write per element, no
// reuse: memory-bound, 1.5 GiB of DRAM traffic, far beyond the L2), and rr_fma_chain runs four
// independent chains of 4096 dependent FMAs per thread over 1 M threads (32 GFLOP on 8 MiB:
// compute-bound).
#include <cstdio>
#include <cuda_runtime.h>

__global__ void rr_fill(float *p, long n, float scale) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  for (; i < n; i += (long)gridDim.x * blockDim.x) p[i] = scale * (float)(i % 1000);
}

__global__ void rr_triad(float *a, const float *b, const float *c, float s, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  for (; i < n; i += (long)gridDim.x * blockDim.x) a[i] = b[i] + s * c[i];
}

__global__ void rr_fma_chain(float *out, const float *in, long n, int iters) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = in[i], y = x * 0.5f, z = x + 1.0f, w = x - 1.0f;
  for (int k = 0; k < iters; k++) {
    x = fmaf(x, 0.9999f, 0.0001f);
    y = fmaf(y, 0.9999f, 0.0002f);
    z = fmaf(z, 0.9999f, 0.0003f);
    w = fmaf(w, 0.9999f, 0.0004f);
  }
  out[i] = x + y + z + w;
}

int main() {
  const long n = 1L << 27, m = 1L << 20;
  float *a, *b, *c, *in, *out;
  for (float **p : {&a, &b, &c}) cudaMalloc(p, n * sizeof(float));
  cudaMalloc(&in, m * sizeof(float));
  cudaMalloc(&out, m * sizeof(float));
  rr_fill<<<1024, 256>>>(b, n, 0.5f);
  rr_fill<<<1024, 256>>>(c, n, 0.25f);
  rr_fill<<<256, 256>>>(in, m, 0.001f);
  rr_triad<<<4096, 256>>>(a, b, c, 2.0f, n);
  rr_fma_chain<<<m / 256, 256>>>(out, in, m, 4096);
  float ha = 0, ho = 0;
  cudaMemcpy(&ha, a + 12345, sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(&ho, out + 4321, sizeof(float), cudaMemcpyDeviceToHost);
  cudaError_t e = cudaDeviceSynchronize();
  printf("a[12345] = %g, out[4321] = %g (%s)\n", ha, ho, cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
