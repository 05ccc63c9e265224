// nvrtc.cu: pure driver-API program (no runtime launches). Kernels are compiled at
// run time with NVRTC: program A to a sm_90 cubin (nvrtcGetCUBIN), program B to PTX
// (JIT-compiled by the driver). Launches:
//   1. cuLaunchKernel(axpb) with kernelParams          (module from cuModuleLoadData(cubin))
//   2. cuLaunchKernel(axpb) with extra = CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE (layout from cuFuncGetParamInfo)
//   3. cuLaunchKernel(mix)  with kernelParams          (module from cuModuleLoadDataEx(PTX))
//   4. cuLaunchKernel(CUkernel from cuLibraryLoadData + cuLibraryGetKernel) with kernelParams
// Build: nvcc -O2 -arch=sm_90 -o nvrtc nvrtc.cu -lcuda -lnvrtc
#include <cuda.h>
#include <nvrtc.h>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <vector>
#define CU(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s_ = "?"; \
  cuGetErrorName(r_, &s_); \
  fprintf(stderr, "%s:%d: %s failed: %d %s\n", __FILE__, __LINE__, #x, (int)r_, s_); \
  exit(1); } } while (0)
#define NV(x) do { nvrtcResult r_ = (x); if (r_ != NVRTC_SUCCESS) { \
  fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, nvrtcGetErrorString(r_)); \
  exit(1); } } while (0)
static inline uint64_t fnv1a(const void* p, size_t n, uint64_t h = 1469598103934665603ull) {
  const unsigned char* b = (const unsigned char*)p;
  for (size_t i = 0; i < n; ++i) { h ^= b[i]; h *= 1099511628211ull; }
  return h;
}

static const char* kSrcA = R"(
__constant__ float coef[4];
__device__ unsigned int calls;
extern "C" __global__ void axpb(float a, const float* x, float* y, int n, double b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + (float)b + coef[i & 3];
  if (i == 0) atomicAdd(&calls, 1u);
})";
static const char* kSrcB = R"(
extern "C" __global__ void mix(const float* y1, const float* y2, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __float_as_uint(y1[i]) ^ (__float_as_uint(y2[(i * 5) % n]) >> 1);
})";

static std::vector<char> compile(const char* src, const char* name, const char* arch, bool cubin) {
  nvrtcProgram p;
  NV(nvrtcCreateProgram(&p, src, name, 0, nullptr, nullptr));
  const char* opts[] = {arch};
  nvrtcResult r = nvrtcCompileProgram(p, 1, opts);
  if (r != NVRTC_SUCCESS) {
    size_t n; nvrtcGetProgramLogSize(p, &n);
    std::vector<char> log(n + 1); nvrtcGetProgramLog(p, log.data());
    fprintf(stderr, "NVRTC %s: %s\n%s\n", name, nvrtcGetErrorString(r), log.data());
    exit(1);
  }
  size_t n = 0;
  std::vector<char> out;
  if (cubin) { NV(nvrtcGetCUBINSize(p, &n)); out.resize(n); NV(nvrtcGetCUBIN(p, out.data())); }
  else       { NV(nvrtcGetPTXSize(p, &n));   out.resize(n); NV(nvrtcGetPTX(p, out.data())); }
  NV(nvrtcDestroyProgram(&p));
  return out;
}

int main() {
  CU(cuInit(0));
  CUdevice dev; CUcontext ctx;
  CU(cuDeviceGet(&dev, 0));
  CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU(cuCtxSetCurrent(ctx));

  std::vector<char> cubin = compile(kSrcA, "axpb.cu", "--gpu-architecture=sm_90", true);
  std::vector<char> ptx = compile(kSrcB, "mix.cu", "--gpu-architecture=compute_90", false);
  CUmodule modA, modB; CUfunction fA, fB;
  CU(cuModuleLoadData(&modA, cubin.data()));
  CU(cuModuleLoadDataEx(&modB, ptx.data(), 0, nullptr, nullptr));
  CU(cuModuleGetFunction(&fA, modA, "axpb"));
  CU(cuModuleGetFunction(&fB, modB, "mix"));

  const int n = 5000, block = 128, grid = (n + block - 1) / block;
  std::vector<float> hx(n);
  for (int i = 0; i < n; ++i) hx[i] = (float)((i * 29) % 211) * 0.125f - 7.0f;
  const float hcoef[4] = {0.5f, -0.25f, 1.0f, 3.0f};
  CUdeviceptr dx, dy1, dy2, dy4, dout, gcoef, gcalls; size_t gsz;
  CU(cuMemAlloc(&dx, n * sizeof(float)));
  CU(cuMemAlloc(&dy1, n * sizeof(float)));
  CU(cuMemAlloc(&dy2, n * sizeof(float)));
  CU(cuMemAlloc(&dy4, n * sizeof(float)));
  CU(cuMemAlloc(&dout, n * sizeof(unsigned)));
  CU(cuMemcpyHtoD(dx, hx.data(), n * sizeof(float)));
  CU(cuModuleGetGlobal(&gcoef, &gsz, modA, "coef"));
  CU(cuMemcpyHtoD(gcoef, hcoef, sizeof(hcoef)));

  // 1. kernelParams form
  float a = 1.75f; double b = -0.5; int nn = n;
  void* args1[] = {&a, &dx, &dy1, &nn, &b};
  CU(cuLaunchKernel(fA, grid, 1, 1, block, 1, 1, 0, 0, args1, nullptr));

  // 2. extra form: pack a parameter buffer using the layout reported by the driver
  const size_t expOff[5] = {0, 8, 16, 24, 32}, expSize[5] = {4, 8, 8, 4, 8};
  for (size_t i = 0; i < 5; ++i) {
    size_t off = 0, sz = 0;
    CU(cuFuncGetParamInfo(fA, i, &off, &sz));
    if (off != expOff[i] || sz != expSize[i]) { fprintf(stderr, "param %zu: off %zu size %zu\n", i, off, sz); return 1; }
  }
  alignas(16) unsigned char buf[40];
  memset(buf, 0, sizeof(buf));
  float a2 = -3.0f; double b2 = 0.25;
  memcpy(buf + 0, &a2, 4); memcpy(buf + 8, &dx, 8); memcpy(buf + 16, &dy2, 8);
  memcpy(buf + 24, &nn, 4); memcpy(buf + 32, &b2, 8);
  size_t bufSize = sizeof(buf);
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &bufSize, CU_LAUNCH_PARAM_END};
  CU(cuLaunchKernel(fA, grid, 1, 1, block, 1, 1, 0, 0, nullptr, extra));

  // 3. PTX module (JIT), kernelParams form
  void* args3[] = {&dy1, &dy2, &dout, &nn};
  CU(cuLaunchKernel(fB, grid, 1, 1, block, 1, 1, 0, 0, args3, nullptr));

  // 4. library API: CUkernel handle passed to cuLaunchKernel
  CUlibrary lib; CUkernel k; CUdeviceptr lcoef; size_t lsz;
  CU(cuLibraryLoadData(&lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  CU(cuLibraryGetKernel(&k, lib, "axpb"));
  CU(cuLibraryGetGlobal(&lcoef, &lsz, lib, "coef"));
  const float hcoef2[4] = {-1.0f, 2.0f, -4.0f, 8.0f};
  CU(cuMemcpyHtoD(lcoef, hcoef2, sizeof(hcoef2)));
  float a4 = 0.5f; double b4 = 4.0;
  void* args4[] = {&a4, &dx, &dy4, &nn, &b4};
  CU(cuLaunchKernel((CUfunction)k, grid, 1, 1, block, 1, 1, 0, 0, args4, nullptr));
  CU(cuCtxSynchronize());

  std::vector<float> y1(n), y2(n), y4(n); std::vector<unsigned> out(n); unsigned calls = 0;
  CU(cuMemcpyDtoH(y1.data(), dy1, n * sizeof(float)));
  CU(cuMemcpyDtoH(y2.data(), dy2, n * sizeof(float)));
  CU(cuMemcpyDtoH(y4.data(), dy4, n * sizeof(float)));
  CU(cuMemcpyDtoH(out.data(), dout, n * sizeof(unsigned)));
  CU(cuModuleGetGlobal(&gcalls, &gsz, modA, "calls"));
  CU(cuMemcpyDtoH(&calls, gcalls, sizeof(calls)));
  uint64_t h = fnv1a(y1.data(), n * sizeof(float));
  h = fnv1a(y2.data(), n * sizeof(float), h);
  h = fnv1a(out.data(), n * sizeof(unsigned), h);
  h = fnv1a(y4.data(), n * sizeof(float), h);
  h = fnv1a(&calls, sizeof(calls), h);
  printf("nvrtc: cubin=%zu B ptx=%zu B calls(modA)=%u y1[3]=%.5f y2[3]=%.5f y4[3]=%.5f out[3]=%08x\n",
         cubin.size(), ptx.size(), calls, y1[3], y2[3], y4[3], out[3]);
  printf("checksum=%016llx\n", (unsigned long long)h);
  CU(cuLibraryUnload(lib)); CU(cuModuleUnload(modA)); CU(cuModuleUnload(modB));
  CU(cuMemFree(dx)); CU(cuMemFree(dy1)); CU(cuMemFree(dy2)); CU(cuMemFree(dy4)); CU(cuMemFree(dout));
  CU(cuDevicePrimaryCtxRelease(dev));
  return 0;
}
