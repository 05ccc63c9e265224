// structs.cu: struct passed by value (56 bytes: int/float/pointers/array/u64),
// 2-D grid x 3-D block, __constant__ table set with cudaMemcpyToSymbol,
// __device__ counter (integer atomics only) and an initialized __device__ int.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstddef>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
  exit(1); } } while (0)

// FNV-1a 64 over raw bytes; chain calls by passing the previous hash.
static inline uint64_t fnv1a(const void* p, size_t n, uint64_t h = 1469598103934665603ull) {
  const unsigned char* b = (const unsigned char*)p;
  for (size_t i = 0; i < n; ++i) { h ^= b[i]; h *= 1099511628211ull; }
  return h;
}

struct Params {                 // offsets on x86-64 and device are identical
  int n;                        //  0
  float scale;                  //  4
  const float* in;              //  8
  float* out;                   // 16
  int stride;                   // 24
  float bias[3];                // 28
  unsigned long long seed;      // 40
  int* hist;                    // 48
};
static_assert(sizeof(Params) == 56, "unexpected Params layout");

__constant__ float c_table[64];
__device__ unsigned int d_counter;      // number of blocks run so far
__device__ int d_offset = 7;            // initialized global

__global__ void k_struct(Params p) {
  const int tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int nthr = blockDim.x * blockDim.y * blockDim.z;
  const int bid = blockIdx.x + gridDim.x * blockIdx.y;
  const int i = bid * nthr + tid;
  if (i < p.n) {
    unsigned long long h = p.seed ^ ((unsigned long long)i * 0x9E3779B97F4A7C15ull);
    h ^= h >> 29;
    const int j = (i * p.stride) % p.n;
    float v = p.in[j] * p.scale + c_table[(i + (int)(h & 7)) & 63] + p.bias[i % 3] + (float)d_offset;
    p.out[i] = v;
    atomicAdd(&p.hist[h % 16], 1);      // integer atomics: order-independent totals
  }
  if (tid == 0) atomicAdd(&d_counter, 1u);
}

// Reads the globals back into a buffer (another launch that depends on device state).
__global__ void k_read_globals(unsigned int* dst) {
  if (threadIdx.x == 0) { dst[0] = d_counter; dst[1] = (unsigned)d_offset; }
  if (threadIdx.x < 64) dst[2 + threadIdx.x] = __float_as_uint(c_table[threadIdx.x]);
}

int main() {
  const int n = 4000;                       // not a multiple of the block size
  const dim3 block(8, 4, 4);                // 128 threads, 3-D
  const int nthr = block.x * block.y * block.z;
  const int nblk = (n + nthr - 1) / nthr;   // 32
  const dim3 grid(8, (nblk + 7) / 8);       // 2-D: 8 x 4

  float h_table[64];
  for (int i = 0; i < 64; ++i) h_table[i] = 0.25f * (float)i - 3.0f;
  CK(cudaMemcpyToSymbol(c_table, h_table, sizeof(h_table)));

  float* h_in = (float*)malloc(n * sizeof(float));
  for (int i = 0; i < n; ++i) h_in[i] = (float)((i * 37) % 101) / 7.0f;

  float *d_in, *d_out; int* d_hist; unsigned int* d_glob;
  CK(cudaMalloc(&d_in, n * sizeof(float)));
  CK(cudaMalloc(&d_out, 2 * n * sizeof(float)));
  CK(cudaMalloc(&d_hist, 16 * sizeof(int)));
  CK(cudaMalloc(&d_glob, 66 * sizeof(unsigned int)));
  CK(cudaMemcpy(d_in, h_in, n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemset(d_hist, 0, 16 * sizeof(int)));
  CK(cudaMemset(d_out, 0, 2 * n * sizeof(float)));

  Params p;
  p.n = n; p.scale = 1.5f; p.in = d_in; p.out = d_out; p.stride = 7;
  p.bias[0] = 0.5f; p.bias[1] = -1.25f; p.bias[2] = 2.0f;
  p.seed = 0x0123456789abcdefull; p.hist = d_hist;
  k_struct<<<grid, block>>>(p);
  CK(cudaGetLastError());

  p.scale = -0.75f; p.out = d_out + n; p.stride = 13; p.seed = 42;   // second launch, other values
  k_struct<<<grid, block>>>(p);
  CK(cudaGetLastError());

  k_read_globals<<<1, 64>>>(d_glob);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());

  float* h_out = (float*)malloc(2 * n * sizeof(float));
  int h_hist[16]; unsigned int h_glob[66]; unsigned int h_counter = 0;
  CK(cudaMemcpy(h_out, d_out, 2 * n * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(h_hist, d_hist, sizeof(h_hist), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(h_glob, d_glob, sizeof(h_glob), cudaMemcpyDeviceToHost));
  CK(cudaMemcpyFromSymbol(&h_counter, d_counter, sizeof(h_counter)));

  uint64_t h = fnv1a(h_out, 2 * n * sizeof(float));
  h = fnv1a(h_hist, sizeof(h_hist), h);
  h = fnv1a(h_glob, sizeof(h_glob), h);
  printf("structs: n=%d grid=%ux%u block=%ux%ux%u blocks_counted=%u out[0]=%.6f out[%d]=%.6f\n",
         n, grid.x, grid.y, block.x, block.y, block.z, h_counter, h_out[0], 2 * n - 1, h_out[2 * n - 1]);
  printf("checksum=%016llx\n", (unsigned long long)h);
  CK(cudaFree(d_in)); CK(cudaFree(d_out)); CK(cudaFree(d_hist)); CK(cudaFree(d_glob));
  free(h_in); free(h_out);
  return 0;
}
