// Checks rr_leaf_hash (crates/rr-cuda/kernels/leaf_hash.cu) against a host reference on random
// data, odd lengths and tails, and times it. Prints "leaf_hash ok GB/s=..." or the mismatch.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#include "../../../crates/rr-cuda/kernels/leaf_hash.cu"

typedef unsigned long long u64;
static u64 rl(u64 x, int r) { return (x << r) | (x >> (64 - r)); }
static u64 ma(u64 z) { z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL; z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL; return z ^ (z >> 31); }
static u64 mb(u64 z) { z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdULL; z = (z ^ (z >> 33)) * 0xc4ceb9fe1a85ec53ULL; return z ^ (z >> 33); }

static void reference(const unsigned char *p, u64 len, u64 leaf, std::vector<u64> &out) {
    u64 leaves = (len + leaf - 1) / leaf;
    out.assign(2 * leaves, 0);
    for (u64 i = 0; i * 16 < len; i++) {
        u64 lo = 0, hi = 0;
        for (u64 k = 0; k < 16 && i * 16 + k < len; k++) {
            u64 byte = p[i * 16 + k];
            if (k < 8) lo |= byte << (8 * k); else hi |= byte << (8 * (k - 8));
        }
        u64 x = lo ^ (i * 0x9e3779b97f4a7c15ULL), y = hi + (i * 0xd6e8feb86659fd93ULL);
        u64 l = (i * 16) / leaf;
        out[2 * l] += ma(x + rl(y, 23));
        out[2 * l + 1] += mb(y ^ rl(x, 41) ^ 0x2545f4914f6cdd1dULL);
    }
}

int main() {
    const u64 leaf = 1 << 20;
    u64 lens[] = {1, 15, 16, 17, 4096, (1 << 20) - 3, (1 << 20), (3 << 20) + 5, (64 << 20) + 13};
    unsigned char *d; u64 *o;
    cudaMalloc(&d, 64 << 20 | 4096); cudaMalloc(&o, 1 << 20);
    std::vector<unsigned char> h((64 << 20) + 64);
    srand(7);
    for (auto &c : h) c = rand() & 255;
    cudaMemcpy(d, h.data(), (64 << 20) + 13, cudaMemcpyHostToDevice);
    for (u64 len : lens) {
        u64 leaves = (len + leaf - 1) / leaf;
        rr_leaf_hash<<<leaves, THREADS>>>(d, len, leaf, o);
        std::vector<u64> got(2 * leaves), want;
        cudaMemcpy(got.data(), o, 16 * leaves, cudaMemcpyDeviceToHost);
        reference(h.data(), len, leaf, want);
        if (got != want) { printf("leaf_hash MISMATCH len=%llu\n", len); return 1; }
    }
    // One changed byte changes the hash of its leaf only.
    std::vector<u64> before(2), after(2);
    rr_leaf_hash<<<1, THREADS>>>(d, 4096, leaf, o);
    cudaMemcpy(before.data(), o, 16, cudaMemcpyDeviceToHost);
    cudaMemset(d + 100, h[100] ^ 1, 1);
    rr_leaf_hash<<<1, THREADS>>>(d, 4096, leaf, o);
    cudaMemcpy(after.data(), o, 16, cudaMemcpyDeviceToHost);
    if (before[0] == after[0] || before[1] == after[1]) { printf("leaf_hash INSENSITIVE\n"); return 1; }
    // Throughput over 8 GiB.
    u64 big = 8ull << 30; unsigned char *g; u64 *go;
    if (cudaMalloc(&g, big) == cudaSuccess && cudaMalloc(&go, 16 * (big / leaf)) == cudaSuccess) {
        cudaMemset(g, 1, big);
        cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
        rr_leaf_hash<<<big / leaf, THREADS>>>(g, big, leaf, go);
        cudaEventRecord(a);
        for (int r = 0; r < 5; r++) rr_leaf_hash<<<big / leaf, THREADS>>>(g, big, leaf, go);
        cudaEventRecord(b); cudaEventSynchronize(b);
        float ms; cudaEventElapsedTime(&ms, a, b);
        printf("leaf_hash ok GB/s=%.0f\n", 5.0 * big / (ms * 1e-3) / 1e9);
    } else printf("leaf_hash ok (no 8 GiB for the timing)\n");
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
