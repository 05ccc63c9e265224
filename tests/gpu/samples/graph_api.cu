// graph_api.cu: CUDA graphs built with the graph API and by stream capture, for the recorder.
// One graph holds kernel, memset, memcpy, child-graph, event-record, event-wait and host nodes;
// it is instantiated, its source graph destroyed (as PyTorch does), launched, one kernel node
// updated (cudaGraphExecKernelNodeSetParams) and the whole executable updated from a graph of
// the same shape (cudaGraphExecUpdate). A second graph comes from stream capture (cudart's
// CUkernel handles in its nodes). The host node counts its calls: a recorder that ran the graph
// twice, or skipped the node, changes the checksum.
//   graph_api [LAUNCHES]   (default 4)
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void k_fill(float *a, int n, float v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = v + (i % 97) * 0.5f;
}
__global__ void k_axpy(float *y, const float *x, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
__global__ void k_square(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] * a[i] * 0.001f;
}
// Integer atomics only: the sum is the same whatever the order.
__global__ void k_sum(const float *a, const float *b, int n, unsigned long long *acc) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(acc, (unsigned long long)(long long)(a[i] * 16.0f + b[i] * 4.0f));
}

static int host_calls = 0;
static void CUDART_CB on_host(void *) { host_calls++; }

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = (const unsigned char *)p;
  for (size_t i = 0; i < n; i++) { h ^= b[i]; h *= 1099511628211ull; }
  return h;
}

static cudaGraphNode_t kernel(cudaGraph_t g, std::vector<cudaGraphNode_t> deps, void *fn, int n, void **args) {
  cudaKernelNodeParams p = {};
  p.func = fn; p.gridDim = dim3((n + 255) / 256); p.blockDim = dim3(256); p.kernelParams = args;
  cudaGraphNode_t node;
  CK(cudaGraphAddKernelNode(&node, g, deps.data(), deps.size(), &p));
  return node;
}

// The main graph; `v` is k_fill's value (a second graph of the same shape differs only there).
struct Bufs { float *x, *y, *z, *w, *u; unsigned long long *acc; int n; cudaEvent_t done, ready; };
static cudaGraph_t build(Bufs &b, float *v) {
  cudaGraph_t g, child;
  CK(cudaGraphCreate(&g, 0));
  CK(cudaGraphCreate(&child, 0));
  // Child graph: z <- 0, then z += 2 x.
  cudaMemsetParams ms = {};
  ms.dst = b.z; ms.value = 0; ms.elementSize = 4; ms.width = b.n; ms.height = 1;
  cudaGraphNode_t cz;
  CK(cudaGraphAddMemsetNode(&cz, child, nullptr, 0, &ms));
  static float two = 2.0f;
  void *axpy_z[] = {&b.z, &b.x, &b.n, &two};
  kernel(child, {cz}, (void *)k_axpy, b.n, axpy_z);

  cudaGraphNode_t wait, fill, zero_y, axpy, sub, copy, square, host, record;
  CK(cudaGraphAddEventWaitNode(&wait, g, nullptr, 0, b.ready));
  void *fill_args[] = {&b.x, &b.n, v};
  fill = kernel(g, {wait}, (void *)k_fill, b.n, fill_args);
  ms.dst = b.y;
  CK(cudaGraphAddMemsetNode(&zero_y, g, nullptr, 0, &ms));
  static float three = 3.0f;
  void *axpy_y[] = {&b.y, &b.x, &b.n, &three};
  axpy = kernel(g, {fill, zero_y}, (void *)k_axpy, b.n, axpy_y);
  // y += u: u was written on another stream before the launch (the event wait orders it).
  static float one = 1.0f;
  void *axpy_u[] = {&b.y, &b.u, &b.n, &one};
  cudaGraphNode_t add_u = kernel(g, {axpy}, (void *)k_axpy, b.n, axpy_u);
  CK(cudaGraphAddChildGraphNode(&sub, g, &fill, 1, child));
  CK(cudaGraphAddMemcpyNode1D(&copy, g, &sub, 1, b.w, b.z, b.n * 4, cudaMemcpyDeviceToDevice));
  void *sq_args[] = {&b.y, &b.n};
  square = kernel(g, {add_u}, (void *)k_square, b.n, sq_args);
  cudaHostNodeParams hp = {on_host, nullptr};
  CK(cudaGraphAddHostNode(&host, g, &square, 1, &hp));
  cudaGraphNode_t before_record[] = {copy, host};
  CK(cudaGraphAddEventRecordNode(&record, g, before_record, 2, b.done));
  void *sum_args[] = {&b.y, &b.w, &b.n, &b.acc};
  kernel(g, {record}, (void *)k_sum, b.n, sum_args);
  CK(cudaGraphDestroy(child));  // the child node holds its own copy
  return g;
}

int main(int argc, char **argv) {
  int launches = argc > 1 ? atoi(argv[1]) : 4;
  Bufs b;
  b.n = 1 << 16;
  for (float **p : {&b.x, &b.y, &b.z, &b.w, &b.u}) CK(cudaMalloc(p, b.n * 4));
  CK(cudaMalloc(&b.acc, 8));
  CK(cudaMemset(b.acc, 0, 8));
  CK(cudaEventCreate(&b.done));
  CK(cudaEventCreate(&b.ready));
  cudaStream_t s, other;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));

  float v1 = 1.0f, v2 = 2.0f;
  cudaGraph_t g = build(b, &v1);
  cudaGraphExec_t exec;
  CK(cudaGraphInstantiate(&exec, g, 0));
  // Find the first k_axpy node of the main graph (to update it later) before destroying it.
  size_t count = 0;
  CK(cudaGraphGetNodes(g, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  CK(cudaGraphGetNodes(g, nodes.data(), &count));
  cudaGraphNode_t axpy_node = nullptr;
  for (auto nd : nodes) {
    cudaGraphNodeType t;
    CK(cudaGraphNodeGetType(nd, &t));
    if (t != cudaGraphNodeTypeKernel) continue;
    cudaKernelNodeParams p;
    CK(cudaGraphKernelNodeGetParams(nd, &p));
    if (p.func == (void *)k_axpy && !axpy_node) axpy_node = nd;
  }

  // A captured graph: three kernels on the capturing stream.
  cudaGraph_t captured;
  cudaGraphExec_t captured_exec;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  k_fill<<<(b.n + 255) / 256, 256, 0, s>>>(b.z, b.n, 5.0f);
  k_axpy<<<(b.n + 255) / 256, 256, 0, s>>>(b.w, b.z, b.n, 0.25f);
  k_square<<<(b.n + 255) / 256, 256, 0, s>>>(b.w, b.n);
  CK(cudaStreamEndCapture(s, &captured));
  CK(cudaGraphInstantiate(&captured_exec, captured, 0));
  CK(cudaGraphDestroy(captured));

  float a5 = 5.0f;
  for (int l = 0; l < launches; l++) {
    // u is rewritten only after the previous launch's graph has read it (its `done` event).
    if (l > 0) CK(cudaStreamWaitEvent(other, b.done, 0));
    k_fill<<<(b.n + 255) / 256, 256, 0, other>>>(b.u, b.n, (float)l);
    CK(cudaEventRecord(b.ready, other));
    if (l == 1) {
      // Launch 2 onwards: the first k_axpy node multiplies by 5.
      void *args[] = {&b.y, &b.x, &b.n, &a5};
      cudaKernelNodeParams p = {};
      p.func = (void *)k_axpy; p.gridDim = dim3((b.n + 255) / 256); p.blockDim = dim3(256); p.kernelParams = args;
      CK(cudaGraphExecKernelNodeSetParams(exec, axpy_node, &p));
    }
    if (l == 2) {
      // Launch 3 onwards: the whole executable from a graph that fills with 2.
      cudaGraph_t g2 = build(b, &v2);
      cudaGraphExecUpdateResultInfo info;
      CK(cudaGraphExecUpdate(exec, g2, &info));
      CK(cudaGraphDestroy(g2));
    }
    CK(cudaGraphLaunch(exec, s));
    CK(cudaGraphLaunch(captured_exec, s));
  }
  CK(cudaStreamSynchronize(s));
  CK(cudaEventSynchronize(b.done));
  CK(cudaGraphDestroy(g));

  std::vector<float> y(b.n), w(b.n);
  unsigned long long acc;
  CK(cudaMemcpy(y.data(), b.y, b.n * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(w.data(), b.w, b.n * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&acc, b.acc, 8, cudaMemcpyDeviceToHost));
  printf("graph_api: launches=%d host_calls=%d acc=%llu\n", launches, host_calls, acc);
  uint64_t h = 1469598103934665603ull;
  h = fnv(h, y.data(), y.size() * 4);
  h = fnv(h, w.data(), w.size() * 4);
  h = fnv(h, &acc, 8);
  h = fnv(h, &host_calls, 4);
  printf("checksum=%016llx\n", (unsigned long long)h);
  return 0;
}
