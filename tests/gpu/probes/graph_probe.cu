// graph_probe.cu: questions the recorder's design depends on, answered on the GPU machine.
//  1. after a graph is destroyed (as PyTorch does right after instantiating), do its node handles
//     still address the executable's nodes (cuGraphNodeSetEnabled, cuGraphExecKernelNodeSetParams)?
//  2. does replacing cuGraphLaunch's executable in the CUPTI enter callback change what runs?
//  3. kernel node parameters of a captured cudart launch: CUfunction or CUkernel?
//  4. pinned host memory: device pointers, cuMemcpyDtoH from a host pointer, and host memory
//     mapped at a fixed address then registered: is its device address the host address?
//  5. texture object handle values.
// Build: nvcc -O2 -arch=sm_90 -o graph_probe graph_probe.cu -lcuda -lcupti (CUPTI include/lib paths)
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <sys/mman.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void add1(int *p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] += 1; }
__global__ void readh(const float *h, float *out) { out[threadIdx.x] = h[threadIdx.x] + 1.0f; }

static CUgraphExec swap_to = 0;
static int swapped = 0;
static void CUPTIAPI cb(void *, CUpti_CallbackDomain dom, CUpti_CallbackId id, const void *data) {
  if (dom != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const CUpti_CallbackData *d = (const CUpti_CallbackData *)data;
  if ((id == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch || id == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz) &&
      d->callbackSite == CUPTI_API_ENTER && swap_to) {
    ((cuGraphLaunch_params *)d->functionParams)->hGraph = swap_to;
    swapped++;
  }
}

static int read0(int *d) { int h; CK(cudaMemcpy(&h, d, 4, cudaMemcpyDeviceToHost)); return h; }

int main() {
  CUpti_SubscriberHandle sub;
  printf("cupti subscribe: %d\n", (int)cuptiSubscribe(&sub, cb, nullptr));
  cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch);
  cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz);
  int *buf; const int n = 1024;
  CK(cudaMalloc(&buf, n * 4)); CK(cudaMemset(buf, 0, n * 4));
  cudaStream_t s; CK(cudaStreamCreate(&s));
  cudaGraph_t g; CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  add1<<<4, 256, 0, s>>>(buf, n);
  CK(cudaStreamEndCapture(s, &g));
  size_t cnt = 0; cuGraphGetNodes(g, nullptr, &cnt);
  CUgraphNode nodes[4]; cuGraphGetNodes(g, nodes, &cnt);
  CUDA_KERNEL_NODE_PARAMS_v2 kp; memset(&kp, 0, sizeof kp);
  CUresult r = cuGraphKernelNodeGetParams_v2(nodes[0], &kp);
  printf("3. kernel node params r=%d func=%p kern=%p ctx=%p kernelParams=%p extra=%p\n", r, (void *)kp.func, (void *)kp.kern,
         (void *)kp.ctx, (void *)kp.kernelParams, (void *)kp.extra);
  if (kp.func) { const char *nm = 0; printf("   cuFuncGetName on func: %d %s\n", cuFuncGetName(&nm, kp.func), nm ? nm : "-"); }
  cudaGraphExec_t e; CK(cudaGraphInstantiate(&e, g, 0));
  CK(cudaGraphDestroy(g));
  // 1. node handles after the graph is gone
  r = cuGraphNodeSetEnabled((CUgraphExec)e, nodes[0], 0);
  CK(cudaGraphLaunch(e, s)); CK(cudaStreamSynchronize(s));
  printf("1. cuGraphNodeSetEnabled(destroyed graph's node, 0) = %d; after launch buf[0] = %d (0: disabled took effect)\n", r, read0(buf));
  r = cuGraphNodeSetEnabled((CUgraphExec)e, nodes[0], 1);
  CK(cudaGraphLaunch(e, s)); CK(cudaStreamSynchronize(s));
  printf("   re-enabled = %d; buf[0] = %d\n", r, read0(buf));
  // 2. swapping the executable inside the enter callback
  cudaGraph_t empty; CK(cudaGraphCreate(&empty, 0));
  cudaGraphExec_t empty_exec; CK(cudaGraphInstantiate(&empty_exec, empty, 0));
  int before = read0(buf);
  swap_to = (CUgraphExec)empty_exec;
  CK(cudaGraphLaunch(e, s)); CK(cudaStreamSynchronize(s));
  swap_to = 0;
  printf("2. swapped %d launch(es); buf[0] before %d after %d (unchanged: the swap took effect)\n", swapped, before, read0(buf));
  // 4. host memory
  float *h; CK(cudaHostAlloc(&h, 1 << 20, cudaHostAllocMapped));
  for (int i = 0; i < 256; i++) h[i] = (float)i;
  CUdeviceptr dp = 0; r = cuMemHostGetDevicePointer(&dp, h, 0);
  float tmp[4] = {0};
  CUresult r2 = cuMemcpyDtoH(tmp, (CUdeviceptr)h, 16);
  CUresult r3 = cuMemcpy((CUdeviceptr)tmp, (CUdeviceptr)h, 16);
  printf("4. cudaHostAlloc %p device %p (r=%d); cuMemcpyDtoH from it r=%d tmp[3]=%g; cuMemcpy r=%d\n", (void *)h, (void *)dp, r, r2, tmp[3], r3);
  float *mh; CK(cudaMallocHost(&mh, 4096));
  r = cuMemHostGetDevicePointer(&dp, mh, 0);
  printf("   cudaMallocHost %p device %p (r=%d)\n", (void *)mh, (void *)dp, r);
  void *want = (void *)0x7e1234000000ull;
  void *m = mmap(want, 2 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  r = cuMemHostRegister(m, 2 << 20, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE);
  CUresult rp = cuMemHostGetDevicePointer(&dp, m, 0);
  for (int i = 0; i < 256; i++) ((float *)m)[i] = 2.0f * i;
  float *dout; CK(cudaMalloc(&dout, 1024));
  readh<<<1, 256>>>((float *)m, dout);
  cudaError_t ke = cudaDeviceSynchronize();
  float o[4]; CK(cudaMemcpy(o, dout, 16, cudaMemcpyDeviceToHost));
  printf("   mmap at %p -> %p; cuMemHostRegister r=%d; device pointer %p (r=%d); kernel read: %s out[3]=%g (want 7)\n", want, m, r,
         (void *)dp, rp, cudaGetErrorString(ke), o[3]);
  // 5. texture handles
  cudaResourceDesc rd = {}; rd.resType = cudaResourceTypeLinear; rd.res.linear.devPtr = buf;
  rd.res.linear.desc = cudaCreateChannelDesc<int>(); rd.res.linear.sizeInBytes = n * 4;
  cudaTextureDesc td = {};
  cudaTextureObject_t t1, t2, t3;
  CK(cudaCreateTextureObject(&t1, &rd, &td, nullptr)); CK(cudaCreateTextureObject(&t2, &rd, &td, nullptr));
  CK(cudaDestroyTextureObject(t1)); CK(cudaCreateTextureObject(&t3, &rd, &td, nullptr));
  printf("5. texture handles %llu %llu, after destroying the first: %llu\n", t1, t2, t3);
  return 0;
}
