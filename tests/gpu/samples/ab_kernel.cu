// The A/B suite's kernel (tests/gpu/ab-suite.sh): out[i] = in[i] * 2 + 1 over TILE elements per
// thread. Built with nvcc into a program that is recorded, and given as a candidate source that
// rr-tui compiles with NVRTC; macros make the variants:
//   SLOW=N     re-reads N other elements per output and adds them times 0 (same result, more
//              memory traffic: a slower kernel);
//   WRONG      adds 1 more (a wrong result);
//   BAD_LAYOUT takes one more parameter (a layout the record does not match);
//   BROKEN     does not compile, and neither does TILE=3.
// extern "C": the kernel keeps its name whatever its parameters.
#ifndef TILE
#define TILE 4
#endif
#ifndef SLOW
#define SLOW 0
#endif
#if TILE == 3
#error "TILE 3 is not supported (the compile-time sweep's variant that does not compile)"
#endif

extern "C" __global__ void ab_scale(const float* __restrict__ in, float* __restrict__ out, int n
#ifdef BAD_LAYOUT
                                    , double unused
#endif
) {
#ifdef BROKEN
  this is not CUDA;
#endif
  int first = blockIdx.x * blockDim.x * TILE + threadIdx.x;
#pragma unroll
  for (int t = 0; t < TILE; ++t) {
    int i = first + t * blockDim.x;
    if (i >= n) return;
    float v = in[i] * 2.0f + 1.0f;
    float extra = 0.0f;
    for (int r = 1; r <= SLOW; ++r) extra += in[(i + r * 7919) % n];
    v += extra * 0.0f;  // finite inputs: exactly v, but the loads stay
#ifdef WRONG
    v += 1.0f;
#endif
    out[i] = v;
  }
}

#ifndef __CUDACC_RTC__
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

int main(int argc, char** argv) {
  // argv[1]: elements (default 2^24); another size is another problem signature.
  const int n = argc > 1 ? atoi(argv[1]) : 1 << 24, threads = 256;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = float(i % 1000) * 0.5f;
  float *in, *out;
  cudaMalloc(&in, n * sizeof(float));
  cudaMalloc(&out, n * sizeof(float));
  cudaMemcpy(in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemset(out, 0, n * sizeof(float));
  int blocks = (n + threads * TILE - 1) / (threads * TILE);
  ab_scale<<<blocks, threads>>>(in, out, n);
  // AB_TIME=N: time N more launches (CUDA events) and print the median: how the suite checks
  // that a configuration exported by `tune --export` is as fast in the program.
  if (const char* reps = getenv("AB_TIME")) {
    int count = atoi(reps);
    std::vector<float> ms(count > 0 ? count : 1);
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    for (float& t : ms) {
      cudaEventRecord(a);
      ab_scale<<<blocks, threads>>>(in, out, n);
      cudaEventRecord(b);
      cudaEventSynchronize(b);
      cudaEventElapsedTime(&t, a, b);
    }
    std::sort(ms.begin(), ms.end());
    printf("median_us=%.3f TILE=%d SLOW=%d\n", ms[ms.size() / 2] * 1000.0f, TILE, SLOW);
  }
  cudaMemcpy(host.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaError_t e = cudaDeviceSynchronize();
  printf("ab_scale: %s, out[12345] = %.1f\n", cudaGetErrorString(e), host[12345]);
  return e == cudaSuccess ? 0 : 1;
}
#endif
