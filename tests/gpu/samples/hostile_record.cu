// hostile_record.cu: programs that attack the stream-ordered recorder (tests/gpu/recorder-hostile-suite.sh).
// Each mode prints its findings, then `checksum=<16 hex>` (FNV-1a 64 of its results) last; a plain
// and a recorded run must print the same. Modes (argv[1]):
//   fill          512 MiB of non-zero data and a kernel over it (more new content than --staging 64M),
//                 then a 4 MiB buffer and another kernel, 10 times over 2 s (recorded once there is room)
//   capture       thread A captures graphs in global mode (EndCapture and the graph launch checked),
//                 thread B launches kernels of 128 new geometries on another stream meanwhile
//   reset[-big]   kernels, cudaDeviceReset (device and pinned host memory left to it), allocate
//                 3 MiB again (reset-big: 512 MiB, over where the recorder's memory was), kernels
//   fork          a thread launches kernels of new geometries while the main thread forks 40
//                 children that use no CUDA and exit(); each waited for 10 s at most
//   exit-running  a ~2 s kernel, then exit(0) without synchronising
//   streams       8 threads x 8 non-blocking streams, made and destroyed each round; 16 geometries
//   unaligned     a pointer to an odd address inside an allocation, byte-array __device__ globals,
//                 a pointer at an odd offset of a packed struct parameter, host memory registered
//                 at an odd address (cudaHostRegister) that the kernel reads and writes
//   perthread     8 threads launching on stream 0 (build with --default-stream per-thread)
//   capture-exit  256 MiB of new content recorded, then a global capture begun on another stream
//                 and exit(0) with it open (argv[2]: milliseconds between the two, default 5)
#include <cuda_runtime.h>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <signal.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf("cuda error: %s at line %d: %s\n", #x, __LINE__, cudaGetErrorString(e_)); fflush(stdout); exit(3); } } while (0)
typedef unsigned long long u64;
static u64 H = 1469598103934665603ull;
static void mix(const void *p, size_t n) { for (size_t i = 0; i < n; ++i) { H ^= ((const unsigned char *)p)[i]; H *= 1099511628211ull; } }
static void mixdev(const void *d, size_t n) { std::vector<unsigned char> h(n); CK(cudaMemcpy(h.data(), d, n, cudaMemcpyDeviceToHost)); mix(h.data(), n); }
static int finish() { printf("checksum=%016llx\n", H); fflush(stdout); return 0; }
// Each element updated once per launch whatever the geometry (grid-stride): results never
// depend on the geometry, which the modes vary to make every launch a new configuration.
__device__ void body(unsigned *p, size_t n, unsigned v) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = p[i] * 2654435761u + v + (unsigned)i;
}
#define K(name) __global__ void name(unsigned *p, size_t n, unsigned v) { body(p, n, v); }
K(k_big) K(k_small) K(k_cap) K(k_work) K(k_before) K(k_after) K(k_thread) K(k_child) K(k_stream) K(k_touch)

__device__ __forceinline__ u64 now_ns() { u64 t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
// Spins `ns` nanoseconds, then updates its slice of p (deterministic).
__global__ void k_spin(unsigned *p, size_t n, u64 ns) { u64 t0 = now_ns(); while (now_ns() - t0 < ns) {} body(p, n, 11); }

// Unaligned globals: byte arrays the compiler may place at odd addresses, and one in a struct.
__device__ char g_pad[3] = {1, 2, 3};
__device__ char g_odd[13] = {5, 4, 3, 2, 1, 9, 8, 7, 6, 5, 4, 3, 2};
struct S { char a; char b[13]; };
__device__ S g_s = {7, {1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144 - 256, 233 - 256}};
struct __attribute__((packed)) P { char tag; unsigned *p; };
__global__ void k_unal(unsigned char *mid, P pk, int n, unsigned char *hm) {
  int i = threadIdx.x;
  if (i < 13 && hm) { hm[i] = (unsigned char)(hm[i] * 5 + 1); mid[i] = (unsigned char)(mid[i] + hm[i + 20]); }
  if (i < 13) { g_odd[i] = (char)(g_odd[i] * 3 + mid[i] + 1); g_s.b[i] ^= (char)(mid[i] + i); }
  if (i == 0) { g_pad[1]++; g_s.a = (char)(g_s.a + pk.tag); }
  if (i < n) { unsigned v = pk.p[i]; pk.p[i] = v + (unsigned)i * 3 + pk.tag; mid[i] = (unsigned char)(mid[i] + 7 + v); }
}

static cudaStream_t nb_stream() { cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); return s; }

static int fill() {
  size_t n = (size_t)512 << 20;
  char *big; CK(cudaMalloc(&big, n)); CK(cudaMemset(big, 0x5a, n));
  k_big<<<64, 256>>>((unsigned *)big, 1 << 18, 1);  // touches the first MiB
  CK(cudaDeviceSynchronize()); mixdev(big, 2 << 20); mixdev(big + n - (1 << 20), 1 << 20);
  CK(cudaFree(big));
  unsigned *small; CK(cudaMalloc(&small, 4 << 20)); CK(cudaMemset(small, 0x11, 4 << 20));
  for (int k = 0; k < 10; k++) {  // a launch lost to a ring still busy draining is selected again
    k_small<<<32, 128>>>(small, 1 << 20, 5 + k); CK(cudaDeviceSynchronize()); usleep(200000);
  }
  mixdev(small, 4 << 20);
  return finish();
}

static int capture() {
  size_t n = 1 << 18; unsigned *dA, *dB;
  CK(cudaMalloc(&dA, n * 4)); CK(cudaMalloc(&dB, n * 4)); CK(cudaMemset(dA, 1, n * 4)); CK(cudaMemset(dB, 2, n * 4));
  cudaFuncAttributes fa;  // load both kernels without launching them (lazy loading under capture)
  CK(cudaFuncGetAttributes(&fa, k_cap)); CK(cudaFuncGetAttributes(&fa, k_work));
  cudaStream_t sA = nb_stream(), sB = nb_stream();
  std::atomic<int> go{0}; int capfail = 0, lerr = 0; char first[200] = "";
  std::thread ta([&] {
    while (!go) {}
    for (int r = 0; r < 400; r++) {
      cudaGraph_t g; cudaGraphExec_t ge; cudaError_t e = cudaStreamBeginCapture(sA, cudaStreamCaptureModeGlobal);
      if (e == cudaSuccess) {
        for (int k = 0; k < 3; k++) k_cap<<<8, 128, 0, sA>>>(dA, n, r * 3 + k);
        e = cudaStreamEndCapture(sA, &g);
      }
      if (e == cudaSuccess) {
        e = cudaGraphInstantiate(&ge, g, 0);
        if (e == cudaSuccess) { e = cudaGraphLaunch(ge, sA); if (e == cudaSuccess) e = cudaStreamSynchronize(sA); cudaGraphExecDestroy(ge); }
        cudaGraphDestroy(g);
      }
      if (e != cudaSuccess) { if (!capfail++) snprintf(first, sizeof first, "round %d: %s", r, cudaGetErrorString(e)); cudaGetLastError(); }
    }
  });
  std::thread tb([&] {
    while (!go) {}
    for (int i = 0; i < 128; i++) {  // paced: recorded launches all through A's captures
      k_work<<<1 + i % 64, 128 << (i / 64), 0, sB>>>(dB, n, i);
      if (cudaGetLastError() != cudaSuccess) lerr++;
      usleep(400);
    }
  });
  go = 1; ta.join(); tb.join();
  CK(cudaDeviceSynchronize());
  printf("capture failures: %d%s%s; launch errors: %d\n", capfail, capfail ? ", first " : "", first, lerr);
  mixdev(dA, n * 4); mixdev(dB, n * 4);
  return finish();
}

static int reset(bool big) {
  size_t n = 1 << 20; unsigned *a, *h;
  CK(cudaMalloc(&a, n * 4)); CK(cudaMemset(a, 1, n * 4)); CK(cudaMallocHost(&h, 1 << 20)); memset(h, 3, 1 << 20);
  for (int g = 0; g < 3; g++) k_before<<<4 << g, 128>>>(a, n, g);
  CK(cudaDeviceSynchronize()); mixdev(a, n * 4);
  CK(cudaDeviceReset());  // frees a and h
  size_t m = big ? (size_t)512 << 20 : (size_t)3 << 20; unsigned *b;
  CK(cudaMalloc(&b, m)); CK(cudaMemset(b, 2, m));
  for (int g = 0; g < 3; g++) k_after<<<2 << g, 256>>>(b, m / 4, g);
  CK(cudaDeviceSynchronize()); mixdev(b, 3 << 20); if (big) mixdev((char *)b + m - (1 << 20), 1 << 20);
  return finish();
}

static int fork_mode() {
  size_t n = 1 << 16; unsigned *a, *c;  // 512 geometries of 256 KiB snapshots: the recorder stays busy
  CK(cudaMalloc(&a, n * 4)); CK(cudaMalloc(&c, 4096 * 4)); CK(cudaMemset(a, 7, n * 4)); CK(cudaMemset(c, 0, 4096 * 4));
  std::atomic<int> stop{0};
  std::thread t([&] { for (int i = 0; !stop; i++) { k_thread<<<1 + i % 256, 64 << (i / 256 % 2)>>>(a, n, i); if (i % 64 == 63) cudaDeviceSynchronize(); } });
  int exited = 0, hung = 0, badst = 0;
  for (int i = 0; i < 40 && !hung; i++) {
    k_child<<<1 + i, 32>>>(c, 4096, i);
    fflush(stdout); fflush(stderr);
    pid_t p = fork();
    if (p == 0) {  // the child uses no CUDA: exit() (running the atexit handlers), or exec
      if (i % 2 == 0) exit(0);
      execl("/bin/true", "true", (char *)0); _exit(127);
    }
    int st = 0, w = 0;
    for (int k = 0; k < 1000 && (w = waitpid(p, &st, WNOHANG)) == 0; k++) usleep(10000);
    if (w != p) { hung++; kill(p, SIGKILL); waitpid(p, &st, 0); }
    else if (WIFEXITED(st) && WEXITSTATUS(st) == 0) exited++; else badst++;
  }
  stop = 1; t.join(); CK(cudaDeviceSynchronize());
  printf("children: %d exited, %d hung, %d ended otherwise\n", exited, hung, badst);
  mixdev(c, 4096 * 4);
  return finish();
}

static int exit_running() {
  unsigned *a; CK(cudaMalloc(&a, 1 << 20)); CK(cudaMemset(a, 0, 1 << 20));
  k_small<<<8, 128>>>(a, 1 << 18, 3); CK(cudaDeviceSynchronize()); mixdev(a, 1 << 20);
  k_spin<<<1, 32>>>(a, 1 << 18, 2000000000ull);
  finish(); exit(0);  // without synchronising: the kernel still runs
}

static int streams() {
  const int T = 8, S = 8; size_t n = 1 << 14; unsigned *buf[T * S];
  for (int i = 0; i < T * S; i++) { CK(cudaMalloc(&buf[i], n * 4)); CK(cudaMemset(buf[i], i, n * 4)); }
  std::atomic<int> errs{0}; std::vector<std::thread> ts;
  for (int t = 0; t < T; t++) ts.emplace_back([&, t] {
    for (int r = 0; r < 4; r++) {
      cudaStream_t st[S];
      for (int s = 0; s < S; s++) if (cudaStreamCreateWithFlags(&st[s], cudaStreamNonBlocking) != cudaSuccess) errs++;
      for (int it = 0; it < 4; it++)
        for (int s = 0; s < S; s++) { int i = t * S + s; k_stream<<<1 + i % 8, 64 << (r % 2), 0, st[s]>>>(buf[i], n, r * 8 + it); }
      for (int s = 0; s < S; s++) { if (cudaStreamSynchronize(st[s]) != cudaSuccess) errs++; cudaStreamDestroy(st[s]); }
    }
  });
  for (auto &t : ts) t.join();
  CK(cudaDeviceSynchronize()); printf("stream errors: %d\n", (int)errs);
  for (int i = 0; i < T * S; i++) mixdev(buf[i], n * 4);
  return finish();
}

static int unaligned() {
  unsigned char *buf, *hb = (unsigned char *)malloc(1 << 20) + 4097, *hm = 0; unsigned *other;  // hb: odd, mid-page
  CK(cudaMalloc(&buf, 1 << 16)); CK(cudaMalloc(&other, 4096 * 4));
  std::vector<unsigned char> init(1 << 16);
  for (size_t i = 0; i < init.size(); i++) init[i] = (unsigned char)(i * 7 + 1);
  CK(cudaMemcpy(buf, init.data(), init.size(), cudaMemcpyHostToDevice)); CK(cudaMemset(other, 9, 4096 * 4));
  memcpy(hb, init.data(), 1000);
  cudaError_t re = cudaHostRegister(hb, 1000, cudaHostRegisterMapped);
  if (re == cudaSuccess) CK(cudaHostGetDevicePointer((void **)&hm, hb, 0)); else cudaGetLastError();
  printf("host memory registered at an odd address: %s\n", re == cudaSuccess ? "yes" : cudaGetErrorString(re));
  P pk; pk.tag = 5; pk.p = other + 3;  // into the middle of `other`, at an odd offset of the parameter
  for (int b = 32; b <= 128; b *= 2) k_unal<<<1, b>>>(buf + 12345, pk, 100, hm);
  CK(cudaDeviceSynchronize()); mix(hb, 1000);
  char g[3 + 13 + sizeof(S)];
  CK(cudaMemcpyFromSymbol(g, g_pad, 3)); CK(cudaMemcpyFromSymbol(g + 3, g_odd, 13)); CK(cudaMemcpyFromSymbol(g + 16, g_s, sizeof(S)));
  void *a0, *a1, *a2; CK(cudaGetSymbolAddress(&a0, g_pad)); CK(cudaGetSymbolAddress(&a1, g_odd)); CK(cudaGetSymbolAddress(&a2, g_s));
  printf("globals' addresses mod 16: g_pad %d, g_odd %d, g_s %d\n", (int)((size_t)a0 % 16), (int)((size_t)a1 % 16), (int)((size_t)a2 % 16));
  mix(g, sizeof g); mixdev(buf, 1 << 16); mixdev(other, 4096 * 4);
  return finish();
}

static int perthread() {
  const int T = 8; size_t n = 1 << 16; unsigned *buf[T];
  for (int t = 0; t < T; t++) { CK(cudaMalloc(&buf[t], n * 4)); CK(cudaMemset(buf[t], t + 1, n * 4)); }
#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM
  printf("per-thread default stream: no\n");
#endif
  std::atomic<int> errs{0}; std::vector<std::thread> ts;
  for (int t = 0; t < T; t++) ts.emplace_back([&, t] {
    for (int it = 0; it < 40; it++) {
      k_spin<<<1 + t, 64 << (it % 2)>>>(buf[t], n, 100000);  // 0.1 ms: threads overlap
      k_thread<<<2 + t, 128>>>(buf[t], n, it);
    }
    if (cudaStreamSynchronize(0) != cudaSuccess) errs++;
  });
  for (auto &t : ts) t.join();
  CK(cudaDeviceSynchronize()); printf("errors: %d\n", (int)errs);
  for (int t = 0; t < T; t++) mixdev(buf[t], n * 4);
  return finish();
}

static int capture_exit(int ms) {
  size_t n = (size_t)256 << 20; char *big; unsigned *c;
  CK(cudaMalloc(&big, n)); CK(cudaMalloc(&c, 4096)); CK(cudaMemset(big, 0x33, n)); CK(cudaMemset(c, 0, 4096));
  cudaFuncAttributes fa; CK(cudaFuncGetAttributes(&fa, k_cap));
  k_touch<<<1, 32>>>((unsigned *)big, 64, 1);
  CK(cudaDeviceSynchronize()); mixdev(big, 4096); usleep(ms * 1000);
  cudaStream_t s = nb_stream();
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  k_cap<<<1, 32, 0, s>>>(c, 1024, 1);
  finish(); exit(0);  // the capture is still open
}

int main(int argc, char **argv) {
  const char *m = argc > 1 ? argv[1] : "";
  if (!strcmp(m, "fill")) return fill();
  if (!strcmp(m, "capture")) return capture();
  if (!strcmp(m, "reset")) return reset(false);
  if (!strcmp(m, "reset-big")) return reset(true);
  if (!strcmp(m, "fork")) return fork_mode();
  if (!strcmp(m, "exit-running")) return exit_running();
  if (!strcmp(m, "streams")) return streams();
  if (!strcmp(m, "unaligned")) return unaligned();
  if (!strcmp(m, "perthread")) return perthread();
  if (!strcmp(m, "capture-exit")) return capture_exit(argc > 2 ? atoi(argv[2]) : 5);
  fprintf(stderr, "usage: %s fill|capture|reset|reset-big|fork|exit-running|streams|unaligned|perthread|capture-exit [ms]\n", argv[0]);
  return 2;
}
