// ordering.cu: kernels that wait on the host or on each other. A recorder that waits for a
// recorded kernel before the launch returns hangs all three; recording must add no wait.
//   ordering flag       a kernel spins on a flag in mapped host memory that the host sets right
//                       after the launch returns (XLA's DelayKernel pattern)
//   ordering flag-late  the same, the flag set 200 ms later (its recorded input is then surely
//                       the unset flag: a replay spins until --kernel-timeout stops it)
//   ordering pair       a consumer kernel on one stream spins until a producer kernel, launched
//                       after it on another stream, sets a flag in device memory
//   ordering hostfunc   a kernel spins until a host callback (cudaLaunchHostFunc) enqueued on
//                       another stream sets a flag in mapped host memory
// Warm-up launches (another geometry) load every kernel first: with lazy loading, a kernel
// loaded at its first launch waits for the kernels running, which would deadlock `pair` plainly.
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <thread>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void k_delay(volatile int *flag, int *out, int n) {
  if (threadIdx.x == 0) while (*flag == 0) {}
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i * 3 + *flag;
}
__global__ void k_after(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * 2 + 1;
}
__global__ void k_consume(volatile int *flag, const int *data, int *out, int n, int wait) {
  if (wait && threadIdx.x == 0) while (*flag == 0) {}
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = data[i] + 100;
}
__global__ void k_produce(int *flag, int *data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = i * 7;
  __threadfence_system();
  __syncthreads();
  if (i == 0) atomicExch(flag, 1);
}
static void CUDART_CB set_flag(void *p) { *(volatile int *)p = 1; }

static uint64_t fnv(const void *p, size_t n, uint64_t h = 1469598103934665603ull) {
  const unsigned char *b = (const unsigned char *)p;
  for (size_t i = 0; i < n; ++i) { h ^= b[i]; h *= 1099511628211ull; }
  return h;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "flag";
  const int n = 4096;
  int *flag_h, *flag_d, *out, *mid, *data, *dflag;
  CK(cudaHostAlloc(&flag_h, sizeof(int), cudaHostAllocMapped));
  CK(cudaHostGetDevicePointer(&flag_d, flag_h, 0));
  CK(cudaMalloc(&out, n * sizeof(int)));
  CK(cudaMalloc(&mid, n * sizeof(int)));
  CK(cudaMalloc(&data, n * sizeof(int)));
  CK(cudaMalloc(&dflag, sizeof(int)));
  CK(cudaMemset(out, 0, n * sizeof(int)));
  CK(cudaMemset(data, 0, n * sizeof(int)));
  CK(cudaMemset(dflag, 0, sizeof(int)));
  cudaStream_t s1, s2;
  CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  // Warm-up: every kernel loaded, none waiting.
  *flag_h = 1;
  k_delay<<<1, 32, 0, s1>>>(flag_d, mid, 32);
  k_after<<<1, 32, 0, s1>>>(mid, out, 32);
  k_consume<<<1, 32, 0, s1>>>(dflag, data, out, 32, 0);
  k_produce<<<1, 32, 0, s2>>>(dflag, data, 32);
  CK(cudaDeviceSynchronize());
  *flag_h = 0;
  CK(cudaMemset(dflag, 0, sizeof(int)));
  auto t0 = std::chrono::steady_clock::now();
  if (!strcmp(mode, "flag") || !strcmp(mode, "flag-late")) {
    k_delay<<<n / 128, 128, 0, s1>>>(flag_d, mid, n);
    if (!strcmp(mode, "flag-late")) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    *(volatile int *)flag_h = 1;
    k_after<<<n / 128, 128, 0, s1>>>(mid, out, n);
    CK(cudaStreamSynchronize(s1));
  } else if (!strcmp(mode, "pair")) {
    k_consume<<<n / 128, 128, 0, s1>>>(dflag, data, out, n, 1);
    k_produce<<<n / 128, 128, 0, s2>>>(dflag, data, n);
    CK(cudaDeviceSynchronize());
  } else if (!strcmp(mode, "hostfunc")) {
    k_produce<<<n / 128, 128, 0, s1>>>(dflag, data, n);
    CK(cudaLaunchHostFunc(s1, set_flag, flag_h));
    k_consume<<<n / 128, 128, 0, s2>>>(flag_d, data, out, n, 1);
    CK(cudaDeviceSynchronize());
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int *h = (int *)malloc(n * sizeof(int));
  CK(cudaMemcpy(h, out, n * sizeof(int), cudaMemcpyDeviceToHost));
  printf("%s: %.3f s\n", mode, s);
  printf("checksum=%016llx\n", (unsigned long long)fnv(h, n * sizeof(int)));
  return 0;
}
