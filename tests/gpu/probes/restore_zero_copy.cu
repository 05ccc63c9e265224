// restore_zero_copy.cu: the ways a first restore can move a snapshot file from the page cache to
// the device, and whether it can reach the link by not copying on the host at all. The staging
// way (pread into pinned buffers, then DMA) moves every byte three times through host memory
// (read, write, DMA read) and measured 0.55-0.65 of one pinned cuMemcpyHtoD on the H100 machine
// (an earlier probe, restore_paths.cu, folded in here: its whole-file registration and readers
// alone are `whole_file` and `pread_alone`). Here the file's mapping itself is page-locked in chunks
// (cudaHostRegister, read-only) and copied as each chunk is locked, so the DMA reads the page
// cache directly; registration and copies overlap. Variants: who registers (the copying
// thread itself between copies, or T other threads), the chunk size, MAP_POPULATE; unregistering
// is timed apart (it can happen after the restore is complete). Against, in the same run: one
// pinned copy of the whole (the link) and the staging way.
// Measured on the H100 machine (2026-11-27, fa4a852's run): link 54.9; staging 33.1 (0.60);
// zero-copy with the copying thread registering 8 MiB 30.4-30.9, 32 MiB 34.4-35.1, 128 MiB
// 34.9-35.2 (0.64), +populate no better; other threads registering 17.4-22.8 (the copies wait
// on the registrations); unregistering 10-31 ms. Neither way reaches 0.85 of the link from the
// page cache on that machine: host memory, not the pipeline, is the bound.
// Build and run on the GPU machine: nvcc -O2 -std=c++17 restore_zero_copy.cu -o /tmp/rz && /tmp/rz
// (`/tmp/rz FILE quick`: the GPU suite's bench part, key=value lines).
#include <cuda_runtime.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <chrono>
#include <thread>
#include <vector>
#include <atomic>
#include <string>
#include <algorithm>
#define CK(x) do { cudaError_t e = (x); if (e) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
static const size_t N = 1ull << 30;

// Register chunks of a fresh mapping and copy each as soon as it is registered.
static double zero_copy(int fd, void *dev, int T, size_t C, bool populate, double link) {
  void *m = mmap(0, N, PROT_READ, MAP_SHARED | (populate ? MAP_POPULATE : 0), fd, 0);
  if (m == MAP_FAILED) { perror("mmap"); exit(3); }
  size_t n = N / C;
  std::vector<std::atomic<int>> ready(n);
  for (auto &r : ready) r = 0;
  std::atomic<size_t> next{0};
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  double t = now();
  std::vector<std::thread> th;
  if (T == 0) {
    // The copying thread registers chunk i+1 while chunk i crosses the link.
    for (size_t i = 0; i < n; i++) {
      CK(cudaHostRegister((char *)m + i * C, C, cudaHostRegisterReadOnly));
      CK(cudaMemcpyAsync((char *)dev + i * C, (char *)m + i * C, C, cudaMemcpyHostToDevice, s));
    }
  } else {
    for (int k = 0; k < T; k++) th.emplace_back([&] { size_t i; while ((i = next++) < n) { CK(cudaHostRegister((char *)m + i * C, C, cudaHostRegisterReadOnly)); ready[i] = 1; } });
    for (size_t i = 0; i < n; i++) { while (!ready[i]) std::this_thread::yield(); CK(cudaMemcpyAsync((char *)dev + i * C, (char *)m + i * C, C, cudaMemcpyHostToDevice, s)); }
  }
  CK(cudaStreamSynchronize(s));
  double tot = now() - t;
  for (auto &x : th) x.join();
  double tu = now();
  for (size_t i = 0; i < n; i++) CK(cudaHostUnregister((char *)m + i * C));
  double unreg = now() - tu;
  printf("zero-copy %s%s chunk %4zu MiB: %5.1f GB/s (%.3f of link), unregister %.1f ms\n",
         T == 0 ? "copying thread registers" : (std::to_string(T) + " registering threads").c_str(),
         populate ? " +populate" : "", C >> 20, N / tot / 1e9, N / tot / 1e9 / link, unreg * 1e3);
  munmap(m, N);
  cudaStreamDestroy(s);
  return N / tot / 1e9;
}

// The whole file's mapping page-locked first, then copied in one go (registration and copy
// not overlapped): restore_paths.cu measured register 51-55 GB/s, copy 55, together 21.9-22.4.
static void whole_file(int fd, void *dev, double link) {
  void *m = mmap(0, N, PROT_READ, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) { perror("mmap"); exit(3); }
  double t = now();
  CK(cudaHostRegister(m, N, cudaHostRegisterReadOnly));
  double treg = now() - t, t2 = now();
  CK(cudaMemcpy(dev, m, N, cudaMemcpyHostToDevice));
  double tcp = now() - t2, tot = now() - t;
  CK(cudaHostUnregister(m));
  printf("whole file page-locked, then one copy: register %.1f GB/s, copy %.1f GB/s, together %.1f GB/s (%.3f of link)\n",
         N / treg / 1e9, N / tcp / 1e9, N / tot / 1e9, N / tot / 1e9 / link);
  munmap(m, N);
}

// What 16 readers alone reach from the page cache into page-locked memory (no copies): the
// restore's other limit (restore_paths.cu measured 44.1-46.9 GB/s).
static void pread_alone(int fd) {
  const size_t P = 4 << 20; size_t n = N / P;
  void *pinned; CK(cudaMallocHost(&pinned, N));
  std::atomic<size_t> next{0};
  double t = now(); std::vector<std::thread> th;
  for (int k = 0; k < 16; k++) th.emplace_back([&] { size_t i; while ((i = next++) < n) if (pread(fd, (char *)pinned + i * P, P, i * P) != (ssize_t)P) exit(2); });
  for (auto &x : th) x.join();
  printf("16 readers alone into page-locked memory: %.1f GB/s\n", N / (now() - t) / 1e9);
  cudaFreeHost(pinned);
}

// The staging way, as rr-tui restores today: 16 readers pread 4 MiB pieces into 36 pinned
// buffers, each copied as soon as it is read and reused once its copy is done.
static double staging(int fd, void *dev, double link) {
  const size_t P = 4 << 20, B = 36; size_t n = N / P;
  std::vector<void *> buf(B);
  for (auto &b : buf) { CK(cudaMallocHost(&b, P)); memset(b, 1, P); }
  std::vector<std::atomic<int>> ready(n); for (auto &r : ready) r = 0;
  std::vector<cudaEvent_t> done(n); for (auto &ev : done) CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  std::atomic<size_t> next{0}, copied{0};
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  double t = now(); std::vector<std::thread> th;
  for (int k = 0; k < 16; k++) th.emplace_back([&] { size_t i; while ((i = next++) < n) {
    while (i >= B && copied.load() <= i - B) std::this_thread::yield();
    if (pread(fd, buf[i % B], P, i * P) != (ssize_t)P) exit(2); ready[i] = 1; } });
  size_t waited = 0;  // copies known done, in order; readers reuse a buffer after its copy
  for (size_t i = 0; i < n; i++) {
    while (!ready[i]) {
      if (waited < i && cudaEventQuery(done[waited]) == cudaSuccess) copied = ++waited;
      else std::this_thread::yield();
    }
    CK(cudaMemcpyAsync((char *)dev + i * P, buf[i % B], P, cudaMemcpyHostToDevice, s));
    CK(cudaEventRecord(done[i], s));
  }
  CK(cudaStreamSynchronize(s)); copied = n;
  double tot = now() - t; for (auto &x : th) x.join();
  printf("staging (16 readers, 36 x 4 MiB pinned): %5.1f GB/s (%.3f of link)\n", N / tot / 1e9, N / tot / 1e9 / link);
  for (auto &b : buf) cudaFreeHost(b);
  for (auto &ev : done) cudaEventDestroy(ev);
  cudaStreamDestroy(s);
  return N / tot / 1e9;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "/tmp/rzc.bin";
  { // write the file (page cache warm)
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    std::vector<unsigned> buf(1 << 20);
    for (size_t i = 0; i < N / (4 << 20); i++) { for (auto &x : buf) x = rand(); if (write(fd, buf.data(), 4 << 20) != 4 << 20) exit(2); }
    close(fd);
  }
  void *dev; CK(cudaMalloc(&dev, N));
  CK(cudaMemset(dev, 0, N)); CK(cudaDeviceSynchronize());
  void *pinned; CK(cudaMallocHost(&pinned, N)); memset(pinned, 1, N);
  double link = 0;
  for (int k = 0; k < 3; k++) {
    double t = now(); CK(cudaMemcpy(dev, pinned, N, cudaMemcpyHostToDevice));
    double g = N / (now() - t) / 1e9; if (g > link) link = g;
  }
  CK(cudaFreeHost(pinned));
  printf("link: one pinned cudaMemcpy of 1 GiB, best of 3: %.1f GB/s\n", link);
  int fd = open(path, O_RDONLY);
  if (argc > 2 && !strcmp(argv[2], "quick")) {
    // The GPU suite's bench part: the best of 3 of the staging way and of the best zero-copy
    // variant, as key=value lines beside the link.
    double st = 0, zc = 0;
    for (int trial = 0; trial < 3; trial++) {
      st = std::max(st, staging(fd, dev, link));
      for (size_t C : {32ull << 20, 128ull << 20}) zc = std::max(zc, zero_copy(fd, dev, 0, C, false, link));
    }
    printf("link_gbps=%.2f\nstaging_gbps=%.2f\nzero_copy_gbps=%.2f\n", link, st, zc);
    unlink(path);
    return 0;
  }
  for (int trial = 0; trial < 2; trial++) {
    printf("-- trial %d\n", trial);
    pread_alone(fd);
    whole_file(fd, dev, link);
    staging(fd, dev, link);
    for (size_t C : {2ull << 20, 8ull << 20, 32ull << 20, 128ull << 20}) zero_copy(fd, dev, 0, C, false, link);
    for (size_t C : {8ull << 20, 32ull << 20}) zero_copy(fd, dev, 0, C, true, link);
    for (int T : {1, 2, 4}) for (size_t C : {8ull << 20, 32ull << 20}) zero_copy(fd, dev, T, C, false, link);
  }
  // Is the result right? Compare the device with the file once (zero-copy, 32 MiB, one thread).
  zero_copy(fd, dev, 0, 32ull << 20, false, link);
  std::vector<char> a(64 << 20), b(64 << 20);
  for (size_t off = 0; off < N; off += a.size()) {
    CK(cudaMemcpy(a.data(), (char *)dev + off, a.size(), cudaMemcpyDeviceToHost));
    if (pread(fd, b.data(), b.size(), off) != (ssize_t)b.size() || memcmp(a.data(), b.data(), a.size())) { printf("MISMATCH at %zu\n", off); return 4; }
  }
  printf("device equals the file after a zero-copy restore\n");
  unlink(path);
  return 0;
}
