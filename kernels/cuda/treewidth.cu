// Exact treewidth (paper 002): one breadth-first level of the search over sets S of
// eliminated vertices, for a target width k. One thread per input state: for every
// candidate v (not in S, not in the excluded clique) it computes the degree of v after
// eliminating S by a search through S over adjacency bitsets (Listing 1), and inserts
// S + {v} into the next level when that degree is at most k.
//
// Duplicate removal:
//   mode 0 (exact): open-addressing hash set of int32 slots holding indices into `out`.
//     A slot is claimed with atomicCAS(EMPTY -> BUSY), the state is written, then the slot
//     is published with atomicExch(BUSY -> index). Readers that meet BUSY wait for the
//     publication (independent thread scheduling, sm_70+), so no state is ever lost and
//     no duplicate is ever kept.
//   mode 1 (Bloom, as in the paper): `nhash` bits from two 32-bit hashes combined
//     linearly, set with atomicOr; a state is new when one of its bits was clear. False
//     positives drop states (Monte Carlo); racing inserts of the same state can only keep
//     a duplicate, never drop one.
// A state that does not fit in `out` (capacity `cap`) is counted in counters[1]; the host
// reports the overflow instead of pretending the level is complete.
//
// counters: [0] states written (may exceed cap), [1] states dropped for lack of room,
//           [2] degree evaluations.
// All kernels are extern "C" (no templates).

#define TW_MAXW 4  // at most 256 vertices per graph after preprocessing

#define SLOT_EMPTY (-1)
#define SLOT_BUSY (-2)
#define SLOT_LOST (-3)

typedef unsigned long long u64;

__device__ __forceinline__ u64 tw_mix64(u64 x) {
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// Same hash as kernels/treewidth.py::_hash_words.
__device__ __forceinline__ u64 tw_hash(const u64* w, int W) {
    u64 h = 0x9E3779B97F4A7C15ull;
    for (int q = 0; q < W; ++q) h = tw_mix64(h ^ (w[q] + 0x9E3779B97F4A7C15ull * (u64)(q + 1)));
    return h;
}

// 0: inserted at *slot_out index, 1: duplicate, 2: no room (counted).
__device__ int tw_insert_exact(const u64* child, int W, u64* out, long long cap, int* table, u64 tmask,
                               u64* counters, long long* index_out) {
    u64 slot = tw_hash(child, W) & tmask;
    volatile int* vtable = table;
    const volatile u64* vout = out;
    while (true) {
        int cur = vtable[slot];
        if (cur == SLOT_EMPTY) {
            int old = atomicCAS(&table[slot], SLOT_EMPTY, SLOT_BUSY);
            if (old == SLOT_EMPTY) {
                long long idx = (long long)atomicAdd(&counters[0], 1ull);
                if (idx >= cap) {
                    atomicAdd(&counters[1], 1ull);
                    atomicExch(&table[slot], SLOT_LOST);
                    return 2;
                }
                for (int q = 0; q < W; ++q) out[idx * W + q] = child[q];
                __threadfence();
                atomicExch(&table[slot], (int)idx);
                *index_out = idx;
                return 0;
            }
            cur = old;
        }
        while (cur == SLOT_BUSY) cur = vtable[slot];
        if (cur >= 0) {
            __threadfence();
            bool same = true;
            for (int q = 0; q < W; ++q)
                if (vout[(long long)cur * W + q] != child[q]) { same = false; break; }
            if (same) return 1;
        }
        slot = (slot + 1) & tmask;
    }
}

__device__ int tw_insert_bloom(const u64* child, int W, u64* out, long long cap, unsigned int* bloom, u64 bmask,
                               int nhash, u64* counters, long long* index_out) {
    u64 h = tw_hash(child, W);
    u64 h1 = h & 0xFFFFFFFFull;
    u64 h2 = (h >> 32) | 1ull;
    bool fresh = false;
    for (int i = 0; i < nhash; ++i) {
        u64 bit = (h1 + (u64)i * h2) & bmask;
        unsigned int m = 1u << (unsigned int)(bit & 31);
        unsigned int old = atomicOr(&bloom[bit >> 5], m);
        if (!(old & m)) fresh = true;
    }
    if (!fresh) return 1;
    long long idx = (long long)atomicAdd(&counters[0], 1ull);
    if (idx >= cap) {
        atomicAdd(&counters[1], 1ull);
        return 2;
    }
    for (int q = 0; q < W; ++q) out[idx * W + q] = child[q];
    *index_out = idx;
    return 0;
}

extern "C" __global__ void tw_expand(const u64* __restrict__ adj, const u64* __restrict__ cand, int n, int W, int k,
                                     const u64* __restrict__ states, long long n_in, u64* out, int* out_parent,
                                     int* out_vertex, long long cap, int* table, u64 tmask, unsigned int* bloom,
                                     u64 bmask, int nhash, int mode, u64* counters) {
    long long s = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= n_in) return;
    u64 S[TW_MAXW], reach[TW_MAXW], front[TW_MAXW], vis[TW_MAXW], child[TW_MAXW];
    for (int q = 0; q < W; ++q) S[q] = states[s * W + q];
    u64 evaluations = 0;
    for (int wv = 0; wv < W; ++wv) {
        u64 x = cand[wv] & ~S[wv];
        while (x) {
            int b = __ffsll((long long)x) - 1;
            x &= x - 1;
            int v = wv * 64 + b;
            const u64* av = adj + (long long)v * W;
            bool any = false;
            for (int q = 0; q < W; ++q) {
                reach[q] = av[q] & ~S[q];
                front[q] = av[q] & S[q];
                vis[q] = front[q];
                any |= front[q] != 0;
            }
            int deg = 0;
            for (int q = 0; q < W; ++q) deg += __popcll(reach[q]);
            // search through S: everything outside S reachable via eliminated vertices
            while (any && deg <= k + 1) {
                int u = -1;
                for (int q = 0; q < W; ++q) {
                    if (front[q]) {
                        int bb = __ffsll((long long)front[q]) - 1;
                        front[q] &= front[q] - 1;
                        u = q * 64 + bb;
                        break;
                    }
                }
                if (u < 0) break;
                const u64* au = adj + (long long)u * W;
                any = false;
                deg = 0;
                for (int q = 0; q < W; ++q) {
                    reach[q] |= au[q] & ~S[q];
                    u64 nw = au[q] & S[q] & ~vis[q];
                    vis[q] |= nw;
                    front[q] |= nw;
                    any |= front[q] != 0;
                    deg += __popcll(reach[q]);
                }
            }
            reach[wv] &= ~(1ull << b);
            deg = 0;
            for (int q = 0; q < W; ++q) deg += __popcll(reach[q]);
            ++evaluations;
            if (deg > k) continue;
            for (int q = 0; q < W; ++q) child[q] = S[q];
            child[wv] |= 1ull << b;
            long long idx = -1;
            int r = mode == 0 ? tw_insert_exact(child, W, out, cap, table, tmask, counters, &idx)
                              : tw_insert_bloom(child, W, out, cap, bloom, bmask, nhash, counters, &idx);
            if (r == 0) {
                out_parent[idx] = (int)s;
                out_vertex[idx] = v;
            }
        }
    }
    atomicAdd(&counters[2], evaluations);
}
