// pools_managed.cu: stream-ordered allocation (cudaMallocAsync from the default pool
// and cudaMallocFromPoolAsync from an explicit pool, cudaFreeAsync, VA reuse), plus
// a small cudaMallocManaged buffer written by the host and updated by a kernel.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstddef>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
  exit(1); } } while (0)
static inline uint64_t fnv1a(const void* p, size_t n, uint64_t h = 1469598103934665603ull) {
  const unsigned char* b = (const unsigned char*)p;
  for (size_t i = 0; i < n; ++i) { h ^= b[i]; h *= 1099511628211ull; }
  return h;
}

__global__ void k_iota(unsigned* a, int n, unsigned mul) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = (unsigned)i * mul + 12345u;
}
__global__ void k_mix(const unsigned* a, const unsigned* b, unsigned* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = (a[i] ^ (b[(i * 7) % n] >> 3)) + (unsigned)i;
}
__global__ void k_managed(unsigned* m, const unsigned* c, int n, int nc) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) m[i] = m[i] * 3u + c[i % nc];
}

int main() {
  int dev = 0;
  CK(cudaSetDevice(dev));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = dev;
  cudaMemPool_t pool;
  CK(cudaMemPoolCreate(&pool, &props));
  unsigned long long threshold = 64ull << 20;       // keep freed memory cached in the pool
  CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));

  const int n = 1 << 20;                            // 4 MiB per buffer
  const size_t bytes = n * sizeof(unsigned);
  unsigned *a, *b, *c, *d;
  CK(cudaMallocFromPoolAsync((void**)&a, bytes, pool, s));
  CK(cudaMallocAsync((void**)&b, bytes, s));          // default pool of the device
  CK(cudaMallocFromPoolAsync((void**)&c, bytes, pool, s));
  const int grid = (n + 255) / 256;
  k_iota<<<grid, 256, 0, s>>>(a, n, 3u);
  k_iota<<<grid, 256, 0, s>>>(b, n, 5u);
  k_mix<<<grid, 256, 0, s>>>(a, b, c, n);
  CK(cudaFreeAsync(a, s));                           // stream-ordered free ...
  CK(cudaMallocFromPoolAsync((void**)&d, bytes, pool, s));   // ... usually reuses a's range
  k_mix<<<grid, 256, 0, s>>>(c, b, d, n);
  CK(cudaGetLastError());

  const int nm = 1 << 18;                           // 1 MiB managed
  unsigned* m;
  CK(cudaMallocManaged(&m, nm * sizeof(unsigned), cudaMemAttachGlobal));
  CK(cudaStreamSynchronize(s));                     // host may touch managed memory only when idle
  for (int i = 0; i < nm; ++i) m[i] = (unsigned)(i * 2654435761u);
  k_managed<<<(nm + 255) / 256, 256, 0, s>>>(m, d, nm, n);
  k_managed<<<(nm + 255) / 256, 256, 0, s>>>(m, c, nm, n);
  CK(cudaGetLastError());
  CK(cudaStreamSynchronize(s));

  unsigned* hd = (unsigned*)malloc(bytes);
  CK(cudaMemcpy(hd, d, bytes, cudaMemcpyDeviceToHost));
  uint64_t h = fnv1a(hd, bytes);
  h = fnv1a(m, nm * sizeof(unsigned), h);           // host reads managed memory directly
  printf("pools_managed: reused=%s d[1]=%u m[0]=%u m[%d]=%u\n", (void*)d == (void*)a ? "yes" : "no",
         hd[1], m[0], nm - 1, m[nm - 1]);
  printf("checksum=%016llx\n", (unsigned long long)h);

  CK(cudaFreeAsync(b, s)); CK(cudaFreeAsync(c, s)); CK(cudaFreeAsync(d, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaFree(m));
  CK(cudaMemPoolDestroy(pool));
  CK(cudaStreamDestroy(s));
  free(hd);
  return 0;
}
