// cluster.cu: Hopper thread-block clusters with distributed shared memory.
// Launch 1: cudaLaunchKernelEx + cudaLaunchAttributeClusterDimension (cluster 4).
// Launch 2: driver cuLaunchKernelEx + CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION (cluster 2).
// Launch 3: cudaLaunchCooperativeKernel (cooperative launch, no grid sync needed).
// Build: nvcc -O2 -arch=sm_90 -o cluster cluster.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstddef>
namespace cg = cooperative_groups;
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
  exit(1); } } while (0)
#define CU(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s_ = "?"; \
  cuGetErrorName(r_, &s_); \
  fprintf(stderr, "%s:%d: %s failed: %d %s\n", __FILE__, __LINE__, #x, (int)r_, s_); \
  exit(1); } } while (0)
static inline uint64_t fnv1a(const void* p, size_t n, uint64_t h = 1469598103934665603ull) {
  const unsigned char* b = (const unsigned char*)p;
  for (size_t i = 0; i < n; ++i) { h ^= b[i]; h *= 1099511628211ull; }
  return h;
}

constexpr int BLOCK = 256;

// Each block stages its slice in shared memory; after cluster.sync() every block
// reads the shared memory of the next block in its cluster (DSMEM).
__global__ void k_cluster(const int* in, int* out, int n) {
  __shared__ int sm[BLOCK];
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  const unsigned csize = cluster.num_blocks();
  const int gi = blockIdx.x * blockDim.x + threadIdx.x;
  sm[threadIdx.x] = gi < n ? in[gi] : 0;
  cluster.sync();
  const int* peer = cluster.map_shared_rank(sm, (rank + 1) % csize);
  const int v = peer[(threadIdx.x + 1) % BLOCK];
  cluster.sync();                         // keep our smem alive until peers are done
  if (gi < n) out[gi] = sm[threadIdx.x] * 3 + v + (int)(rank * 1000 + csize);
}

__global__ void k_coop(const int* a, const int* b, int* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] - 2 * b[i];
}

int main() {
  const int nblocks = 64, n = nblocks * BLOCK - 5;
  int* h_in = (int*)malloc(n * sizeof(int));
  for (int i = 0; i < n; ++i) h_in[i] = (i * 131) % 1009 - 500;
  int *d_in, *d_out1, *d_out2, *d_out3;
  CK(cudaMalloc(&d_in, n * sizeof(int)));
  CK(cudaMalloc(&d_out1, n * sizeof(int)));
  CK(cudaMalloc(&d_out2, n * sizeof(int)));
  CK(cudaMalloc(&d_out3, n * sizeof(int)));
  CK(cudaMemcpy(d_in, h_in, n * sizeof(int), cudaMemcpyHostToDevice));

  // 1) runtime API: cudaLaunchKernelEx with a cluster dimension attribute
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(nblocks, 1, 1);
  cfg.blockDim = dim3(BLOCK, 1, 1);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = 0;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 4;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CK(cudaLaunchKernelEx(&cfg, k_cluster, (const int*)d_in, d_out1, n));

  // 2) driver API: cuLaunchKernelEx on the same kernel, cluster of 2
  cudaFunction_t rf;
  CK(cudaGetFuncBySymbol(&rf, (const void*)k_cluster));
  CUfunction f = (CUfunction)rf;
  CUlaunchAttribute a[1];
  a[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  a[0].value.clusterDim.x = 2;
  a[0].value.clusterDim.y = 1;
  a[0].value.clusterDim.z = 1;
  CUlaunchConfig lc = {};
  lc.gridDimX = nblocks; lc.gridDimY = 1; lc.gridDimZ = 1;
  lc.blockDimX = BLOCK; lc.blockDimY = 1; lc.blockDimZ = 1;
  lc.sharedMemBytes = 0;
  lc.hStream = 0;                          // legacy default stream, same as launch 1
  lc.attrs = a;
  lc.numAttrs = 1;
  int n_arg = n;
  void* args[] = {&d_in, &d_out2, &n_arg};
  CU(cuLaunchKernelEx(&lc, f, args, nullptr));

  // 3) cooperative launch (runtime API)
  int coop = 0;
  CK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0));
  if (coop) {
    void* cargs[] = {&d_out1, &d_out2, &d_out3, &n_arg};
    CK(cudaLaunchCooperativeKernel((const void*)k_coop, dim3(nblocks), dim3(BLOCK), cargs, 0, 0));
  } else {
    k_coop<<<nblocks, BLOCK>>>(d_out1, d_out2, d_out3, n);
  }
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());

  int* h1 = (int*)malloc(n * sizeof(int));
  int* h2 = (int*)malloc(n * sizeof(int));
  int* h3 = (int*)malloc(n * sizeof(int));
  CK(cudaMemcpy(h1, d_out1, n * sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(h2, d_out2, n * sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(h3, d_out3, n * sizeof(int), cudaMemcpyDeviceToHost));
  // host check of launch 1 (cluster of 4): element i reads the next block's slice
  for (int i = 0; i < n; ++i) {
    int blk = i / BLOCK, t = i % BLOCK, rank = blk % 4;
    int pb = blk - rank + (rank + 1) % 4, pi = pb * BLOCK + (t + 1) % BLOCK;
    int exp = h_in[i] * 3 + (pi < n ? h_in[pi] : 0) + rank * 1000 + 4;
    if (h1[i] != exp) { fprintf(stderr, "mismatch at %d: %d != %d\n", i, h1[i], exp); return 1; }
  }
  uint64_t h = fnv1a(h1, n * sizeof(int));
  h = fnv1a(h2, n * sizeof(int), h);
  h = fnv1a(h3, n * sizeof(int), h);
  printf("cluster: coop=%d out1[5]=%d out2[5]=%d out3[5]=%d\n", coop, h1[5], h2[5], h3[5]);
  printf("checksum=%016llx\n", (unsigned long long)h);
  CK(cudaFree(d_in)); CK(cudaFree(d_out1)); CK(cudaFree(d_out2)); CK(cudaFree(d_out3));
  free(h_in); free(h1); free(h2); free(h3);
  return 0;
}
