// pointers.cu: pointer chasing through (a) a device array of device pointers and
// (b) linked lists whose nodes and `next` pointers are written by a kernel, plus
// a __device__ global holding a pointer into heap memory.
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

struct Node {
  int value;
  int list;
  Node* next;
};

__device__ Node* g_pool;                 // pointer to heap memory stored in a global

__global__ void k_init_buf(int* buf, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) buf[i] = k * 1000 + (i * 17) % 991;
}

// out[t] = sum over j of ptrs[j][(t * (j + 1)) % sizes[j]]
__global__ void k_gather(int* const* ptrs, const int* sizes, int k, long long* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  long long acc = 0;
  for (int j = 0; j < k; ++j) {
    const int* p = ptrs[j];                // load a pointer from device memory
    acc += p[(t * (j + 1)) % sizes[j]];
  }
  out[t] = acc;
}

// Builds `lists` linked lists of `len` nodes each inside `pool`. The successor of
// node (l, i) is placed at a scattered slot, so traversal is real pointer chasing.
__device__ __host__ inline int slot(int l, int i, int len) { return l * len + (int)(((long long)i * 37 + 11) % len); }
__global__ void k_build_lists(Node* pool, int lists, int len, Node** heads) {
  int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g == 0) g_pool = pool;
  if (g >= lists * len) return;
  int l = g / len, i = g % len;
  Node* me = &pool[slot(l, i, len)];
  me->value = (l + 1) * 100000 + i * 7;
  me->list = l;
  me->next = (i + 1 < len) ? &pool[slot(l, i + 1, len)] : nullptr;
  if (i == 0) heads[l] = me;
}

// One thread per list: walk it, hash the visited values and count nodes.
__global__ void k_traverse(Node* const* heads, int lists, unsigned long long* out) {
  int l = blockIdx.x * blockDim.x + threadIdx.x;
  if (l >= lists) return;
  unsigned long long h = 1469598103934665603ull, count = 0;
  for (const Node* n = heads[l]; n != nullptr; n = n->next) {
    h = (h ^ (unsigned long long)(unsigned)n->value) * 1099511628211ull;
    ++count;
  }
  // also touch the pool through the global pointer
  out[2 * l] = h ^ (unsigned long long)g_pool[l].value;
  out[2 * l + 1] = count;
}

int main() {
  const int K = 12, N = 3000;
  int h_sizes[K];
  int* h_ptrs[K];
  for (int j = 0; j < K; ++j) {
    h_sizes[j] = 100 + 97 * j;             // distinct sizes -> distinct allocations
    CK(cudaMalloc(&h_ptrs[j], h_sizes[j] * sizeof(int)));
    k_init_buf<<<(h_sizes[j] + 127) / 128, 128>>>(h_ptrs[j], h_sizes[j], j);
  }
  int** d_ptrs; int* d_sizes; long long* d_gather;
  CK(cudaMalloc(&d_ptrs, sizeof(h_ptrs)));
  CK(cudaMalloc(&d_sizes, sizeof(h_sizes)));
  CK(cudaMalloc(&d_gather, N * sizeof(long long)));
  CK(cudaMemcpy(d_ptrs, h_ptrs, sizeof(h_ptrs), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_sizes, h_sizes, sizeof(h_sizes), cudaMemcpyHostToDevice));
  k_gather<<<(N + 255) / 256, 256>>>(d_ptrs, d_sizes, K, d_gather, N);
  CK(cudaGetLastError());

  const int LISTS = 64, LEN = 500;         // 37 and 500 are coprime: slots are a permutation
  Node* d_pool; Node** d_heads; unsigned long long* d_trav;
  CK(cudaMalloc(&d_pool, LISTS * LEN * sizeof(Node)));
  CK(cudaMalloc(&d_heads, LISTS * sizeof(Node*)));
  CK(cudaMalloc(&d_trav, 2 * LISTS * sizeof(unsigned long long)));
  k_build_lists<<<(LISTS * LEN + 255) / 256, 256>>>(d_pool, LISTS, LEN, d_heads);
  k_traverse<<<1, LISTS>>>(d_heads, LISTS, d_trav);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());

  long long* h_gather = (long long*)malloc(N * sizeof(long long));
  unsigned long long h_trav[2 * LISTS];
  CK(cudaMemcpy(h_gather, d_gather, N * sizeof(long long), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(h_trav, d_trav, sizeof(h_trav), cudaMemcpyDeviceToHost));
  for (int l = 0; l < LISTS; ++l)
    if (h_trav[2 * l + 1] != (unsigned long long)LEN) { fprintf(stderr, "list %d has %llu nodes\n", l, h_trav[2 * l + 1]); return 1; }
  // Only values are hashed: the raw Node bytes contain addresses, which differ between runs.
  uint64_t h = fnv1a(h_gather, N * sizeof(long long));
  h = fnv1a(h_trav, sizeof(h_trav), h);
  printf("pointers: gather[0]=%lld gather[%d]=%lld lists=%d len=%d trav[0]=%016llx\n",
         h_gather[0], N - 1, h_gather[N - 1], LISTS, LEN, h_trav[0]);
  printf("checksum=%016llx\n", (unsigned long long)h);
  for (int j = 0; j < K; ++j) CK(cudaFree(h_ptrs[j]));
  CK(cudaFree(d_ptrs)); CK(cudaFree(d_sizes)); CK(cudaFree(d_gather));
  CK(cudaFree(d_pool)); CK(cudaFree(d_heads)); CK(cudaFree(d_trav));
  free(h_gather);
  return 0;
}
