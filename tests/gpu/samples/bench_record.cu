// bench_record.cu: workloads for the recorder's benchmark (README performance table).
//   bench_record storm N [W [R]]  N launches of a kernel over W words (default 4096: launch-bound,
//                             the worst case for a recorder that records nothing, since every launch
//                             still passes through its callbacks; W = 8M: ~20 us kernels, GPU-bound),
//                             R times in a row (default 1), each storm's time on a line of its own:
//                             the first pays the one-time costs (module load, the recorder's first
//                             decision), later ones show the steady per-launch cost
//   bench_record big GIB      GIB GiB of distinct, non-zero data in 8 buffers, then one kernel that
//                             reads them all and writes 1 MiB (what recording a big instance costs)
//   bench_record d2h GIB      pinned device-to-host copy bandwidth (the recorder's ceiling)
// Prints `seconds=<s>` (wall time of the workload, process start-up excluded) and a checksum;
// storms also print `cpu_seconds=<s>`, the launching thread's CPU time (time the virtual
// machine's scheduler took the thread off its CPU does not count there).
#include <cuda_runtime.h>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void bump(unsigned *x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 1664525u + 1013904223u;
}

// Distinct, incompressible-looking words: no zero pages, no repeats between buffers.
__global__ void fill(unsigned long long *p, size_t n, unsigned long long salt) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned long long v = (i + 1) * 0x9E3779B97F4A7C15ull ^ salt;
    v ^= v >> 31; v *= 0xBF58476D1CE4E5B9ull; v ^= v >> 27;
    p[i] = v | 1;
  }
}

__global__ void reduce8(unsigned long long **bufs, size_t n, unsigned long long *out) {
  unsigned long long acc = 0;
  for (int b = 0; b < 8; b++)
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
      acc ^= bufs[b][i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

static double thread_cpu() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: bench_record storm N | big GIB | d2h GIB\n"); return 2; }
  const char *mode = argv[1];
  double amount = atof(argv[2]);
  CK(cudaFree(0));
  if (!strcmp(mode, "storm")) {
    long n = (long)amount;
    unsigned w = argc > 3 ? (unsigned)atol(argv[3]) : 4096;
    unsigned *x; CK(cudaMalloc(&x, (size_t)w * 4)); CK(cudaMemset(x, 0, (size_t)w * 4));
    int reps = argc > 4 ? atoi(argv[4]) : 1;
    for (int r = 0; r < (reps < 1 ? 1 : reps); r++) {
      double t = now(), c = thread_cpu();
      for (long i = 0; i < n; i++) bump<<<(w + 255) / 256, 256>>>(x, w);
      CK(cudaDeviceSynchronize());
      printf("seconds=%.6f\ncpu_seconds=%.6f\n", now() - t, thread_cpu() - c);
    }
    unsigned h[4]; CK(cudaMemcpy(h, x, sizeof h, cudaMemcpyDeviceToHost));
    printf("checksum=%08x%08x\n", h[0], h[1]);
  } else if (!strcmp(mode, "big")) {
    size_t per = (size_t)(amount * (1 << 30)) / 8 / 8;  // words per buffer
    unsigned long long *bufs[8], **dbufs, *out;
    for (int b = 0; b < 8; b++) { CK(cudaMalloc(&bufs[b], per * 8)); fill<<<1024, 256>>>(bufs[b], per, 0x1234567ull * (b + 1)); }
    CK(cudaMalloc(&dbufs, sizeof bufs)); CK(cudaMemcpy(dbufs, bufs, sizeof bufs, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&out, 1 << 20));
    CK(cudaDeviceSynchronize());
    double t = now();
    reduce8<<<512, 256>>>(dbufs, per, out);
    CK(cudaDeviceSynchronize());
    printf("seconds=%.6f\nbytes=%zu\n", now() - t, per * 8 * 8);
    unsigned long long h; CK(cudaMemcpy(&h, out, 8, cudaMemcpyDeviceToHost));
    printf("checksum=%016llx\n", h);
  } else if (!strcmp(mode, "d2h")) {
    size_t n = (size_t)(amount * (1 << 30));
    void *d, *h; CK(cudaMalloc(&d, n)); CK(cudaMallocHost(&h, n)); CK(cudaMemset(d, 1, n));
    CK(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost));
    double t = now();
    CK(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost));
    double s = now() - t;
    printf("seconds=%.6f\ngbps=%.2f\n", s, n / s / 1e9);
  }
  return 0;
}
