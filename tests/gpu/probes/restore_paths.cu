// restore_paths.cu: the ways a first restore can move a snapshot file from the page cache to
// the device, measured against one pinned cuMemcpyHtoD in the same run (GB/s):
//   A  the file's mapping registered read-only (cudaHostRegisterReadOnly), then one copy
//   B  the mapping registered in chunks by T threads, each chunk copied as soon as it is
//   C  what rr-tui does: 16 threads pread 4 MiB pieces into pinned memory, each piece copied
//      as soon as it is read; and the pread alone
// Measured on the H100 machine (2026-11-27): link 54.9-55.1; A 21.9-22.4 (register 51-55,
// copy 55, but not overlapped); B 8.8-29.4 (registering beside running copies is slow); C 32.7-35.8
// (pread alone 44.1-46.9). So the staging copy is the fastest of the three, at about 0.65 of
// the link: the host side, not rr-tui's pipeline, bounds a first restore on that machine.
// Build and run on the GPU machine: nvcc -O2 -std=c++17 restore_paths.cu -o /tmp/rp && /tmp/rp
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
#define CK(x) do { cudaError_t e = (x); if (e) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main(int argc, char **argv) {
  const size_t N = 1ull << 30;
  const char *path = argc > 1 ? argv[1] : "/tmp/regdma.bin";
  { // write the file (page cache warm)
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    std::vector<unsigned> buf(1 << 20);
    for (size_t i = 0; i < N / (4 << 20); i++) { for (auto &x : buf) x = rand(); if (write(fd, buf.data(), 4 << 20) != 4 << 20) exit(2); }
    close(fd);
  }
  void *dev; CK(cudaMalloc(&dev, N));
  CK(cudaMemset(dev, 0, N)); CK(cudaDeviceSynchronize());
  void *pinned; CK(cudaMallocHost(&pinned, N)); memset(pinned, 1, N);
  double t = now(); CK(cudaMemcpy(dev, pinned, N, cudaMemcpyHostToDevice)); double link = N / (now() - t) / 1e9;
  printf("pinned single copy: %.1f GB/s\n", link);
  int fd = open(path, O_RDONLY);
  for (int trial = 0; trial < 3; trial++) {
    // A: whole-file register then one copy.
    void *m = mmap(0, N, PROT_READ, MAP_SHARED, fd, 0);
    t = now();
    CK(cudaHostRegister(m, N, cudaHostRegisterReadOnly));
    double treg = now() - t;
    double t2 = now(); CK(cudaMemcpy(dev, m, N, cudaMemcpyHostToDevice)); double tcp = now() - t2;
    double t3 = now(); CK(cudaHostUnregister(m)); double tun = now() - t3;
    printf("A whole: register %.1f GB/s, copy %.1f GB/s, unregister %.1f ms, total %.1f GB/s\n", N / treg / 1e9, N / tcp / 1e9, tun * 1e3, N / (now() - t) / 1e9);
    munmap(m, N);
    // B: chunks registered by T threads, copied as they come.
    for (int T : {1, 2, 4, 8, 16}) for (size_t C : {16ull << 20, 64ull << 20, 256ull << 20}) {
      void *m2 = mmap(0, N, PROT_READ, MAP_SHARED, fd, 0);
      size_t n = N / C; std::vector<std::atomic<int>> ready(n); for (auto &r : ready) r = 0;
      std::atomic<size_t> next{0};
      cudaStream_t s; CK(cudaStreamCreate(&s));
      t = now();
      std::vector<std::thread> th;
      for (int k = 0; k < T; k++) th.emplace_back([&] { size_t i; while ((i = next++) < n) { CK(cudaHostRegister((char *)m2 + i * C, C, cudaHostRegisterReadOnly)); ready[i] = 1; } });
      for (size_t i = 0; i < n; i++) { while (!ready[i]) std::this_thread::yield(); CK(cudaMemcpyAsync((char *)dev + i * C, (char *)m2 + i * C, C, cudaMemcpyHostToDevice, s)); }
      CK(cudaStreamSynchronize(s));
      double tot = now() - t;
      for (auto &x : th) x.join();
      double tu = now();
      for (size_t i = 0; i < n; i++) CK(cudaHostUnregister((char *)m2 + i * C));
      printf("B threads %d chunk %zu MiB: %.1f GB/s (%.3f of link), unregister %.1f ms\n", T, C >> 20, N / tot / 1e9, N / tot / 1e9 / link, (now() - tu) * 1e3);
      munmap(m2, N); cudaStreamDestroy(s);
    }
    // C: the staging way: 16 threads pread into 4 MiB pinned pieces of `pinned`, copy each.
    {
      const size_t P = 4 << 20; size_t n = N / P; std::vector<std::atomic<int>> ready(n); for (auto &r : ready) r = 0;
      std::atomic<size_t> next{0}; cudaStream_t s; CK(cudaStreamCreate(&s));
      t = now(); std::vector<std::thread> th;
      for (int k = 0; k < 16; k++) th.emplace_back([&] { size_t i; while ((i = next++) < n) { if (pread(fd, (char *)pinned + i * P, P, i * P) != (ssize_t)P) exit(2); ready[i] = 1; } });
      for (size_t i = 0; i < n; i++) { while (!ready[i]) std::this_thread::yield(); CK(cudaMemcpyAsync((char *)dev + i * P, (char *)pinned + i * P, P, cudaMemcpyHostToDevice, s)); }
      CK(cudaStreamSynchronize(s)); double tot = now() - t; for (auto &x : th) x.join();
      printf("C pread into 1 GiB pinned (no reuse), 16 threads: %.1f GB/s\n", N / tot / 1e9);
      next = 0; t = now(); std::vector<std::thread> th2;
      for (int k = 0; k < 16; k++) th2.emplace_back([&] { size_t i; while ((i = next++) < n) if (pread(fd, (char *)pinned + i * P, P, i * P) != (ssize_t)P) exit(2); });
      for (auto &x : th2) x.join();
      printf("C pread alone, 16 threads: %.1f GB/s\n", N / (now() - t) / 1e9);
      cudaStreamDestroy(s);
    }
  }
  return 0;
}
