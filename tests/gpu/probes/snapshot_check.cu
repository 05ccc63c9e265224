// Checks the recorder's snapshot kernels (crates/rr-cuda/kernels/snapshot.cu) against a host
// reference: leaf sums equal rr_leaf_hash's, flags (zero, changed against expected sums), the
// plan (what is copied, offsets, ring wrap, overflow) and the copies. Prints "snapshot ok" or
// what differs, and the hash and copy rates.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#include "../../../crates/rr-cuda/kernels/snapshot.cu"

typedef unsigned long long u64;
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("snapshot FAIL %s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define EXPECT(c, ...) do { if (!(c)) { printf("snapshot FAIL: " __VA_ARGS__); printf("\n"); exit(1); } } while (0)

struct Run { std::vector<u64> sums, offsets, status; std::vector<unsigned> flags; };

static Run snap(std::vector<Chunk> chunks, unsigned char *ring, u64 cap, u64 *head, u64 *tail_d) {
  unsigned n = chunks.size();
  u64 leaves = 0;
  for (auto &c : chunks) { c.first_leaf = leaves; leaves += (c.len + (1 << 20) - 1) >> 20; }
  Chunk *dc; u64 *sums, *offsets, *status; unsigned *flags;
  CK(cudaMalloc(&dc, n * sizeof(Chunk))); CK(cudaMalloc(&sums, 16 * leaves + 16));
  CK(cudaMalloc(&offsets, 8 * n)); CK(cudaMalloc(&status, 32)); CK(cudaMalloc(&flags, 4 * n));
  CK(cudaMemcpy(dc, chunks.data(), n * sizeof(Chunk), cudaMemcpyHostToDevice));
  CK(cudaMemset(flags, 0, 4 * n));
  if (leaves) rr_snap_hash<<<leaves, THREADS>>>(dc, n, 1 << 20, sums, flags);
  rr_snap_plan<<<1, PLAN_THREADS>>>(dc, n, flags, offsets, status, head, tail_d, cap);
  if (leaves) rr_snap_copy<<<leaves, THREADS>>>(dc, n, 1 << 20, offsets, ring, cap);
  CK(cudaDeviceSynchronize());
  Run r; r.sums.resize(2 * leaves); r.offsets.resize(n); r.status.resize(4); r.flags.resize(n);
  CK(cudaMemcpy(r.sums.data(), sums, 16 * leaves, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(r.offsets.data(), offsets, 8 * n, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(r.status.data(), status, 32, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(r.flags.data(), flags, 4 * n, cudaMemcpyDeviceToHost));
  cudaFree(dc); cudaFree(sums); cudaFree(offsets); cudaFree(status); cudaFree(flags);
  return r;
}

int main() {
  const u64 size = 200 << 20, cap = 64 << 20;
  unsigned char *mem, *ring; u64 *head, *tail_h, *tail_d;
  CK(cudaMalloc(&mem, size)); CK(cudaMalloc(&ring, cap)); CK(cudaMalloc(&head, 8));
  CK(cudaMemset(head, 0, 8));
  CK(cudaHostAlloc(&tail_h, 8, cudaHostAllocMapped)); *tail_h = 0;
  CK(cudaHostGetDevicePointer(&tail_d, tail_h, 0));
  std::vector<unsigned char> h(size, 0);
  srand(3);
  for (u64 i = 0; i < (8 << 20); i++) h[i] = rand() & 255;          // [0, 8 MiB) random
  for (u64 i = (16 << 20); i < (16 << 20) + 5; i++) h[i] = 7;        // one leaf slightly set
  CK(cudaMemcpy(mem, h.data(), size, cudaMemcpyHostToDevice));
  // Chunks: random (no expectation), zeros, a partly set one, an unaligned always-chunk.
  std::vector<Chunk> c = {
    {(u64)mem, 8 << 20, 0, 0, 0},
    {(u64)mem + (32 << 20), 16 << 20, 0, 0, 0},
    {(u64)mem + (16 << 20), 3 << 20, 0, 0, 0},
    {(u64)mem + 3, 13, 0, 0, 1},
  };
  Run a = snap(c, ring, cap, head, tail_d);
  EXPECT(a.flags[0] == (NONZERO | CHANGED) && a.flags[1] == CHANGED && a.flags[2] == (NONZERO | CHANGED), "flags %u %u %u", a.flags[0], a.flags[1], a.flags[2]);
  EXPECT(a.offsets[1] == NONE && a.offsets[0] == 0 && a.offsets[2] == (8 << 20) && a.offsets[3] == (11 << 20), "offsets %llx %llx %llx %llx", a.offsets[0], a.offsets[1], a.offsets[2], a.offsets[3]);
  EXPECT(a.status[3] == 0 && a.status[2] == (11 << 20) + 256, "status %llu %llu %llu %llu", a.status[0], a.status[1], a.status[2], a.status[3]);
  std::vector<unsigned char> back(cap);
  CK(cudaMemcpy(back.data(), ring, cap, cudaMemcpyDeviceToHost));
  EXPECT(!memcmp(back.data(), h.data(), 8 << 20) && !memcmp(back.data() + (8 << 20), h.data() + (16 << 20), 3 << 20) && !memcmp(back.data() + (11 << 20), h.data() + 3, 13), "copies differ");
  // The sums are rr_leaf_hash's.
  u64 *o; CK(cudaMalloc(&o, 16 * 8));
  rr_leaf_hash<<<8, THREADS>>>(mem, 8 << 20, 1 << 20, o);
  std::vector<u64> ref(16);
  CK(cudaMemcpy(ref.data(), o, 128, cudaMemcpyDeviceToHost));
  EXPECT(!memcmp(ref.data(), a.sums.data(), 128), "sums differ from rr_leaf_hash");
  // Expected sums equal: not changed, nothing copied; one differing leaf: changed.
  u64 *exp_d; CK(cudaMalloc(&exp_d, 128));
  CK(cudaMemcpy(exp_d, a.sums.data(), 128, cudaMemcpyHostToDevice));
  *tail_h = a.status[0] + a.status[1];
  std::vector<Chunk> same = {{(u64)mem, 8 << 20, (u64)exp_d, 0, 0}};
  Run b = snap(same, ring, cap, head, tail_d);
  EXPECT(b.flags[0] == NONZERO && b.offsets[0] == NONE && b.status[1] == 0, "unchanged: flags %u offset %llx", b.flags[0], b.offsets[0]);
  CK(cudaMemset(mem + (5 << 20) + 100, 1, 1));
  Run d = snap(same, ring, cap, head, tail_d);
  EXPECT(d.flags[0] == (NONZERO | CHANGED) && d.offsets[0] == (11 << 20) + 256, "changed: flags %u offset %llx", d.flags[0], d.offsets[0]);
  // Overflow: 57 MiB more while 8 MiB are not drained does not fit in 64; once drained, the
  // region runs over the ring's end and goes on at its start.
  std::vector<Chunk> big = {{(u64)mem, 57 << 20, 0, 0, 0}};
  Run e = snap(big, ring, cap, head, tail_d);
  EXPECT(e.status[3] == 1 && e.offsets[0] == NONE, "overflow: status %llu", e.status[3]);
  *tail_h = d.status[0] + d.status[1];
  Run f = snap(big, ring, cap, head, tail_d);
  u64 at = (19 << 20) + 256;
  EXPECT(f.status[3] == 0 && f.offsets[0] == at && f.status[1] == (57ull << 20), "wrap: offset %llx length %llu", f.offsets[0], f.status[1]);
  CK(cudaMemcpy(back.data(), ring, cap, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(h.data(), mem, size, cudaMemcpyDeviceToHost));
  for (u64 k = 0; k < (57ull << 20); k += 4093)
    EXPECT(back[(at + k) % cap] == h[k], "wrapped copy differs at %llu", k);
  EXPECT(back[(at + (57ull << 20) - 1) % cap] == h[(57ull << 20) - 1], "wrapped copy's last byte");
  // The hash kernel's rate over 192 MiB (what a snapshot costs the program's stream).
  Chunk one = {(u64)mem, 192 << 20, 0, 0, 0};
  Chunk *dc; u64 *sums; unsigned *flags;
  CK(cudaMalloc(&dc, sizeof(Chunk))); CK(cudaMalloc(&sums, 16 * 192)); CK(cudaMalloc(&flags, 4));
  CK(cudaMemcpy(dc, &one, sizeof(Chunk), cudaMemcpyHostToDevice));
  cudaEvent_t t0, t1; cudaEventCreate(&t0); cudaEventCreate(&t1);
  rr_snap_hash<<<192, THREADS>>>(dc, 1, 1 << 20, sums, flags);
  cudaEventRecord(t0);
  for (int i = 0; i < 10; i++) rr_snap_hash<<<192, THREADS>>>(dc, 1, 1 << 20, sums, flags);
  cudaEventRecord(t1); CK(cudaEventSynchronize(t1));
  float ms; cudaEventElapsedTime(&ms, t0, t1);
  printf("snapshot ok (hash kernel: %.0f GB/s)\n", 10.0 * (192 << 20) / (ms * 1e6));
  return 0;
}
