// The recorder's stream-ordered snapshots: kernels the recorder enqueues on the application's
// own stream, right before a recorded kernel (its input) and right after it (its output), so
// that the application's thread never waits for anything (rr-recorder's `ordered` module).
//
//   rr_snap_hash  one block per 1 MiB leaf of every chunk: the leaf's two 64-bit sums (the same
//                 as rr_leaf_hash's), whether any byte is not zero, and whether the sums differ
//                 from the expected ones (the content the recorder already holds for that chunk);
//                 per chunk, NONZERO and CHANGED flags.
//   rr_snap_plan  one block: which chunks must be copied (ALWAYS, or NONZERO and CHANGED), their
//                 offsets, and one region for all of them taken from the recorder's staging ring
//                 (device memory it owns). The ring's head moves here, on the device; its tail
//                 is where the recorder's own thread has drained up to (mapped host memory).
//                 When the region does not fit, nothing is copied and the status says so: the
//                 recorder skips that instance ("staging full") instead of waiting.
//   rr_snap_copy  one block per leaf: copies the leaves of the planned chunks into the region.
//
// Built into snapshot.ptx (committed: no CUDA toolkit is needed to build rr-tui) with
//   nvcc -ptx -arch=compute_75 -O3 -o snapshot.ptx snapshot.cu      (tests/gpu/make_ptx.sh)

#include "leaf_hash.cu"

#define NONE 0xffffffffffffffffULL
#define PLAN_THREADS 1024
// Chunk flags.
#define NONZERO 1u
#define CHANGED 2u

// One piece of memory to snapshot, as the recorder describes it (five 8-byte words).
struct Chunk {
    unsigned long long src;        // device address (or the device address of mapped host memory)
    unsigned long long len;        // bytes
    unsigned long long expected;   // device address of the leaf sums held for it, 0: none
    unsigned long long first_leaf; // index of its first leaf among all the snapshot's leaves
    unsigned long long always;     // 1: copied whatever its content (globals, host memory)
};

// The chunk holding global leaf `leaf` (chunks are in order of first_leaf, none empty).
__device__ __forceinline__ unsigned chunk_of(const Chunk *chunks, unsigned n, unsigned long long leaf) {
    unsigned lo = 0, hi = n;
    while (hi - lo > 1) {
        unsigned mid = lo + (hi - lo) / 2;
        if (chunks[mid].first_leaf <= leaf) lo = mid; else hi = mid;
    }
    return lo;
}

extern "C" __global__ void __launch_bounds__(THREADS)
rr_snap_hash(const Chunk *chunks, unsigned n, unsigned long long leaf, unsigned long long *sums,
             unsigned *flags) {
    unsigned long long g = blockIdx.x;
    unsigned c = chunk_of(chunks, n, g);
    Chunk ch = chunks[c];
    const unsigned char *base = (const unsigned char *)ch.src;
    unsigned long long j = g - ch.first_leaf;
    unsigned long long start = j * leaf;
    unsigned long long end = start + leaf < ch.len ? start + leaf : ch.len;
    unsigned long long a = 0, b = 0, nz = 0;
    unsigned long long full = end / 16;
    if ((ch.src & 15) == 0) {
        const ulonglong2 *words = (const ulonglong2 *)base;
        for (unsigned long long i = start / 16 + threadIdx.x; i < full; i += THREADS) {
            ulonglong2 w = __ldcs(&words[i]);
            nz |= w.x | w.y;
            word(i, w.x, w.y, a, b);
        }
    } else {
        // Unaligned (a small global): whole words read byte by byte.
        for (unsigned long long i = start / 16 + threadIdx.x; i < full; i += THREADS) {
            unsigned long long lo = 0, hi = 0;
            for (int k = 0; k < 16; k++) {
                unsigned long long byte = base[i * 16 + k];
                if (k < 8) lo |= byte << (8 * k); else hi |= byte << (8 * (k - 8));
            }
            nz |= lo | hi;
            word(i, lo, hi, a, b);
        }
    }
    if (threadIdx.x == 0 && end == ch.len && full * 16 < ch.len && full * 16 >= start) {
        unsigned long long lo = 0, hi = 0;
        for (unsigned long long k = full * 16; k < ch.len; k++) {
            unsigned long long byte = base[k];
            unsigned int s = (unsigned int)(k - full * 16);
            if (s < 8) lo |= byte << (8 * s); else hi |= byte << (8 * (s - 8));
        }
        nz |= lo | hi;
        word(full, lo, hi, a, b);
    }
    int any = __syncthreads_or(nz != 0);
    block_sums(a, b);
    if (threadIdx.x == 0) {
        sums[2 * g] = a;
        sums[2 * g + 1] = b;
        unsigned f = any ? NONZERO : 0u;
        if (ch.expected == 0) {
            f |= CHANGED;
        } else {
            const unsigned long long *e = (const unsigned long long *)ch.expected;
            if (e[2 * j] != a || e[2 * j + 1] != b) f |= CHANGED;
        }
        if (f) atomicOr(&flags[c], f);
    }
}

__device__ __forceinline__ unsigned long long planned_size(const Chunk &ch, unsigned f) {
    bool copy = ch.always || ((f & NONZERO) && (f & CHANGED));
    return copy ? (ch.len + 255) / 256 * 256 : 0;
}

// status: [0] the ring's running count where the region was taken, [1] its length (the recorder
// gives it back by these), [2] the bytes the planned chunks need, [3] 1 when they did not fit
// (nothing copied). Offsets are positions in the ring: a region may run over the ring's end and
// go on at its start (chunks copied there wrap too).
extern "C" __global__ void __launch_bounds__(PLAN_THREADS)
rr_snap_plan(const Chunk *chunks, unsigned n, const unsigned *flags, unsigned long long *offsets,
             unsigned long long *status, unsigned long long *head, const unsigned long long *tail,
             unsigned long long capacity) {
    __shared__ unsigned long long scan[PLAN_THREADS];
    __shared__ unsigned long long base, taken_at;
    __shared__ int fits;
    if (threadIdx.x == 0) base = 0;
    __syncthreads();
    // Offsets relative to the region: an exclusive scan, a tile of PLAN_THREADS chunks at a time.
    for (unsigned t = 0; t < n; t += PLAN_THREADS) {
        unsigned c = t + threadIdx.x;
        unsigned long long size = c < n ? planned_size(chunks[c], flags[c]) : 0;
        scan[threadIdx.x] = size;
        __syncthreads();
        for (unsigned s = 1; s < PLAN_THREADS; s <<= 1) {
            unsigned long long v = threadIdx.x >= s ? scan[threadIdx.x - s] : 0;
            __syncthreads();
            scan[threadIdx.x] += v;
            __syncthreads();
        }
        if (c < n) offsets[c] = size ? base + scan[threadIdx.x] - size : NONE;
        __syncthreads();
        if (threadIdx.x == PLAN_THREADS - 1) base += scan[threadIdx.x];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        unsigned long long total = base;
        fits = total <= capacity;
        taken_at = 0;
        if (fits && total > 0) {
            for (;;) {
                unsigned long long h = *(volatile unsigned long long *)head;
                unsigned long long t = *(volatile const unsigned long long *)tail;
                if (h + total - t > capacity) { fits = 0; break; }
                if (atomicCAS(head, h, h + total) == h) { taken_at = h; break; }
            }
        }
        status[0] = taken_at;
        status[1] = fits ? total : 0;
        status[2] = total;
        status[3] = fits ? 0 : 1;
    }
    __syncthreads();
    for (unsigned c = threadIdx.x; c < n; c += PLAN_THREADS) {
        unsigned long long o = offsets[c];
        offsets[c] = (o == NONE || !fits) ? NONE : (taken_at + o) % capacity;
    }
}

// Copies leaf j of each planned chunk to its place in the ring, wrapping at the ring's end
// (positions and the capacity are multiples of 256, so no 16-byte word straddles it).
extern "C" __global__ void __launch_bounds__(THREADS)
rr_snap_copy(const Chunk *chunks, unsigned n, unsigned long long leaf,
             const unsigned long long *offsets, unsigned char *ring, unsigned long long capacity) {
    unsigned long long g = blockIdx.x;
    unsigned c = chunk_of(chunks, n, g);
    unsigned long long at = offsets[c];
    if (at == NONE) return;
    Chunk ch = chunks[c];
    unsigned long long j = g - ch.first_leaf;
    unsigned long long start = j * leaf;
    unsigned long long end = start + leaf < ch.len ? start + leaf : ch.len;
    const unsigned char *src = (const unsigned char *)ch.src;
    unsigned long long p0 = (at + start) % capacity;
    if (p0 + (end - start) > capacity) {
        // This leaf runs over the ring's end: byte by byte (rare: once a lap).
        for (unsigned long long k = start + threadIdx.x; k < end; k += THREADS)
            ring[(at + k) % capacity] = src[k];
        return;
    }
    unsigned char *dst = ring + p0;
    if ((ch.src & 15) == 0) {
        // Positions are multiples of 256 and leaves of 16: whole words, then the tail.
        unsigned long long full = end / 16;
        const ulonglong2 *s = (const ulonglong2 *)src;
        for (unsigned long long i = start / 16 + threadIdx.x; i < full; i += THREADS)
            *(ulonglong2 *)(dst + (i * 16 - start)) = __ldcs(&s[i]);
        for (unsigned long long k = (full * 16 > start ? full * 16 : start) + threadIdx.x; k < end; k += THREADS)
            dst[k - start] = src[k];
    } else {
        for (unsigned long long k = start + threadIdx.x; k < end; k += THREADS) dst[k - start] = src[k];
    }
}
