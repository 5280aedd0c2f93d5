// Exact treewidth (paper 002): one breadth-first level of the search over sets S of
// eliminated vertices, for a target width k. One thread per input state: for every
// candidate v (not in S, not in the excluded clique) it computes the degree of v after
// eliminating S (the vertices outside S reachable from v through S, Listing 1) and inserts
// S + {v} into the next level when that degree is at most k. The search through S is
// shared by all candidates of the state: the connected components of G[S] are labelled
// once (bitset BFS), each with its neighbourhood outside S; the neighbourhood of v is
// then N(v) \ S joined with the neighbourhoods of the components that touch v.
//
// Kernels tw_expand_<MW>_<plain|rule>: MW = 1, 2, 4 words per bitset (n <= 64, 128, 256).
// "rule": the simplicial / almost-simplicial rule (beyond the paper, as on the CPU): a
// state whose remaining graph has an (almost) simplicial candidate of degree <= k gets
// that single child.
//
// Duplicate removal:
//   mode 0 (exact): open-addressing hash set of int32 slots holding indices into `out`.
//     A slot is claimed with atomicCAS(EMPTY -> BUSY), the state is written, then the slot
//     is published with atomicExch(BUSY -> index). Readers that meet BUSY wait for the
//     publication (independent thread scheduling, sm_70+), so no state is ever lost and
//     no duplicate is ever kept.
//   mode 1 (Bloom, as in the paper): `nhash` bits from two 32-bit hashes combined
//     linearly, set with atomicOr under a hashed spin lock (`table` holds the locks in
//     this mode); a state is new when one of its bits was clear. False positives drop
//     states (Monte Carlo); the lock makes racing inserts of one state keep exactly one copy.
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

// 0: inserted (index in *index_out), 1: duplicate, 2: no room (counted in counters[1]).
// A full output buffer never claims slots (only the few threads racing past the capacity
// check do, marking them LOST), and the probe count is bounded, so the table cannot fill.
__device__ int tw_insert_exact(const u64* child, int W, u64* out, long long cap, int* table, u64 tmask,
                               u64* counters, long long* index_out) {
    u64 slot = tw_hash(child, W) & tmask;
    volatile int* vtable = table;
    const volatile u64* vout = out;
    volatile u64* vcount = counters;
    for (u64 probes = 0; probes <= tmask; ++probes) {
        int cur = vtable[slot];
        if (cur == SLOT_EMPTY) {
            if ((long long)vcount[0] >= cap) {
                atomicAdd(&counters[1], 1ull);
                return 2;
            }
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
    atomicAdd(&counters[1], 1ull);
    return 2;
}

__device__ int tw_insert_bloom(const u64* child, int W, u64* out, long long cap, unsigned int* bloom, u64 bmask,
                               int nhash, int* locks, u64 lmask, u64* counters, long long* index_out) {
    u64 h = tw_hash(child, W);
    u64 h1 = h & 0xFFFFFFFFull;
    u64 h2 = (h >> 32) | 1ull;
    bool fresh = false;
    // hashed lock (paper 002): racing inserts of one state serialize, so exactly one keeps it
    int* lock = locks + ((h >> 17) & lmask);
    while (atomicCAS(lock, 0, 1) != 0) __nanosleep(20);
    for (int i = 0; i < nhash; ++i) {
        u64 bit = (h1 + (u64)i * h2) & bmask;
        unsigned int m = 1u << (unsigned int)(bit & 31);
        unsigned int old = atomicOr(&bloom[bit >> 5], m);
        if (!(old & m)) fresh = true;
    }
    __threadfence();
    atomicExch(lock, 0);
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

__device__ __forceinline__ bool tw_test(const u64* b, int i) { return (b[i >> 6] >> (i & 63)) & 1ull; }

// True when all but at most one vertex of R[v] form a clique (R: neighbourhoods, MW words).
template <int MW>
__device__ bool tw_almost_simplicial(const u64 (*R)[MW], int v, int W) {
    u64 tmp[MW];
    int first_bad = -1;
    for (int q = 0; q < W && first_bad < 0; ++q) {
        u64 y = R[v][q];
        while (y) {
            int u = q * 64 + __ffsll((long long)y) - 1;
            y &= y - 1;
            bool bad = false;
            for (int r = 0; r < W; ++r) {
                tmp[r] = R[v][r] & ~R[u][r];
                if (r == (u >> 6)) tmp[r] &= ~(1ull << (u & 63));
                bad |= tmp[r] != 0;
            }
            if (bad) { first_bad = u; break; }
        }
    }
    if (first_bad < 0) return true;
    int miss = 0, other = -1;
    for (int r = 0; r < W; ++r) {
        int c = __popcll(tmp[r]);
        if (c) { miss += c; other = r * 64 + __ffsll((long long)tmp[r]) - 1; }
    }
    for (int t = 0; t < 2; ++t) {
        int w = first_bad;
        if (t == 1) {
            if (miss != 1) break;
            w = other;
        }
        bool ok = true;
        for (int q = 0; q < W && ok; ++q) {
            u64 y = R[v][q];
            while (y && ok) {
                int u = q * 64 + __ffsll((long long)y) - 1;
                y &= y - 1;
                if (u == w) continue;
                for (int r = 0; r < W; ++r) {
                    u64 m = R[v][r] & ~R[u][r];
                    if (r == (u >> 6)) m &= ~(1ull << (u & 63));
                    if (r == (w >> 6)) m &= ~(1ull << (w & 63));
                    if (m) ok = false;
                }
            }
        }
        if (ok) return true;
    }
    return false;
}

template <int MW, bool RULE>
__device__ void tw_expand_body(const u64* __restrict__ adj, const u64* __restrict__ cand, int n, int W, int k,
                               const u64* __restrict__ states, long long n_in, u64* out, int* out_parent,
                               int* out_vertex, long long cap, int* table, u64 tmask, unsigned int* bloom, u64 bmask,
                               int nhash, int mode, u64* counters) {
    long long s = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= n_in) return;
    u64 S[MW], cm[MW], front[MW], reach[MW], seen[MW], child[MW];
    short comp[64 * MW];
    u64 nout[64 * MW][MW];
    u64 R[RULE ? 64 * MW : 1][MW];
    short deg[RULE ? 64 * MW : 1];
    for (int q = 0; q < W; ++q) S[q] = states[s * W + q];
    // components of G[S] and their neighbourhoods outside S
    int ncomp = 0;
    for (int q = 0; q < W; ++q) {
        u64 x = S[q];
        while (x) { comp[q * 64 + __ffsll((long long)x) - 1] = -1; x &= x - 1; }
    }
    for (int q = 0; q < W; ++q) {
        u64 x = S[q];
        while (x) {
            int u = q * 64 + __ffsll((long long)x) - 1;
            x &= x - 1;
            if (comp[u] >= 0) continue;
            for (int r = 0; r < W; ++r) { cm[r] = 0; front[r] = 0; nout[ncomp][r] = 0; }
            cm[u >> 6] |= 1ull << (u & 63);
            front[u >> 6] |= 1ull << (u & 63);
            while (true) {
                int z = -1;
                for (int r = 0; r < W; ++r) {
                    if (front[r]) {
                        z = r * 64 + __ffsll((long long)front[r]) - 1;
                        front[r] &= front[r] - 1;
                        break;
                    }
                }
                if (z < 0) break;
                comp[z] = (short)ncomp;
                const u64* az = adj + (long long)z * W;
                for (int r = 0; r < W; ++r) {
                    u64 a = az[r];
                    nout[ncomp][r] |= a & ~S[r];
                    u64 nw = a & S[r] & ~cm[r];
                    cm[r] |= nw;
                    front[r] |= nw;
                }
            }
            ++ncomp;
        }
    }
    u64 evaluations = 0;
    int forced = -1;
    // degrees after eliminating S: every remaining vertex (RULE) or the candidates
    for (int wv = 0; wv < W; ++wv) {
        u64 x = RULE ? ~S[wv] : (cand[wv] & ~S[wv]);
        if (RULE && wv == W - 1 && (n & 63)) x &= (1ull << (n & 63)) - 1;
        while (x) {
            int b = __ffsll((long long)x) - 1;
            x &= x - 1;
            int v = wv * 64 + b;
            const u64* av = adj + (long long)v * W;
            for (int q = 0; q < W; ++q) { reach[q] = av[q] & ~S[q]; seen[q] = 0; }
            for (int q = 0; q < W; ++q) {
                u64 y = av[q] & S[q];
                while (y) {
                    int c = comp[q * 64 + __ffsll((long long)y) - 1];
                    y &= y - 1;
                    if (!((seen[c >> 6] >> (c & 63)) & 1ull)) {
                        seen[c >> 6] |= 1ull << (c & 63);
                        for (int r = 0; r < W; ++r) reach[r] |= nout[c][r];
                    }
                }
            }
            reach[wv] &= ~(1ull << b);
            int d = 0;
            for (int q = 0; q < W; ++q) d += __popcll(reach[q]);
            ++evaluations;
            if (RULE) {
                for (int q = 0; q < W; ++q) R[v][q] = reach[q];
                deg[v] = (short)d;
                continue;
            }
            if (d > k) continue;
            for (int q = 0; q < W; ++q) child[q] = S[q];
            child[wv] |= 1ull << b;
            long long idx = -1;
            int r = mode == 0 ? tw_insert_exact(child, W, out, cap, table, tmask, counters, &idx)
                              : tw_insert_bloom(child, W, out, cap, bloom, bmask, nhash, table, tmask, counters, &idx);
            if (r == 0) { out_parent[idx] = (int)s; out_vertex[idx] = v; }
        }
    }
    if (RULE) {
        for (int wv = 0; wv < W && forced < 0; ++wv) {
            u64 x = cand[wv] & ~S[wv];
            while (x) {
                int v = wv * 64 + __ffsll((long long)x) - 1;
                x &= x - 1;
                if (deg[v] <= k && tw_almost_simplicial<MW>(R, v, W)) { forced = v; break; }
            }
        }
        for (int wv = 0; wv < W; ++wv) {
            u64 x = cand[wv] & ~S[wv];
            while (x) {
                int b = __ffsll((long long)x) - 1;
                x &= x - 1;
                int v = wv * 64 + b;
                if (deg[v] > k || (forced >= 0 && v != forced)) continue;
                for (int q = 0; q < W; ++q) child[q] = S[q];
                child[wv] |= 1ull << b;
                long long idx = -1;
                int r = mode == 0 ? tw_insert_exact(child, W, out, cap, table, tmask, counters, &idx)
                                  : tw_insert_bloom(child, W, out, cap, bloom, bmask, nhash, table, tmask, counters, &idx);
                if (r == 0) { out_parent[idx] = (int)s; out_vertex[idx] = v; }
            }
        }
    }
    atomicAdd(&counters[2], evaluations);
}

#define TW_KERNEL(MW, NAME, RULE)                                                                                   \
    extern "C" __global__ void tw_expand_##MW##_##NAME(                                                            \
        const u64* __restrict__ adj, const u64* __restrict__ cand, int n, int W, int k,                            \
        const u64* __restrict__ states, long long n_in, u64* out, int* out_parent, int* out_vertex, long long cap, \
        int* table, u64 tmask, unsigned int* bloom, u64 bmask, int nhash, int mode, u64* counters) {               \
        tw_expand_body<MW, RULE>(adj, cand, n, W, k, states, n_in, out, out_parent, out_vertex, cap, table, tmask, \
                                 bloom, bmask, nhash, mode, counters);                                             \
    }

TW_KERNEL(1, plain, false)
TW_KERNEL(1, rule, true)
TW_KERNEL(2, plain, false)
TW_KERNEL(2, rule, true)
TW_KERNEL(4, plain, false)
TW_KERNEL(4, rule, true)
