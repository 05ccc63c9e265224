// `rr-tui ab`'s suite kernel and its cheating candidates (tests/gpu/ab-suite.sh, "ab on every
// instance"). Built with nvcc into a program that launches ab_cheat three times on the same
// buffers, each with another size and other input contents (three recorded instances of one
// kernel that one process can switch between); given as a candidate source, macros make the
// cheats that the guards of `rr_engine::replay::guards` must catch:
//   (none)          the honest kernel: verifies on every instance;
//   WRITE_NOTHING   returns at once: the poisoned output stays, verification fails;
//   WRITE_HALF      writes the first half of the output only: the rest stays poisoned;
//   CACHE           computes on its first run only (a `__device__` flag), then returns: the
//                   flag is put back before every run, so it computes every time (verified, and
//                   no faster than the recorded kernel);
//   WRITE_OUTSIDE   writes the right output and also clears in[0]: every byte of every recorded
//                   segment is compared, so the changed input fails verification;
//   LAUNCH_BOUNDS   __launch_bounds__(64) while the recording launches 256 threads a block: the
//                   launch is refused before it runs, an error, never a pass.
// extern "C": the kernel keeps its name whatever the macros.

#ifdef LAUNCH_BOUNDS
#define BOUNDS __launch_bounds__(64)
#else
#define BOUNDS
#endif

#ifdef CACHE
// Set by the first run: a cheat would skip the work on every later run.
__device__ int ab_cheat_ran = 0;
#endif

extern "C" __global__ void BOUNDS ab_cheat(const float* __restrict__ in, float* __restrict__ out,
                                           int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#ifdef WRITE_NOTHING
  return;
#endif
#ifdef CACHE
  if (ab_cheat_ran) return;
#endif
#ifdef WRITE_HALF
  if (i >= n / 2) return;
#endif
  if (i >= n) return;
  out[i] = in[i] * 3.0f - 1.0f;
#ifdef WRITE_OUTSIDE
  if (i == 0) ((float*)in)[0] = -12345.0f;
#endif
#ifdef CACHE
  if (i == n - 1) ab_cheat_ran = 1;
#endif
}

#ifndef __CUDACC_RTC__
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

int main() {
  // Three sizes on the same two buffers: three instances with one memory layout.
  const int most = 1 << 24, threads = 256;
  const int sizes[3] = {1 << 22, 1 << 23, 1 << 24};
  std::vector<float> host(most);
  float *in, *out;
  cudaMalloc(&in, most * sizeof(float));
  cudaMalloc(&out, most * sizeof(float));
  cudaMemset(out, 0, most * sizeof(float));
  for (int k = 0; k < 3; ++k) {
    for (int i = 0; i < most; ++i) host[i] = float((i * (k + 3)) % 1000) * 0.25f + k;
    cudaMemcpy(in, host.data(), most * sizeof(float), cudaMemcpyHostToDevice);
    int n = sizes[k];
    ab_cheat<<<(n + threads - 1) / threads, threads>>>(in, out, n);
  }
  cudaError_t e = cudaDeviceSynchronize();
  printf("ab_cheat: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
#endif
