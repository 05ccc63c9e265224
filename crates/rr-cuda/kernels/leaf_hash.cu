// rr_leaf_hash: a 128-bit fingerprint of each `leaf`-byte piece of [base, base + len), computed
// where the memory lives. rr-tui's recorder uses it to tell which device memory it has stored
// already without copying it to the host, and replay verification to compare the replayed
// memory with the recorded output without copying it back.
//
// Each block sums two independent 64-bit mixes of every 16-byte word and its index (an additive
// hash: order-free, so a block reduces in any order, and position-dependent through the index).
// Not cryptographic: it tells a program's own memory apart, which is all it is used for; the
// names of stored blobs remain the XXH3-128 of the bytes written.
//
// Built into leaf_hash.ptx (committed: no CUDA toolkit is needed to build rr-tui) with
//   nvcc -ptx -arch=compute_75 -O3 -o leaf_hash.ptx leaf_hash.cu
// on the GPU machine (tests/gpu/make_ptx.sh), loaded by the driver at run time.

#define THREADS 256

__device__ __forceinline__ unsigned long long rotl(unsigned long long x, int r) {
    return (x << r) | (x >> (64 - r));
}

// splitmix64's finaliser.
__device__ __forceinline__ unsigned long long mix_a(unsigned long long z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// MurmurHash3's fmix64.
__device__ __forceinline__ unsigned long long mix_b(unsigned long long z) {
    z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdULL;
    z = (z ^ (z >> 33)) * 0xc4ceb9fe1a85ec53ULL;
    return z ^ (z >> 33);
}

__device__ __forceinline__ void word(unsigned long long i, unsigned long long lo,
                                     unsigned long long hi, unsigned long long &a,
                                     unsigned long long &b) {
    unsigned long long x = lo ^ (i * 0x9e3779b97f4a7c15ULL);
    unsigned long long y = hi + (i * 0xd6e8feb86659fd93ULL);
    a += mix_a(x + rotl(y, 23));
    b += mix_b(y ^ rotl(x, 41) ^ 0x2545f4914f6cdd1dULL);
}

// Block sums of (a, b) (every hash kernel reduces the same way); valid in thread 0.
__device__ __forceinline__ void block_sums(unsigned long long &a, unsigned long long &b) {
    for (int off = 16; off > 0; off >>= 1) {
        a += __shfl_down_sync(0xffffffffu, a, off);
        b += __shfl_down_sync(0xffffffffu, b, off);
    }
    __shared__ unsigned long long sa[THREADS / 32], sb[THREADS / 32];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) { sa[warp] = a; sb[warp] = b; }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < THREADS / 32; w++) { a += sa[w]; b += sb[w]; }
    }
}

// Block b hashes bytes [b * leaf, min((b + 1) * leaf, len)) into out[2b], out[2b + 1].
// `base` is 16-byte aligned and `leaf` a multiple of 16; a tail shorter than 16 bytes is read
// byte by byte and zero-padded (the caller mixes `len` into the combined hash).
extern "C" __global__ void __launch_bounds__(THREADS)
rr_leaf_hash(const unsigned char *base, unsigned long long len, unsigned long long leaf,
             unsigned long long *out) {
    unsigned long long start = (unsigned long long)blockIdx.x * leaf;
    unsigned long long end = start + leaf < len ? start + leaf : len;
    unsigned long long a = 0, b = 0;
    const ulonglong2 *words = (const ulonglong2 *)base;
    unsigned long long full = end / 16;
    for (unsigned long long i = start / 16 + threadIdx.x; i < full; i += THREADS) {
        ulonglong2 w = __ldcs(&words[i]);
        word(i, w.x, w.y, a, b);
    }
    if (threadIdx.x == 0 && end == len && full * 16 < len && full * 16 >= start) {
        unsigned long long lo = 0, hi = 0;
        for (unsigned long long k = full * 16; k < len; k++) {
            unsigned long long byte = base[k];
            unsigned int s = (unsigned int)(k - full * 16);
            if (s < 8) lo |= byte << (8 * s); else hi |= byte << (8 * (s - 8));
        }
        word(full, lo, hi, a, b);
    }
    block_sums(a, b);
    if (threadIdx.x == 0) {
        out[2 * (unsigned long long)blockIdx.x] = a;
        out[2 * (unsigned long long)blockIdx.x + 1] = b;
    }
}
