// same_name.cu: one kernel name in two images. Two NVRTC programs define `rr_same` with other
// bodies; one is loaded as a module (cuModuleLoadData), the other as a library
// (cuLibraryLoadData, launched through its CUkernel), and a third copy of the first as another
// module. Each launch must be recorded with the image it ran from (replays verify).
// Build: nvcc -O2 -arch=sm_90 -o same_name same_name.cu -lcuda -lnvrtc
#include <cuda.h>
#include <nvrtc.h>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#define CU(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s_ = "?"; \
  cuGetErrorName(r_, &s_); fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, s_); \
  exit(1); } } while (0)
#define NV(x) do { nvrtcResult r_ = (x); if (r_ != NVRTC_SUCCESS) { \
  fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, nvrtcGetErrorString(r_)); \
  exit(1); } } while (0)

static const char *kAdd = R"(
extern "C" __global__ void rr_same(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + 1.0f;
})";
static const char *kMul = R"(
__device__ float scale = 3.0f;
extern "C" __global__ void rr_same(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * scale;
})";

static std::vector<char> cubin(const char *src) {
  nvrtcProgram p;
  NV(nvrtcCreateProgram(&p, src, "same.cu", 0, nullptr, nullptr));
  const char *opts[] = {"-arch=sm_90"};
  NV(nvrtcCompileProgram(p, 1, opts));
  size_t n;
  NV(nvrtcGetCUBINSize(p, &n));
  std::vector<char> out(n);
  NV(nvrtcGetCUBIN(p, out.data()));
  NV(nvrtcDestroyProgram(&p));
  return out;
}

static uint64_t fnv(const void *p, size_t n, uint64_t h = 1469598103934665603ull) {
  const unsigned char *b = (const unsigned char *)p;
  for (size_t i = 0; i < n; ++i) { h ^= b[i]; h *= 1099511628211ull; }
  return h;
}

int main() {
  CU(cuInit(0));
  CUdevice dev;
  CUcontext ctx;
  CU(cuDeviceGet(&dev, 0));
  CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU(cuCtxSetCurrent(ctx));
  std::vector<char> add = cubin(kAdd), mul = cubin(kMul);
  CUmodule m_add, m_add2;
  CUlibrary l_mul;
  CU(cuModuleLoadData(&m_add, add.data()));
  CU(cuLibraryLoadData(&l_mul, mul.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  CU(cuModuleLoadData(&m_add2, add.data()));
  CUfunction f_add, f_add2;
  CUkernel k_mul;
  CU(cuModuleGetFunction(&f_add, m_add, "rr_same"));
  CU(cuModuleGetFunction(&f_add2, m_add2, "rr_same"));
  CU(cuLibraryGetKernel(&k_mul, l_mul, "rr_same"));
  const int n = 1 << 16;
  CUdeviceptr x, y1, y2, y3;
  for (CUdeviceptr *p : {&x, &y1, &y2, &y3}) CU(cuMemAlloc(p, n * sizeof(float)));
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = (float)(i % 1000) * 0.5f;
  CU(cuMemcpyHtoD(x, h.data(), n * sizeof(float)));
  int nn = n;
  void *a1[] = {&x, &y1, &nn}, *a2[] = {&x, &y2, &nn}, *a3[] = {&x, &y3, &nn};
  // Other geometries, so that each launch is the first of its configuration (recorded).
  CU(cuLaunchKernel(f_add, n / 256, 1, 1, 256, 1, 1, 0, 0, a1, nullptr));
  CU(cuLaunchKernel((CUfunction)k_mul, n / 128, 1, 1, 128, 1, 1, 0, 0, a2, nullptr));
  CU(cuLaunchKernel(f_add2, n / 64, 1, 1, 64, 1, 1, 0, 0, a3, nullptr));
  CU(cuCtxSynchronize());
  uint64_t sum = 1469598103934665603ull;
  for (CUdeviceptr p : {y1, y2, y3}) {
    CU(cuMemcpyDtoH(h.data(), p, n * sizeof(float)));
    sum = fnv(h.data(), n * sizeof(float), sum);
  }
  printf("same_name: three launches of rr_same from two modules and a library\n");
  printf("checksum=%016llx\n", (unsigned long long)sum);
  return 0;
}
