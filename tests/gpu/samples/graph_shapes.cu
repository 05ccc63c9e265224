// graph_shapes.cu: CUDA graphs of the shapes programs make most, each instantiated and launched
// twice; the last line is a checksum of every result.
//   one node      a stream capture of a single kernel (a graph without edges)
//   independent   three kernel nodes added by hand, no edges between them
//   updated deps  a capture into which a node is added by hand and made the capture's
//                 dependency with cudaStreamUpdateCaptureDependencies
//   relaxed       a two-kernel chain captured in cudaStreamCaptureModeRelaxed
//   thread-local  the same captured in cudaStreamCaptureModeThreadLocal
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void k_fill(int *a, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = i * v + 1;
}
__global__ void k_add(const int *a, int *b, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i] + v;
}

static uint64_t fnv(const void *p, size_t n, uint64_t h = 1469598103934665603ull) {
  const unsigned char *b = (const unsigned char *)p;
  for (size_t i = 0; i < n; ++i) { h ^= b[i]; h *= 1099511628211ull; }
  return h;
}

static void run(cudaGraph_t g, cudaStream_t s) {
  cudaGraphExec_t e;
  CK(cudaGraphInstantiate(&e, g, 0));
  for (int k = 0; k < 2; ++k) CK(cudaGraphLaunch(e, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaGraphExecDestroy(e));
  CK(cudaGraphDestroy(g));
}

static cudaGraphNode_t kernel_node(cudaGraph_t g, const cudaGraphNode_t *deps, size_t nd, void *fn,
                                   void **args, int blocks) {
  cudaKernelNodeParams p = {};
  p.func = fn;
  p.gridDim = dim3(blocks);
  p.blockDim = dim3(128);
  p.kernelParams = args;
  cudaGraphNode_t node;
  CK(cudaGraphAddKernelNode(&node, g, deps, nd, &p));
  return node;
}

int main() {
  const int n = 1 << 16, nb = n / 128;
  int *a, *b, *c, *d;
  for (int **p : {&a, &b, &c, &d}) { CK(cudaMalloc(p, n * sizeof(int))); CK(cudaMemset(*p, 0, n * sizeof(int))); }
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t g;
  // One node.
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  k_fill<<<nb, 128, 0, s>>>(a, n, 3);
  CK(cudaStreamEndCapture(s, &g));
  run(g, s);
  // Independent nodes, no edges.
  CK(cudaGraphCreate(&g, 0));
  int n_ = n, v1 = 5, v2 = 7, v3 = 11;
  void *a1[] = {&b, &n_, &v1}, *a2[] = {&c, &n_, &v2}, *a3[] = {&d, &n_, &v3};
  kernel_node(g, nullptr, 0, (void *)k_fill, a1, nb);
  kernel_node(g, nullptr, 0, (void *)k_fill, a2, nb / 2);
  kernel_node(g, nullptr, 0, (void *)k_fill, a3, nb / 4);
  run(g, s);
  // A node added to a capture by hand, made its dependency.
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  k_fill<<<nb, 128, 0, s>>>(a, n, 13);
  cudaStreamCaptureStatus st;
  cudaGraph_t cg;
  const cudaGraphNode_t *deps;
  size_t nd;
  CK(cudaStreamGetCaptureInfo(s, &st, nullptr, &cg, &deps, nullptr, &nd));
  int v4 = 17;
  void *a4[] = {&a, &b, &n_, &v4};
  cudaGraphNode_t added = kernel_node(cg, deps, nd, (void *)k_add, a4, nb);
  CK(cudaStreamUpdateCaptureDependencies(s, &added, nullptr, 1, cudaStreamSetCaptureDependencies));
  k_add<<<nb, 128, 0, s>>>(b, c, n, 19);
  CK(cudaStreamEndCapture(s, &g));
  run(g, s);
  // Relaxed and thread-local captures of a chain.
  for (cudaStreamCaptureMode mode : {cudaStreamCaptureModeRelaxed, cudaStreamCaptureModeThreadLocal}) {
    CK(cudaStreamBeginCapture(s, mode));
    k_fill<<<nb / 2, 128, 0, s>>>(d, n, mode == cudaStreamCaptureModeRelaxed ? 23 : 29);
    k_add<<<nb / 2, 128, 0, s>>>(d, a, n / 2, 31);
    CK(cudaStreamEndCapture(s, &g));
    run(g, s);
  }
  uint64_t h = 1469598103934665603ull;
  int *host = (int *)malloc(n * sizeof(int));
  for (int *p : {a, b, c, d}) {
    CK(cudaMemcpy(host, p, n * sizeof(int), cudaMemcpyDeviceToHost));
    h = fnv(host, n * sizeof(int), h);
  }
  printf("graphs: one node, independent, updated deps, relaxed, thread-local\n");
  printf("checksum=%016llx\n", (unsigned long long)h);
  return 0;
}
