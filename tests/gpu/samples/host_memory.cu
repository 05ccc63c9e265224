// host_memory.cu: kernels that read and write pinned host memory through its device address.
// Three kinds: cudaHostAlloc(Mapped) (device pointer from cudaHostGetDevicePointer), cudaMallocHost
// (pinned; under unified addressing the host pointer is the device pointer) and cudaHostRegister
// of ordinary malloc'd memory. A kernel reads them all and writes device memory; another writes
// host memory that the host then reads.
//   host_memory          the round trip (checksum last)
//   host_memory wait     a kernel spins until another host thread sets a flag in mapped memory:
//                        it finishes when recorded, but a replay has no such thread (the watchdog
//                        case of the GPU suite)
//   host_memory global   a kernel gets the address of a __device__ variable as an argument:
//                        module globals are not recorded memory, so the argument points outside
//                        it (the warning case of the GPU suite)
#include <cuda_runtime.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <thread>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void k_mix(const float *mapped, const float *pinned, const int *registered, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = mapped[i] * 2.0f + pinned[(i * 7) % n] - (float)registered[i % 1000];
}
__global__ void k_to_host(float *mapped, const float *src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) mapped[i] = src[i] * 0.5f + 1.0f;
}
__device__ int d_table[256];
__global__ void k_from_global(const int *table, int *out) {
  out[threadIdx.x] = table[threadIdx.x] * 2;
}
__global__ void k_wait(volatile int *flag, int *out) {
  while (*flag == 0) {}
  *out = *flag + 41;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = (const unsigned char *)p;
  for (size_t i = 0; i < n; i++) { h ^= b[i]; h *= 1099511628211ull; }
  return h;
}

int main(int argc, char **argv) {
  const int n = 1 << 18;
  if (argc > 1 && !strcmp(argv[1], "global")) {
    int h[256], *table, *out;
    for (int i = 0; i < 256; i++) h[i] = i * 3;
    CK(cudaMemcpyToSymbol(d_table, h, sizeof h));
    CK(cudaGetSymbolAddress((void **)&table, d_table));
    CK(cudaMalloc(&out, sizeof h));
    k_from_global<<<1, 256>>>(table, out);
    CK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    printf("host_memory global: out[255]=%d\nchecksum=%016llx\n", h[255], (unsigned long long)fnv(1469598103934665603ull, h, sizeof h));
    return 0;
  }
  if (argc > 1 && !strcmp(argv[1], "wait")) {
    int *flag, *dflag, *out;
    CK(cudaHostAlloc(&flag, 4096, cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer((void **)&dflag, flag, 0));
    CK(cudaMalloc(&out, 4));
    *flag = 0;
    std::thread setter([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      std::atomic_thread_fence(std::memory_order_seq_cst);
      *(volatile int *)flag = 1;
    });
    k_wait<<<1, 1>>>(dflag, out);
    CK(cudaDeviceSynchronize());
    setter.join();
    int h;
    CK(cudaMemcpy(&h, out, 4, cudaMemcpyDeviceToHost));
    printf("host_memory wait: out=%d\nchecksum=%016llx\n", h, (unsigned long long)fnv(1469598103934665603ull, &h, 4));
    return 0;
  }
  float *mapped, *dmapped, *pinned, *out, *src;
  CK(cudaHostAlloc(&mapped, n * 4, cudaHostAllocMapped));
  CK(cudaHostGetDevicePointer((void **)&dmapped, mapped, 0));
  CK(cudaMallocHost(&pinned, n * 4));
  // Registered memory: page-aligned malloc'd memory, registered and mapped.
  int *registered = (int *)aligned_alloc(4096, 1 << 16), *dregistered;
  CK(cudaHostRegister(registered, 1 << 16, cudaHostRegisterMapped));
  CK(cudaHostGetDevicePointer((void **)&dregistered, registered, 0));
  for (int i = 0; i < n; i++) { mapped[i] = (float)(i % 1000) * 0.25f; pinned[i] = (float)((i * 31) % 777); }
  for (int i = 0; i < (1 << 14); i++) registered[i] = i * 3 - 500;
  CK(cudaMalloc(&out, n * 4));
  CK(cudaMalloc(&src, n * 4));
  k_mix<<<(n + 255) / 256, 256>>>(dmapped, pinned, dregistered, out, n);
  CK(cudaMemcpy(src, out, n * 4, cudaMemcpyDeviceToDevice));
  k_to_host<<<(n + 255) / 256, 256>>>(dmapped, src, n);
  CK(cudaDeviceSynchronize());
  // The host reads what the kernel wrote into mapped memory, and the device result.
  float *res = (float *)malloc(n * 4);
  CK(cudaMemcpy(res, out, n * 4, cudaMemcpyDeviceToHost));
  uint64_t h = fnv(1469598103934665603ull, res, n * 4);
  h = fnv(h, mapped, n * 4);
  printf("host_memory: mapped=%p pinned=%p registered=%p\n", (void *)mapped, (void *)pinned, (void *)registered);
  printf("checksum=%016llx\n", (unsigned long long)h);
  CK(cudaHostUnregister(registered));
  return 0;
}
