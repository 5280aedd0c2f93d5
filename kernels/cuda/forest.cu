// Linear forest from a [0,2]-factor: bidirectional scans (Klein and Strzodka, ICPP 2022,
// Algorithm 3, Section 4.2).
// Pointers q(v) = (q0, q1) point 2^s steps along the path in both directions; a path end
// is marked by the negative value -(end + 1). One launch per step, ping-pong buffers.
// templates: cycle_init<V,I>, cycle_step<V,I>, cycle_break<V,I>, rank_init<V,I>, rank_step<V,I>, rank_finish<V,I>, scatter_permutation<V,I>, ruler_mark<V,I>, ruler_walk<V,I>, ruler_link<V,I>, ruler_scan<V,I>, ruler_finish<V,I>, order_tile_sums<V,I>, order_scan_tiles<V,I>, order_place<V,I>, order_offsets<V,I>
#include <cooperative_groups.h>

#include "append.cuh"
#include "hashing.cuh"
#include "pairs.cuh"

template <typename V, typename I>
__device__ __forceinline__ bool edge_less(V w, I a, I b, V w2, I a2, I b2) {
    return w < w2 || (w == w2 && (a < a2 || (a == a2 && b < b2)));
}

// Replaces the weakest edge (bw, ba, bb) by (w, a, b) when that one is weaker; true if so.
template <typename V, typename I>
__device__ __forceinline__ bool take_weaker(V w, I a, I b, V& bw, I& ba, I& bb) {
    if (!edge_less(w, a, b, bw, ba, bb)) return false;
    bw = w;
    ba = a;
    bb = b;
    return true;
}

// The slot of w's pointer pair that continues away from v.
template <typename I>
__device__ __forceinline__ int away_from(const I* q, I w, I v) {
    return q[2 * (size_t)w] == v ? 1 : 0;
}

template <typename V, typename I>
__global__ void cycle_init(const I N, const I* __restrict__ partners, const V* __restrict__ weights,
                           I* q, V* mw, I* ma, I* mb) {
    for (I v = blockIdx.x * (I)blockDim.x + threadIdx.x; v < N; v += (I)gridDim.x * blockDim.x) {
        for (int i = 0; i < 2; ++i) {
            const size_t k = 2 * (size_t)v + i;
            const I p = partners[k];
            q[k] = p >= 0 ? p : -(v + 1);
            mw[k] = p >= 0 ? weights[k] : V(__longlong_as_double(0x7ff0000000000000ULL));
            ma[k] = p >= 0 ? min(v, p) : N;
            mb[k] = p >= 0 ? max(v, p) : N;
        }
    }
}

template <typename V, typename I>
__global__ void cycle_step(const I N, const I* __restrict__ q, const V* __restrict__ mw,
                           const I* __restrict__ ma, const I* __restrict__ mb, I* __restrict__ q2,
                           V* __restrict__ mw2, I* __restrict__ ma2, I* __restrict__ mb2) {
    for (I v = blockIdx.x * (I)blockDim.x + threadIdx.x; v < N; v += (I)gridDim.x * blockDim.x) {
        for (int i = 0; i < 2; ++i) {
            const size_t k = 2 * (size_t)v + i;
            I w = q[k];
            V bw = mw[k];
            I ba = ma[k], bb = mb[k];
            if (w >= 0) {
                const size_t kw = 2 * (size_t)w + away_from(q, w, v);
                take_weaker(mw[kw], ma[kw], mb[kw], bw, ba, bb);
                w = q[kw];
            }
            q2[k] = w;
            mw2[k] = bw;
            ma2[k] = ba;
            mb2[k] = bb;
        }
    }
}

// Vertices whose pointers never reached a path end lie on a cycle; the two endpoints of
// the cycle's weakest edge drop it. The lower endpoint records the removed edge.
template <typename V, typename I>
__global__ void cycle_break(const I N, const I* __restrict__ q, const V* __restrict__ mw,
                            const I* __restrict__ ma, const I* __restrict__ mb, I* __restrict__ partners,
                            I* __restrict__ removed_lo) {
    for (I v = blockIdx.x * (I)blockDim.x + threadIdx.x; v < N; v += (I)gridDim.x * blockDim.x) {
        const size_t k0 = 2 * (size_t)v, k1 = k0 + 1;
        if (q[k0] < 0 || q[k1] < 0) continue;
        size_t k = edge_less(mw[k1], ma[k1], mb[k1], mw[k0], ma[k0], mb[k0]) ? k1 : k0;
        const I a = ma[k], b = mb[k];
        if (v != a && v != b) continue;
        const I other = v == a ? b : a;
        for (int s = 0; s < 2; ++s)
            if (partners[2 * (size_t)v + s] == other) partners[2 * (size_t)v + s] = -1;
        if (v == a) removed_lo[v] = b;
    }
}

template <typename V, typename I>
__global__ void rank_init(const I N, const I* __restrict__ partners, I* __restrict__ q, I* __restrict__ r) {
    for (I v = blockIdx.x * (I)blockDim.x + threadIdx.x; v < N; v += (I)gridDim.x * blockDim.x) {
        for (int i = 0; i < 2; ++i) {
            const size_t k = 2 * (size_t)v + i;
            const I p = partners[k];
            q[k] = p >= 0 ? p : -(v + 1);
            r[k] = p >= 0 ? 1 : 0;
        }
    }
}

template <typename V, typename I>
__global__ void rank_step(const I N, const I* __restrict__ q, const I* __restrict__ r, I* __restrict__ q2,
                          I* __restrict__ r2, int* __restrict__ active) {
    int busy = 0;
    for (I v = blockIdx.x * (I)blockDim.x + threadIdx.x; v < N; v += (I)gridDim.x * blockDim.x) {
        for (int i = 0; i < 2; ++i) {
            const size_t k = 2 * (size_t)v + i;
            I w = q[k];
            I d = r[k];
            if (w >= 0) {
                const size_t kw = 2 * (size_t)w + away_from(q, w, v);
                d += r[kw];
                w = q[kw];
                busy |= (w >= 0);
            }
            q2[k] = w;
            r2[k] = d;
        }
    }
    if (busy) *active = 1;
}

template <typename V, typename I>
__global__ void rank_finish(const I N, const I* __restrict__ q, const I* __restrict__ r, I* __restrict__ path_id,
                            I* __restrict__ position, I* __restrict__ length) {
    for (I v = blockIdx.x * (I)blockDim.x + threadIdx.x; v < N; v += (I)gridDim.x * blockDim.x) {
        const size_t k = 2 * (size_t)v;
        const I e0 = -q[k] - 1, e1 = -q[k + 1] - 1;
        const I pid = min(e0, e1);
        path_id[v] = pid;
        position[v] = e0 < e1 ? r[k] : (e1 < e0 ? r[k + 1] : 0);
        if (pid == v) length[v] = r[k] + r[k + 1] + 1;
    }
}

template <typename V, typename I>
__global__ void scatter_permutation(const I N, const I* __restrict__ path_id, const I* __restrict__ position,
                                    const I* __restrict__ offsets, I* __restrict__ perm) {
    for (I v = blockIdx.x * (I)blockDim.x + threadIdx.x; v < N; v += (I)gridDim.x * blockDim.x)
        perm[offsets[path_id[v]] + position[v]] = v;
}

// ---------------------------------------------------------------------------------------
// Work-efficient variant: sparse ruling set (list ranking with O(N) work), one pass.
// Rulers: path ends, isolated vertices and a hashed sample (about 1 in `spacing`). A vertex
// whose partners are not its id neighbours v +- 1 is drawn in a run of `run` consecutive
// ids (hash of v / run): where the paths cross the order of the ids, as on the columns of
// a grid, neighbouring threads then walk neighbouring paths through neighbouring memory and
// share its sectors. A vertex with a partner v +- 1 is drawn alone (hash of v, another
// salt): along the order of the ids, as on a grid's rows, runs would lengthen the gaps.
// Ruler slot t = 2 * rank + i walks from its ruler along side i and claims vertices with
// atomicCAS until it reaches a ruler or a vertex claimed by the walk coming the other way
// (the two walks of a gap meet in the middle, so every vertex is visited once). A claimed
// vertex keeps its owner slot and its distance from the owner's ruler. ruler_link joins
// the two halves of each gap: link[t] = the far ruler's slot facing the gap (or -(end+1)
// at a path end), gap length and weakest edge. The reduced lists of slots (small enough
// for L2) get one bidirectional scan that carries, per slot, the distance to the path end
// (+) and the weakest edge ahead with the distance to its nearer endpoint (min): on a path
// the first gives the rank, on a cycle (whose pointers never end) the second gives the
// distance to where the cycle is cut. Every vertex then combines its two directions.
// Vertices on cycles without any ruler walk their cycle alone. Continue through slot
// q[t] ^ 1 while q[t] >= 0.
// (kernels ruler_*: templates listed at the top)

// claim[v] (64 bits): CLAIM_FREE, RULER_TAG << 32 | the ruler's rank, or (owner slot << 32
// | distance from the owner's ruler). One atomicCAS per visited vertex claims it, records
// the distance and tells the walk whether it reached a ruler (and which) or the other walk
// of its gap.
#define CLAIM_FREE 0xffffffffffffffffULL
#define RULER_TAG 0xfffffffeULL

__device__ __forceinline__ bool is_ruler(unsigned long long c) { return (c >> 32) == RULER_TAG; }

// A slot's records, one per slot so that a gather of another slot's fields reads one or
// two sectors, not one per field (they were eight arrays each): the result of its walk,
// and its window at one level of the scan (without the pointer q, kept in an array of its
// own: the scan's later steps read q alone). 16-byte aligned: two or four vector accesses.
template <typename V, typename I>
struct __align__(16) WalkRecord {
    V bw;
    I end, met, len, ba, bb, bn, bk;
};

template <typename V, typename I>
struct __align__(16) Window {
    V mw;
    I r, ma, mb, nv, dn, mn;
};

// The records are stored whole, their padding too (zeroed), in 16-byte pieces: a warp's
// records then cover whole sectors (a sector written in part is read from memory first).
template <typename T>
union RecordBytes {
    T rec;
    uint4 raw[sizeof(T) / 16];
};

template <typename T>
__device__ __forceinline__ void clear(RecordBytes<T>& b) {
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); ++i) b.raw[i] = make_uint4(0u, 0u, 0u, 0u);
}

template <typename T>
__device__ __forceinline__ void store_bytes(T* p, const RecordBytes<T>& b) {
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); ++i) reinterpret_cast<uint4*>(p)[i] = b.raw[i];
}

template <typename V, typename I>
__device__ __forceinline__ void store_walk(WalkRecord<V, I>* p, V bw, I end, I met, I len, I ba, I bb, I bn, I bk) {
    RecordBytes<WalkRecord<V, I>> b;
    clear(b);
    b.rec.bw = bw;
    b.rec.end = end;
    b.rec.met = met;
    b.rec.len = len;
    b.rec.ba = ba;
    b.rec.bb = bb;
    b.rec.bn = bn;
    b.rec.bk = bk;
    store_bytes(p, b);
}

template <typename V, typename I>
__device__ __forceinline__ void store_window(Window<V, I>* p, const Window<V, I>& w) {
    RecordBytes<Window<V, I>> b;
    clear(b);
    b.rec.mw = w.mw;
    b.rec.r = w.r;
    b.rec.ma = w.ma;
    b.rec.mb = w.mb;
    b.rec.nv = w.nv;
    b.rec.dn = w.dn;
    b.rec.mn = w.mn;
    store_bytes(p, b);
}

// Marks the rulers and numbers them: rulers[rank] = v, in the order of a block-aggregated
// atomic counter (the ranks only name the slots; no result depends on their order). The
// loop is block-uniform for block_append. A block's vertices (blocks of 256) are sampled
// half as often where at least 1 in DENSE_ENDS of them is a path end: their paths are short
// (random_diffusion2d: 8 vertices on average), need few rulers between their ends, and
// fewer lists of several gaps shorten the scan (halving the rulers everywhere instead was
// slower on matrices with long paths).
#define DENSE_ENDS 8

template <typename V, typename I>
__global__ void ruler_mark(const I N, const I* __restrict__ P, const unsigned int seed,
                           const unsigned long long threshold, const unsigned int run, I* __restrict__ rulers,
                           unsigned int* __restrict__ n_rulers, unsigned long long* __restrict__ claim) {
    for (I v0 = blockIdx.x * (I)blockDim.x; v0 < N; v0 += (I)gridDim.x * blockDim.x) {
        const I v = v0 + threadIdx.x;
        I p0 = 0, p1 = 0;
        if (v < N) load_pair(P + 2 * (size_t)v, p0, p1);
        const bool end = v < N && (p0 < 0 || p1 < 0);
        const bool dense = __syncthreads_count(end) * DENSE_ENDS >= (int)blockDim.x;
        const unsigned long long t = dense ? threshold / 2 : threshold;
        bool ruler = end;
        if (v < N && !end) {
            const bool across = p0 != v - 1 && p0 != v + 1 && p1 != v - 1 && p1 != v + 1;
            ruler = (unsigned long long)hash32(across ? (unsigned int)v / run : (unsigned int)v,
                                               across ? 0x52u : 0x51u, seed) < t;
        }
        const unsigned int k = block_append(ruler, n_rulers);
        if (v < N) {
            if (ruler) rulers[k] = v;
            claim[v] = ruler ? (RULER_TAG << 32) | k : CLAIM_FREE;
        }
    }
}

// The walks and links run over the slots of the rulers marked, two per ruler, which they
// read from the device: the host queues them on slots for a guessed number of rulers
// before it knows the count (kernels/forest/ruling.py). 0 (nothing to do) when the count exceeds
// `capacity`: the host then queues them again on enough slots.
template <typename I>
__device__ __forceinline__ I slots_within(const unsigned int* __restrict__ n_rulers, const I capacity) {
    const long long n_slots = 2LL * *n_rulers;
    return n_slots <= (long long)capacity ? (I)n_slots : (I)0;
}

// Walk of slot t: end = entry slot of the ruler reached (or -(R+1) at a path end), met =
// the slot whose claimed vertex stopped the walk (-1: none), len = distance to the ruler
// reached / number of vertices claimed; the weakest edge met (bw, ba, bb), its endpoint
// nearer to R (bn) and that endpoint's distance from R (bk).
template <typename V, typename I>
__global__ void ruler_walk(const unsigned int* __restrict__ n_rulers, const I capacity, const I* __restrict__ rulers,
                          const I* __restrict__ P, const V* __restrict__ Wt, unsigned long long* claim,
                          WalkRecord<V, I>* __restrict__ walk) {
    const I n_slots = slots_within<I>(n_rulers, capacity);
    for (I t = blockIdx.x * (I)blockDim.x + threadIdx.x; t < n_slots; t += (I)gridDim.x * blockDim.x) {
        const I R = rulers[t >> 1];
        const size_t k = 2 * (size_t)R + (t & 1);
        I cur = P[k];
        I end = -(R + 1), met = -1, len = 0, bn = R, bk = 0;
        V bw = V(__longlong_as_double(0x7ff0000000000000ULL));
        I ba = -1, bb = -1;
        if (cur >= 0) {
            I prev = R, dist = 1;
            bw = Wt[k];
            ba = min(R, cur);
            bb = max(R, cur);
            while (true) {
                const size_t c0 = 2 * (size_t)cur;
                I p0, p1;  // loads independent of the claim
                V w0, w1;
                load_pair(P + c0, p0, p1);
                load_pair(Wt + c0, w0, w1);
                const unsigned long long old =
                    atomicCAS(claim + cur, CLAIM_FREE, ((unsigned long long)t << 32) | (unsigned int)dist);
                if (is_ruler(old)) {
                    end = 2 * (I)(old & 0xffffffffULL) + (p0 == prev ? 0 : 1);
                    len = dist;
                    break;
                }
                if (old != CLAIM_FREE) {
                    met = (I)(old >> 32);
                    len = dist - 1;
                    break;
                }
                const bool out1 = p0 == prev;
                const I nxt = out1 ? p1 : p0;
                const V w = out1 ? w1 : w0;
                if (take_weaker(w, min(cur, nxt), max(cur, nxt), bw, ba, bb)) {
                    bn = cur;
                    bk = dist;
                }
                prev = cur;
                cur = nxt;
                ++dist;
            }
        }
        store_walk(walk + t, bw, end, met, len, ba, bb, bn, bk);
    }
}

// Joins the two walks of every gap: link (level 0's pointer) and level 0's window: gap
// length, weakest edge and its endpoint nearer to this slot's ruler (nv) with that
// endpoint's distance from the ruler (dn).
template <typename V, typename I>
__global__ void ruler_link(const unsigned int* __restrict__ n_rulers, const I capacity,
                           const WalkRecord<V, I>* __restrict__ walk, I* __restrict__ link,
                           Window<V, I>* __restrict__ level0) {
    const I n_slots = slots_within<I>(n_rulers, capacity);
    for (I t = blockIdx.x * (I)blockDim.x + threadIdx.x; t < n_slots; t += (I)gridDim.x * blockDim.x) {
        const WalkRecord<V, I> mine = walk[t];
        V bw = mine.bw;
        I ba = mine.ba, bb = mine.bb, bn = mine.bn, bk = mine.bk;
        I lk = mine.end, g = mine.len;
        const I u = mine.met;
        if (u >= 0) {  // met the walk u of the far ruler (u reached our ruler, or we met halfway)
            const WalkRecord<V, I> far = walk[u];
            lk = u;
            g = far.met < 0 ? far.len : mine.len + far.len + 1;
            if (take_weaker(far.bw, far.ba, far.bb, bw, ba, bb)) {
                bn = far.bn == ba ? bb : ba;
                bk = g - far.bk - 1;
            }
        }
        link[t] = lk;
        store_window(level0 + t, Window<V, I>{bw, g, ba, bb, bn, bk, t >> 1});
    }
}

// The scan over the slots, all steps in one cooperative launch. Step s maps level s to level
// s + 1; the window of slot t at level s covers 2^s gaps: q = the slot after it (or
// -(end+1) at a path end), r = its length (saturated: on a cycle the window wraps),
// (mw, ma, mb) = its weakest edge, first met at distance dn from t's ruler at vertex nv,
// mn = the smallest ruler rank in it. The weakest edge of a later part replaces only a
// strictly weaker-ranked one, so nv and dn stay those of its first occurrence (an earlier
// part shorter than the cycle).
// Level `start` (odd) is folded from level 0 gap by gap, each slot alone (fold_gaps): most
// lists are short (random_diffusion2d: no path of more than 8 gaps), and the steps it
// replaces each read and wrote every slot's window, with a grid barrier after each. Level
// `start` lies in buffer a, but a slot ended there (its path's end reached) has its final
// window in buffer b (or nowhere, where no step can read it: fold_gaps), its pointer in b,
// and in a its pointer less HOP_ENDED (vertex ids are below 2^30, so it stays apart from
// the pointers of the slots that end in a step): the steps never write it again, and read
// its window from b (window_at).
// Early exit: level s is final when every path window has reached its end and every cycle
// window covers its whole cycle. A path is unfinished exactly when the inward slot of one
// of its end rulers has not ended (q[t] >= 0, q[t ^ 1] < 0); a cycle of C gaps is
// unfinished exactly when 2^s < C, and then the window after its smallest-rank ruler misses
// that ruler, so two successive slots (t and link[t] ^ 1) differ in mn. Step s sets busy[s]
// when level s is unfinished; the scan stops after an odd step once level s - 1 (not below
// `start`) or s was final, so the result always lies in buffer b (level start -> b -> a ->
// b ...), and records the number of levels reached in *steps_run. Level `start` is tested
// by fold_gaps itself, and where it is final no step runs (random_diffusion2d).
#define RULER_SAT 0x40000000LL
#define HOP_ENDED 0x40000000LL

// a + b saturated at RULER_SAT, summed in 64 bits (both may already be saturated)
template <typename I>
__device__ __forceinline__ I sat_add(I a, I b) {
    return (I)min((long long)a + (long long)b, RULER_SAT);
}

// Appends the window `next` (the gaps that follow) to `win`.
template <typename V, typename I>
__device__ __forceinline__ void append_window(Window<V, I>& win, const Window<V, I>& next) {
    if (take_weaker(next.mw, next.ma, next.mb, win.mw, win.ma, win.mb)) {
        win.nv = next.nv;
        win.dn = sat_add(win.r, next.dn);
    }
    win.r = sat_add(win.r, next.r);
    win.mn = min(win.mn, next.mn);
}

// One level: pointers and windows (plain pointers: a step writes what the next one reads).
template <typename V, typename I>
struct SlotLevel {
    I* q;
    Window<V, I>* w;
};

// What ruler_finish reads of a slot's final window: the path end e it reached and the
// distance r to it, written as soon as the window has ended, or e = -1 on a cycle
// (ruler_finish then reads the window itself). A quarter of a sector (int32 indices) where
// the pointer and window take parts of two.
template <typename I>
struct __align__(2 * sizeof(I)) PathEnd {
    I e, r;
};

// Level `start` of every slot from level 0 (link, w0): up to 2^start gaps, one after the
// other; true if it met an unfinished slot. Each slot tells that alone: its path did not end
// within them, or its window did not come back to its own ruler (x == t ^ 1: a cycle of at
// most 2^start gaps). The window of such a cycle is stored in both buffers (where the scan
// stops at level `start`, its result is b). An ended slot's window is stored only where the
// other side of its ruler, slot t ^ 1 (the neighbouring lane's), has not ended: a step reads
// an ended window g = x ^ 1 at the end of an open window (whose pointer x, g ^ 1, runs back
// over more than 2^start gaps) or, once t ^ 1 is open, g = link[t] ^ 1 (g ^ 1 = link[t]
// runs back over t ^ 1's gaps); ruler_finish reads PathEnd.
template <typename V, typename I>
__device__ __forceinline__ bool fold_gaps(const I t0, const I stride, const I n_slots, const int start,
                                          const I* __restrict__ link, const Window<V, I>* __restrict__ w0,
                                          const SlotLevel<V, I> a, const SlotLevel<V, I> b,
                                          PathEnd<I>* __restrict__ ends) {
    bool unfinished = false;
    const unsigned int pair = 3u << (threadIdx.x & 30);  // lanes of t and t ^ 1 (t0 and stride are even)
    for (I t = t0; t < n_slots; t += stride) {
        I x = link[t];
        Window<V, I> win = w0[t];
        bool around = x == (t ^ 1);
        for (int h = 1; h < (1 << start) && x >= 0; ++h) {
            const I kw = x ^ 1;
            append_window(win, w0[kw]);
            x = link[kw];
            around |= x == (t ^ 1);
        }
        const bool both_ended = __shfl_xor_sync(pair, (int)(x < 0), 1) && x < 0;
        unfinished |= x >= 0 && !around;
        a.q[t] = x < 0 ? (I)(x - HOP_ENDED) : x;
        b.q[t] = x;
        ends[t] = PathEnd<I>{x < 0 ? -x - 1 : (I)-1, win.r};
        if (!both_ended) store_window((x < 0 ? b.w : a.w) + t, win);
        if (x >= 0 && around) store_window(b.w + t, win);
    }
    return unfinished;
}

// Window of slot g at the level in `in`; `ended` (buffer b, on the steps that read a): where
// the slots ended at level `start` keep theirs.
template <typename V, typename I>
__device__ __forceinline__ Window<V, I> window_at(const I g, const SlotLevel<V, I> in, const Window<V, I>* ended) {
    const Window<V, I> w = in.w[g];
    return ended && in.q[g] < -HOP_ENDED ? ended[g] : w;
}

// Step over the slots t = t0, t0 + stride, ...; true if it met an unfinished one. A slot
// whose window had already ended at the level before `in` (out.q[t] < 0) holds its final
// values and is skipped: one load instead of eight loads and eight stores (most slots of
// short paths, as on random_diffusion2d, end early).
template <typename V, typename I>
__device__ __forceinline__ bool scan_step(const I t0, const I stride, const I n_slots, const I* __restrict__ link,
                                          const SlotLevel<V, I> in, const SlotLevel<V, I> out,
                                          const Window<V, I>* ended, PathEnd<I>* __restrict__ ends) {
    bool unfinished = false;
    for (I t = t0; t < n_slots; t += stride) {
        if (out.q[t] < 0) continue;
        I x = in.q[t];
        Window<V, I> win = in.w[t];
        const bool open = x >= 0;
        if (open) {
            unfinished |= in.q[t ^ 1] < 0 || win.mn != window_at(link[t] ^ 1, in, ended).mn;
            const I kw = x ^ 1;
            append_window(win, window_at(kw, in, ended));
            x = in.q[kw];
            if (x < -HOP_ENDED) x += (I)HOP_ENDED;
        }
        out.q[t] = x;
        store_window(out.w + t, win);
        if (open && x < 0) ends[t] = PathEnd<I>{-x - 1, win.r};
    }
    return unfinished;
}

template <typename V, typename I>
__global__ void ruler_scan(const I n_slots, const int steps, const int start, int* busy, int* steps_run,
                           const I* __restrict__ link, const Window<V, I>* __restrict__ w0, I* qa,
                           Window<V, I>* wa, I* qb, Window<V, I>* wb, PathEnd<I>* __restrict__ ends) {
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    const SlotLevel<V, I> a = {qa, wa}, b = {qb, wb};
    const I t0 = blockIdx.x * (I)blockDim.x + threadIdx.x, stride = (I)gridDim.x * blockDim.x;
    const bool folded_unfinished = fold_gaps<V, I>(t0, stride, n_slots, start, link, w0, a, b, ends);
    if (__syncthreads_or(folded_unfinished) && threadIdx.x == 0 && *(volatile int*)(busy + start) == 0)
        busy[start] = 1;
    grid.sync();
    int s = start;
    // level start unfinished; the test stays out of the loop's condition (slower inside it)
    if (*(volatile int*)(busy + start)) {
        for (; s < steps; ++s) {
            const bool odd = s & 1;
            const bool unfinished =
                scan_step<V, I>(t0, stride, n_slots, link, odd ? a : b, odd ? b : a, odd ? wb : nullptr, ends);
            // one store per block, and none once set: stores to one address from every warp serialize
            if (__syncthreads_or(unfinished) && threadIdx.x == 0 && *(volatile int*)(busy + s) == 0) busy[s] = 1;
            grid.sync();
            if (odd && ((s > start && *(volatile int*)(busy + s - 1) == 0) || *(volatile int*)(busy + s) == 0)) {
                ++s;
                break;
            }
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) *steps_run = s;
}

// End vertex and distance to it when leaving a gap through the ruler of slot s (`dist`
// steps away) and going on along s ^ 1: the path end on a path, the nearer endpoint of
// the cycle's weakest edge on a cycle.
template <typename V, typename I>
__device__ __forceinline__ void beyond(const I s, const I dist, const PathEnd<I>* ends, const Window<V, I>* w, I& e,
                                       I& d) {
    const I o = s ^ 1;
    const PathEnd<I> end = ends[o];
    if (end.e >= 0) {
        e = end.e;
        d = dist + end.r;
    } else {
        e = w[o].nv;
        d = dist + w[o].dn;
    }
}

// Path id, position and (at the path id) length of every vertex, and the partner across a
// removed edge at its lower end (removed_lo, else -1), from level 0 (link, level0), the
// slots' path ends and, on cycles, the scan's last level (last).
template <typename V, typename I>
__global__ void ruler_finish(const I N, const I* __restrict__ P, const V* __restrict__ Wt,
                             const unsigned long long* __restrict__ claim, const I* __restrict__ link,
                             const Window<V, I>* __restrict__ level0, const PathEnd<I>* __restrict__ ends,
                             const Window<V, I>* __restrict__ last, I* __restrict__ path_id,
                             I* __restrict__ position, I* __restrict__ length, I* __restrict__ removed_lo) {
    for (I v = blockIdx.x * (I)blockDim.x + threadIdx.x; v < N; v += (I)gridDim.x * blockDim.x) {
        const size_t v0 = 2 * (size_t)v;
        const unsigned long long c = claim[v];
        I e[2], dd[2];
        I cut = -1;  // a slot of v's cycle (its weakest edge is cut), -1 on a path
        if (is_ruler(c)) {
            for (int i = 0; i < 2; ++i) {
                const I s = 2 * (I)(c & 0xffffffffULL) + i;
                if (ends[s].e < 0) cut = s;
                beyond(s ^ 1, (I)0, ends, last, e[i], dd[i]);
            }
        } else if (c != CLAIM_FREE) {
            const I w = (I)(c >> 32), d = (I)(c & 0xffffffffULL);
            const Window<V, I>* gap = level0 + w;  // the gap's own (level 0) window; fields read as needed
            const I f = link[w], g = gap->r;
            if (ends[w].e < 0) cut = w;
            if (cut >= 0 && gap->ma == last[w].ma && gap->mb == last[w].mb) {
                // the weakest edge (x, y) lies in this gap, x at gap->dn from w's ruler
                const I ma = gap->ma, mb = gap->mb;
                const I x = gap->nv, y = x == ma ? mb : ma, k = gap->dn;
                if (d <= k) {
                    beyond(w, d, ends, last, e[0], dd[0]);
                    e[1] = x;
                    dd[1] = k - d;
                } else {
                    e[0] = y;
                    dd[0] = d - k - 1;
                    beyond(f, g - d, ends, last, e[1], dd[1]);
                }
            } else {
                beyond(w, d, ends, last, e[0], dd[0]);
                beyond(f, g - d, ends, last, e[1], dd[1]);
            }
        } else {
            // cycle without a ruler: walk it (twice) from v
            I prev = v, cur = P[v0], L = 1;
            V bw = Wt[v0];
            I a = min(v, cur), b = max(v, cur);
            while (cur != v) {
                const size_t c0 = 2 * (size_t)cur;
                const int s_in = P[c0] == prev ? 0 : 1;
                const I nxt = P[c0 + 1 - s_in];
                const V w = Wt[c0 + 1 - s_in];
                take_weaker(w, min(cur, nxt), max(cur, nxt), bw, a, b);
                prev = cur;
                cur = nxt;
                ++L;
            }
            I ta = 0, tb = 0, step = 1;
            prev = v;
            cur = P[v0];
            while (cur != v) {
                if (cur == a) ta = step;
                if (cur == b) tb = step;
                const size_t c0 = 2 * (size_t)cur;
                const int s_in = P[c0] == prev ? 0 : 1;
                prev = cur;
                cur = P[c0 + 1 - s_in];
                ++step;
            }
            path_id[v] = a;
            position[v] = v == a ? 0 : (v == b ? L - 1 : (ta < tb ? ta : L - ta));
            length[v] = v == a ? L : 0;
            removed_lo[v] = v == a ? b : (I)-1;
            continue;
        }
        removed_lo[v] = cut >= 0 && v == last[cut].ma ? last[cut].mb : (I)-1;
        const I pid = min(e[0], e[1]);
        path_id[v] = pid;
        position[v] = e[0] < e[1] ? dd[0] : (e[1] < e[0] ? dd[1] : 0);
        length[v] = pid == v ? dd[0] + dd[1] + 1 : 0;
    }
}

// ---------------------------------------------------------------------------------------
// Order of the paths. The permutation needs the paths' offsets only (order_offsets, one
// pass). The path starts and the removed edges (asked for later, sized by their counts) come
// from one scan over the vertices of three counters, (length, path, removed) = (length[v],
// v is a path id, v is the lower end of a removed edge), in tiles of ORDER_TILE vertices:
// per-tile sums, a scan of the tile sums in one block, then every tile scans itself and
// places path_start (in path id order) and the removed edges (in order of their lower
// ends). Blocks of 256 threads, items j of thread t at tile base + ORDER_ITEMS * t + j,
// loaded as one quad of each array: a block then scans once, over its threads' sums
// (instead of items 256 apart and one block scan per item).
#define ORDER_ITEMS 4

template <typename I>
struct Count3 {
    I len, paths, removed;
};

// a[0..3] = p[v .. v + 3], `fill` past N: one aligned quad load where all four lie below N
// (v a multiple of 4).
template <typename I>
__device__ __forceinline__ void load_items4(const I* p, const I v, const I N, const I fill, I* a) {
    a[0] = a[1] = a[2] = a[3] = fill;
    if (v + 4 <= N) load_quad(p + v, a[0], a[1], a[2], a[3]);
    else
        for (int j = 0; j < 4 && v + j < N; ++j) a[j] = p[v + j];
}

// The counts of a thread's items v0 .. v0 + ORDER_ITEMS - 1 (0 past N) and, in lower, the
// removed edges' higher ends (removed_lo).
template <typename I>
__device__ __forceinline__ void order_items(const I* length, const I* removed_lo, const I N, const I v0,
                                            Count3<I> (&c)[ORDER_ITEMS], I (&lower)[ORDER_ITEMS]) {
    I len[ORDER_ITEMS];
    load_items4(length, v0, N, (I)0, len);
    load_items4(removed_lo, v0, N, (I)-1, lower);
#pragma unroll
    for (int j = 0; j < ORDER_ITEMS; ++j) c[j] = {len[j], (I)(len[j] > 0), (I)(lower[j] >= 0)};
}

// Inclusive scan of c over the warp (in lane order).
template <typename I>
__device__ __forceinline__ Count3<I> warp_inclusive_scan(Count3<I> c, const int lane) {
    for (int off = 1; off < 32; off <<= 1) {
        const I a = __shfl_up_sync(0xffffffffu, c.len, off), b = __shfl_up_sync(0xffffffffu, c.paths, off),
                d = __shfl_up_sync(0xffffffffu, c.removed, off);
        if (lane >= off) {
            c.len += a;
            c.paths += b;
            c.removed += d;
        }
    }
    return c;
}

// Exclusive scan of c over the block (in thread order); returns the block total in `total`.
// The warps' sums are scanned by warp 0, not by every thread in a loop over the warps.
template <typename I>
__device__ __forceinline__ Count3<I> block_exclusive_scan(Count3<I> c, Count3<I>& total) {
    __shared__ I warp_sum[3][33];  // exclusive prefixes of the warps, then the block total
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, n_warps = blockDim.x >> 5;
    const Count3<I> inc = warp_inclusive_scan(c, lane);
    __syncthreads();  // warp_sum may still be read by a previous call
    if (lane == 31) {
        warp_sum[0][warp] = inc.len;
        warp_sum[1][warp] = inc.paths;
        warp_sum[2][warp] = inc.removed;
    }
    __syncthreads();
    if (warp == 0) {
        const Count3<I> mine = lane < n_warps ? Count3<I>{warp_sum[0][lane], warp_sum[1][lane], warp_sum[2][lane]}
                                              : Count3<I>{0, 0, 0};
        const Count3<I> upto = warp_inclusive_scan(mine, lane);
        if (lane < n_warps) {
            warp_sum[0][lane] = upto.len - mine.len;
            warp_sum[1][lane] = upto.paths - mine.paths;
            warp_sum[2][lane] = upto.removed - mine.removed;
        }
        if (lane == 31) {
            warp_sum[0][32] = upto.len;
            warp_sum[1][32] = upto.paths;
            warp_sum[2][32] = upto.removed;
        }
    }
    __syncthreads();
    total = {warp_sum[0][32], warp_sum[1][32], warp_sum[2][32]};
    return {warp_sum[0][warp] + inc.len - c.len, warp_sum[1][warp] + inc.paths - c.paths,
            warp_sum[2][warp] + inc.removed - c.removed};
}

static_assert(ORDER_ITEMS == 4, "a thread's items are one quad");

// The sum of a thread's items.
template <typename I>
__device__ __forceinline__ Count3<I> order_sum(const Count3<I> (&c)[ORDER_ITEMS]) {
    Count3<I> s = {0, 0, 0};
#pragma unroll
    for (int j = 0; j < ORDER_ITEMS; ++j) {
        s.len += c[j].len;
        s.paths += c[j].paths;
        s.removed += c[j].removed;
    }
    return s;
}

template <typename V, typename I>
__global__ void order_tile_sums(const I N, const I* __restrict__ length, const I* __restrict__ removed_lo,
                                I* __restrict__ sums) {
    Count3<I> c[ORDER_ITEMS], total;
    I lower[ORDER_ITEMS];
    order_items<I>(length, removed_lo, N, ((I)blockIdx.x * blockDim.x + threadIdx.x) * ORDER_ITEMS, c, lower);
    block_exclusive_scan(order_sum(c), total);
    if (threadIdx.x == 0) {
        sums[3 * (size_t)blockIdx.x] = total.len;
        sums[3 * (size_t)blockIdx.x + 1] = total.paths;
        sums[3 * (size_t)blockIdx.x + 2] = total.removed;
    }
}

// One block: exclusive scan of the n_tiles tile sums in place; totals = the three sums.
template <typename V, typename I>
__global__ void order_scan_tiles(const I n_tiles, I* __restrict__ sums, I* __restrict__ totals) {
    const I per = (n_tiles + blockDim.x - 1) / blockDim.x, lo = per * threadIdx.x, hi = min(lo + per, n_tiles);
    Count3<I> c = {0, 0, 0}, total;
    for (I t = lo; t < hi; ++t) {
        c.len += sums[3 * (size_t)t];
        c.paths += sums[3 * (size_t)t + 1];
        c.removed += sums[3 * (size_t)t + 2];
    }
    Count3<I> run = block_exclusive_scan(c, total);
    for (I t = lo; t < hi; ++t) {
        const Count3<I> x = {sums[3 * (size_t)t], sums[3 * (size_t)t + 1], sums[3 * (size_t)t + 2]};
        sums[3 * (size_t)t] = run.len;
        sums[3 * (size_t)t + 1] = run.paths;
        sums[3 * (size_t)t + 2] = run.removed;
        run.len += x.len;
        run.paths += x.paths;
        run.removed += x.removed;
    }
    if (threadIdx.x == 0) {
        totals[0] = total.len;
        totals[1] = total.paths;
        totals[2] = total.removed;
    }
}

// The paths' offsets in one pass (a scan with decoupled look-back): offsets[v] at every
// path id v (length[v] > 0) is the summed length of the paths whose ids are below v. Each
// block takes the next tile of OFFSET_TILE vertices (OFFSET_ITEMS consecutive ones per
// thread, four quads) by a ticket, publishes the tile's sum, and its warp 0 reads the
// statuses of the 32 tiles before it at a time, back to the nearest that has published its
// inclusive prefix: it waits only for tiles whose blocks took their tickets, and so run,
// before it (faster than tiles of 1,024 threads reading 1,024 statuses at once, and than
// the three kernels it replaces). Those,
// a pass of tile sums, a one-block scan of them and a placing pass (order_tile_sums,
// order_scan_tiles, order_place), paths() still runs for the path starts and removed
// edges; this one reads `length` once instead of `length` and `removed_lo` twice. state
// (zeroed): state[0] the ticket, state[1 + t] tile t's status, 0 until it
// publishes, then TILE_SUM or TILE_PREFIX above its value (below 2^30: N < 2^30).
#define OFFSET_ITEMS 16
#define TILE_SUM (1u << 30)
#define TILE_PREFIX (2u << 30)
#define TILE_VALUE (TILE_SUM - 1u)

template <typename V, typename I>
__global__ void order_offsets(const I N, const I* __restrict__ length, unsigned int* state, I* __restrict__ offsets) {
    __shared__ unsigned int ticket;
    __shared__ I before;  // the lengths of the tiles before this one
    if (threadIdx.x == 0) ticket = atomicAdd(state, 1u);
    __syncthreads();
    const unsigned int tile = ticket;
    const I v0 = ((I)tile * blockDim.x + threadIdx.x) * OFFSET_ITEMS;
    I len[OFFSET_ITEMS], mine = 0;
#pragma unroll
    for (int q = 0; q < OFFSET_ITEMS; q += 4) {
        load_items4(length, v0 + q, N, (I)0, len + q);
        mine += len[q] + len[q + 1] + len[q + 2] + len[q + 3];
    }
    Count3<I> total;
    const Count3<I> at = block_exclusive_scan(Count3<I>{mine, 0, 0}, total);
    if (threadIdx.x < 32) {
        volatile unsigned int* status = state + 1;
        const int lane = threadIdx.x;
        if (lane == 0) status[tile] = (tile == 0 ? TILE_PREFIX : TILE_SUM) | (unsigned int)total.len;
        I sum = 0;
        for (long long k = (long long)tile - 1; k >= 0; k -= 32) {  // warp-uniform
            const long long t = k - lane;
            unsigned int s = TILE_PREFIX;  // before tile 0: a prefix of 0
            if (t >= 0)
                do s = status[t];
                while (s == 0u);
            const unsigned int prefixes = __ballot_sync(0xffffffffu, (s & TILE_PREFIX) != 0u);
            const int nearest = prefixes ? __ffs(prefixes) - 1 : 31;
            I part = lane <= nearest ? (I)(s & TILE_VALUE) : (I)0;
            for (int off = 16; off > 0; off >>= 1) part += __shfl_xor_sync(0xffffffffu, part, off);
            sum += part;
            if (prefixes) break;
        }
        if (lane == 0) {
            if (tile > 0) status[tile] = TILE_PREFIX | (unsigned int)(sum + total.len);
            before = sum;
        }
    }
    __syncthreads();
    I run = before + at.len;
#pragma unroll
    for (int j = 0; j < OFFSET_ITEMS; ++j) {
        if (len[j] > 0) offsets[v0 + j] = run;
        run += len[j];
    }
}

template <typename V, typename I>
__global__ void order_place(const I N, const I* __restrict__ length, const I* __restrict__ removed_lo,
                            const I* __restrict__ tile_offsets, I* __restrict__ path_start,
                            long long* __restrict__ removed) {
    const I v0 = ((I)blockIdx.x * blockDim.x + threadIdx.x) * ORDER_ITEMS;
    Count3<I> c[ORDER_ITEMS], total;
    I lower[ORDER_ITEMS];
    order_items<I>(length, removed_lo, N, v0, c, lower);
    const Count3<I> at = block_exclusive_scan(order_sum(c), total);
    const I* tile = tile_offsets + 3 * (size_t)blockIdx.x;
    Count3<I> run = {tile[0] + at.len, tile[1] + at.paths, tile[2] + at.removed};
#pragma unroll
    for (int j = 0; j < ORDER_ITEMS; ++j) {
        if (c[j].paths) path_start[run.paths] = run.len;
        if (c[j].removed) {
            removed[2 * (size_t)run.removed] = v0 + j;
            removed[2 * (size_t)run.removed + 1] = lower[j];
        }
        run.len += c[j].len;
        run.paths += c[j].paths;
        run.removed += c[j].removed;
    }
}
