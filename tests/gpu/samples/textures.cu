// textures.cu: kernels that take texture and surface objects (64-bit handles passed by value).
//   k_tex_linear   tex1Dfetch over linear device memory
//   k_tex_array    tex2D over a CUDA array, linear filtering, clamped, normalised coordinates
//                  (the texture descriptor matters: a replay with other filtering reads other values)
//   k_surf_write   surf2Dwrite into a CUDA array (surface load/store), read back by the host
//   k_tex_struct   a texture object inside a struct passed by value
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void k_tex_linear(cudaTextureObject_t t, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(t, i) * 2.0f + (float)i;
}
__global__ void k_tex_array(cudaTextureObject_t t, float *out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) out[y * w + x] = tex2D<float>(t, (x + 0.3f) / w, (y + 0.7f) / h);
}
__global__ void k_surf_write(cudaSurfaceObject_t s, int w, int h, float scale) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) surf2Dwrite((float)(x * 3 + y) * scale, s, x * 4, y);
}
struct Sampler { int n; cudaTextureObject_t tex; float bias; };
__global__ void k_tex_struct(Sampler s, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < s.n) out[i] = tex1Dfetch<float>(s.tex, (i * 5) % s.n) + s.bias;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = (const unsigned char *)p;
  for (size_t i = 0; i < n; i++) { h ^= b[i]; h *= 1099511628211ull; }
  return h;
}

int main() {
  const int n = 1 << 16, w = 256, h = 128;
  std::vector<float> host(n), img(w * h);
  for (int i = 0; i < n; i++) host[i] = (float)((i * 13) % 1009) * 0.125f;
  for (int i = 0; i < w * h; i++) img[i] = (float)((i * 7) % 251) - 100.0f;
  float *lin, *out1, *out2, *out3;
  CK(cudaMalloc(&lin, n * 4));
  CK(cudaMalloc(&out1, n * 4));
  CK(cudaMalloc(&out2, w * h * 4));
  CK(cudaMalloc(&out3, n * 4));
  CK(cudaMemcpy(lin, host.data(), n * 4, cudaMemcpyHostToDevice));

  cudaResourceDesc rl = {};
  rl.resType = cudaResourceTypeLinear;
  rl.res.linear.devPtr = lin;
  rl.res.linear.desc = cudaCreateChannelDesc<float>();
  rl.res.linear.sizeInBytes = n * 4;
  cudaTextureDesc tl = {};
  tl.readMode = cudaReadModeElementType;
  cudaTextureObject_t t_lin;
  CK(cudaCreateTextureObject(&t_lin, &rl, &tl, nullptr));

  cudaChannelFormatDesc cf = cudaCreateChannelDesc<float>();
  cudaArray_t arr, surf_arr;
  CK(cudaMallocArray(&arr, &cf, w, h));
  CK(cudaMemcpy2DToArray(arr, 0, 0, img.data(), w * 4, w * 4, h, cudaMemcpyHostToDevice));
  cudaResourceDesc ra = {};
  ra.resType = cudaResourceTypeArray;
  ra.res.array.array = arr;
  cudaTextureDesc ta = {};
  ta.addressMode[0] = ta.addressMode[1] = cudaAddressModeClamp;
  ta.filterMode = cudaFilterModeLinear;
  ta.readMode = cudaReadModeElementType;
  ta.normalizedCoords = 1;
  cudaTextureObject_t t_arr;
  CK(cudaCreateTextureObject(&t_arr, &ra, &ta, nullptr));

  CK(cudaMallocArray(&surf_arr, &cf, w, h, cudaArraySurfaceLoadStore));
  cudaResourceDesc rs = {};
  rs.resType = cudaResourceTypeArray;
  rs.res.array.array = surf_arr;
  cudaSurfaceObject_t s;
  CK(cudaCreateSurfaceObject(&s, &rs));

  k_tex_linear<<<(n + 255) / 256, 256>>>(t_lin, out1, n);
  dim3 blk(16, 16), grd((w + 15) / 16, (h + 15) / 16);
  k_tex_array<<<grd, blk>>>(t_arr, out2, w, h);
  k_surf_write<<<grd, blk>>>(s, w, h, 0.5f);
  Sampler smp = {n, t_lin, 3.0f};
  k_tex_struct<<<(n + 255) / 256, 256>>>(smp, out3);
  CK(cudaDeviceSynchronize());

  std::vector<float> r1(n), r2(w * h), r3(n), r4(w * h);
  CK(cudaMemcpy(r1.data(), out1, n * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(r2.data(), out2, w * h * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(r3.data(), out3, n * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy2DFromArray(r4.data(), w * 4, surf_arr, 0, 0, w * 4, h, cudaMemcpyDeviceToHost));
  printf("textures: handles linear=%llu array=%llu surface=%llu\n", (unsigned long long)t_lin,
         (unsigned long long)t_arr, (unsigned long long)s);
  uint64_t hsh = fnv(1469598103934665603ull, r1.data(), n * 4);
  hsh = fnv(hsh, r2.data(), w * h * 4);
  hsh = fnv(hsh, r3.data(), n * 4);
  hsh = fnv(hsh, r4.data(), w * h * 4);
  printf("checksum=%016llx\n", (unsigned long long)hsh);
  CK(cudaDestroyTextureObject(t_lin));
  CK(cudaDestroyTextureObject(t_arr));
  CK(cudaDestroySurfaceObject(s));
  return 0;
}
