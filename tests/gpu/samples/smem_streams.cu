// smem_streams.cu: dynamic shared memory > 48 KiB (cudaFuncSetAttribute), two
// non-blocking streams running independent kernels, 3-D grids.
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

constexpr int TILE = 20480;                       // floats per block: 80 KiB of dynamic smem
constexpr size_t SMEM_BYTES = TILE * sizeof(float) + 256 * sizeof(float);

__global__ void k_fill(float* a, int n, float base) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = base + (float)(i % 977) * 0.001f;
}

// One block per tile; blocks indexed by a 3-D grid. Loads the tile into dynamic
// smem, reverses it, and does a fixed-order tree reduction (deterministic).
__global__ void k_smem_reverse(const float* in, float* out, float* sums) {
  extern __shared__ float sm[];                   // TILE + 256 floats
  float* red = sm + TILE;
  const int blk = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const float* src = in + (size_t)blk * TILE;
  float* dst = out + (size_t)blk * TILE;
  for (int i = threadIdx.x; i < TILE; i += blockDim.x) sm[i] = src[i];
  __syncthreads();
  float acc = 0.0f;
  for (int i = threadIdx.x; i < TILE; i += blockDim.x) {
    float v = sm[TILE - 1 - i] * 2.0f + sm[(i * 3) % TILE];
    dst[i] = v;
    acc += v;
  }
  red[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blk] = red[0];
}

// Independent work for the second stream: 3-D grid over a 3-D volume.
__global__ void k_stencil3d(const float* in, float* out, int nx, int ny, int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || y >= ny || z >= nz) return;
  auto at = [&](int xx, int yy, int zz) {
    xx = min(max(xx, 0), nx - 1); yy = min(max(yy, 0), ny - 1); zz = min(max(zz, 0), nz - 1);
    return in[((size_t)zz * ny + yy) * nx + xx];
  };
  out[((size_t)z * ny + y) * nx + x] = 0.4f * at(x, y, z) + 0.1f * (at(x - 1, y, z) + at(x + 1, y, z)
      + at(x, y - 1, z) + at(x, y + 1, z) + at(x, y, z - 1) + at(x, y, z + 1));
}

int main() {
  const dim3 gridA(4, 2, 2);                      // 16 tiles
  const int tilesA = gridA.x * gridA.y * gridA.z;
  const int nA = tilesA * TILE;
  const int nx = 70, ny = 33, nz = 9, nB = nx * ny * nz;
  const dim3 blockB(8, 8, 4);
  const dim3 gridB((nx + 7) / 8, (ny + 7) / 8, (nz + 3) / 4);

  CK(cudaFuncSetAttribute(k_smem_reverse, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)SMEM_BYTES));

  cudaStream_t s1, s2;
  CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  float *inA, *outA, *sumsA, *inB, *outB;
  CK(cudaMalloc(&inA, nA * sizeof(float)));
  CK(cudaMalloc(&outA, nA * sizeof(float)));
  CK(cudaMalloc(&sumsA, tilesA * sizeof(float)));
  CK(cudaMalloc(&inB, nB * sizeof(float)));
  CK(cudaMalloc(&outB, nB * sizeof(float)));

  k_fill<<<(nA + 255) / 256, 256, 0, s1>>>(inA, nA, 1.0f);
  k_smem_reverse<<<gridA, 256, SMEM_BYTES, s1>>>(inA, outA, sumsA);
  CK(cudaGetLastError());
  k_fill<<<(nB + 255) / 256, 256, 0, s2>>>(inB, nB, -2.0f);
  k_stencil3d<<<gridB, blockB, 0, s2>>>(inB, outB, nx, ny, nz);
  k_stencil3d<<<gridB, blockB, 0, s2>>>(outB, inB, nx, ny, nz);   // ping-pong
  CK(cudaGetLastError());
  CK(cudaStreamSynchronize(s1));
  CK(cudaStreamSynchronize(s2));

  float* hA = (float*)malloc(nA * sizeof(float));
  float* hS = (float*)malloc(tilesA * sizeof(float));
  float* hB = (float*)malloc(nB * sizeof(float));
  CK(cudaMemcpy(hA, outA, nA * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hS, sumsA, tilesA * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hB, inB, nB * sizeof(float), cudaMemcpyDeviceToHost));
  uint64_t h = fnv1a(hA, nA * sizeof(float));
  h = fnv1a(hS, tilesA * sizeof(float), h);
  h = fnv1a(hB, nB * sizeof(float), h);
  printf("smem_streams: smem=%zu B gridA=%ux%ux%u gridB=%ux%ux%u sum[0]=%.4f vol[0]=%.6f\n",
         SMEM_BYTES, gridA.x, gridA.y, gridA.z, gridB.x, gridB.y, gridB.z, hS[0], hB[0]);
  printf("checksum=%016llx\n", (unsigned long long)h);
  CK(cudaFree(inA)); CK(cudaFree(outA)); CK(cudaFree(sumsA)); CK(cudaFree(inB)); CK(cudaFree(outB));
  CK(cudaStreamDestroy(s1)); CK(cudaStreamDestroy(s2));
  free(hA); free(hS); free(hB);
  return 0;
}
