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
//                   launch is refused before it runs, an error, never a pass;
//   STASH           keeps every result it computes in a global too large to be reset (80 MiB,
//                   over the 64 MiB of the candidate's own globals put back before every run)
//                   and hands it back on every later run: alone on one instance it verifies;
//                   with the instances rotated inside the timing loop (the candidate kept
//                   loaded), its first run on the second and third instance hands back the
//                   first one's results and fails;
//   SKIP_TIMED      (ab_stream) does the work on its first launch only, then returns at once
//                   (a flag in a global too large to be reset): the first run verifies, and
//                   `replay --candidate`'s timed runs are faster than writing the output at the
//                   GPU's peak bandwidth allows, so the plausibility guard flags it; `ab`, which
//                   verifies after timing too, finds it wrong.
// ab_stream is the bandwidth floor's kernel: the same arithmetic by a fixed grid of blocks that
// stride over n, recorded once on 256 MiB buffers (`cheat_prog stream`), far beyond the L2, so
// that the floor (about 60 µs on an H100) lies far above a launch that skips the work (a few µs)
// and far below the honest kernel (about 170 µs).
// extern "C": the kernels keep their names whatever the macros.

#ifdef LAUNCH_BOUNDS
#define BOUNDS __launch_bounds__(64)
#else
#define BOUNDS
#endif

#ifdef CACHE
// Set by the first run: a cheat would skip the work on every later run.
__device__ int ab_cheat_ran = 0;
#endif

// The largest instance's elements (the stash holds a result for each).
#define AB_CHEAT_MOST (1 << 24)

#ifdef STASH
// One global of 80 MiB: a result and whether it is kept, for each element (per element, so
// the blocks of one launch need not agree on anything).
struct AbStash {
  float value[AB_CHEAT_MOST];
  unsigned char kept[AB_CHEAT_MOST];
};
__device__ AbStash ab_stash;
#endif

#ifdef SKIP_TIMED
// Over 64 MiB, so that it is not put back before every run: the flag survives the launch.
struct AbSkip {
  unsigned done;
  unsigned finished;
  unsigned char pad[(64 << 20) + 4096];
};
__device__ AbSkip ab_skip;
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
#ifdef STASH
  if (i < AB_CHEAT_MOST) {
    if (ab_stash.kept[i]) {
      out[i] = ab_stash.value[i];
      return;
    }
    float v = in[i] * 3.0f - 1.0f;
    ab_stash.value[i] = v;
    ab_stash.kept[i] = 1;
    out[i] = v;
    return;
  }
#endif
  out[i] = in[i] * 3.0f - 1.0f;
#ifdef WRITE_OUTSIDE
  if (i == 0) ((float*)in)[0] = -12345.0f;
#endif
#ifdef CACHE
  if (i == n - 1) ab_cheat_ran = 1;
#endif
}

// Blocks in ab_stream's grid (times 256 threads), whatever n.
#define AB_STREAM_BLOCKS 1056

extern "C" __global__ void ab_stream(const float* __restrict__ in, float* __restrict__ out,
                                     int n) {
#ifdef SKIP_TIMED
  if (*(volatile unsigned*)&ab_skip.done) return;
#endif
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = in[i] * 3.0f - 1.0f;
#ifdef SKIP_TIMED
  // The last block to finish marks the work done: a block of this launch that starts later
  // would otherwise skip its part (every block has started once all but one have finished).
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(&ab_skip.finished, 1u) == gridDim.x - 1) ab_skip.done = 1;
  }
#endif
}

#ifndef __CUDACC_RTC__
#include <cstdio>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

// `cheat_prog stream`: ab_stream once on 256 MiB buffers (the bandwidth floor's instance).
static int stream_once() {
  const int n = 1 << 26;
  std::vector<float> host(n);
  // Values of a full mantissa: every byte of the output differs from the zeros it replaces, so
  // all 256 MiB count toward the floor.
  for (int i = 0; i < n; ++i) host[i] = float(i % 9973) * 1.0e-3f + 0.1f;
  float *in, *out;
  cudaMalloc(&in, n * sizeof(float));
  cudaMalloc(&out, n * sizeof(float));
  cudaMemcpy(in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemset(out, 0, n * sizeof(float));
  ab_stream<<<AB_STREAM_BLOCKS, 256>>>(in, out, n);
  cudaError_t e = cudaDeviceSynchronize();
  printf("ab_stream: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "stream") == 0) return stream_once();
  // Three sizes on the same two buffers: three instances with one memory layout.
  const int most = AB_CHEAT_MOST, threads = 256;
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
