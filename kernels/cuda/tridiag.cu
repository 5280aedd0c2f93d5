// Tridiagonal solves on the GPU by a partitioned (SPIKE-like) method.
//
// Level l has N_l rows (padded to P_l * C_l with rows (0, 1, 0), read in place), cut into
// P_l chunks of C_l rows (C_0 = chunk, C_l = upper_chunk above). Rows 0..C-2 of a chunk are
// its interior, row C-1 its separator. Each thread factorizes one chunk interior (Thomas,
// no pivoting; tiny pivots are boosted and counted) and computes the two spikes v, w
// (interior responses to the separators on the left and right). The separators form a
// tridiagonal system of size P_l, the Schur complement of the interiors: the next level.
// Levels stop at `bottom` rows or fewer, solved by plain Thomas. At apply time each thread
// solves its chunk interior forward, the separators are solved level by level, and each
// thread recovers its interior. Per-chunk arrays are stored interleaved (index i * P + j)
// so that neighbouring threads access neighbouring addresses.
//
// Every array of every level lives in one workspace, at the offsets of level_at: the
// factorization of all levels is one cooperative launch (launched level by level, the
// short upper levels cost more host time than device time). The host twin of level_at,
// kernels.tridiag.partition.partition_plan with SCALAR_LAYOUT, sizes the workspace and places the
// apply kernels' arrays.
//
// The factorization counts (stats): [0] boosted pivots, [1] negative pivots, [2] negative
// diagonal entries of the level-0 system. For a symmetric system [1] is its number of
// negative eigenvalues (Sylvester's law of inertia, and Haynsworth's additivity of inertia
// over each level's Schur complement).
// templates: factor_level0<V,I>, partitioned_factor<V,I>, chunk_forward<V,I>, reduced_rhs<V,I>, chunk_back<V,I>, thomas_solve<V,I>, top_solve<V,I>, extract_tridiagonal<V,I>
// templates: partner_entries<V,I>, order_partner_entries<V,I>
#include <cooperative_groups.h>

#include "pairs.cuh"

// Rows per chunk at most (kernels.tridiag.partition.MAX_CHUNK): a thread's chunk is swept unrolled,
// in registers (instantiated for 8 and 16 rows).
#define MAX_CHUNK 16

// A pivot is tiny when |den| <= eps * (|dl| + |d| + |du|) of its own row (1 for a zero row).
template <typename V>
__device__ __forceinline__ V boost(V den, V local, unsigned long long& boosted) {
    const V eps = sizeof(V) == 4 ? V(1e-6) : V(1e-13);
    const V scale = local > V(0) ? local : V(1);
    if (fabs(den) <= eps * scale) {
        ++boosted;
        return den < V(0) ? -eps * scale : eps * scale;
    }
    return den;
}

// Adds the threads' counts into stats[0..2], and c3 into stats[3] (every lane of the warp
// must call it).
__device__ __forceinline__ void add_counts(unsigned long long* stats, unsigned long long c0, unsigned long long c1,
                                           unsigned long long c2, unsigned long long c3 = 0) {
    for (int off = 16; off > 0; off >>= 1) {
        c0 += __shfl_down_sync(0xffffffffu, c0, off);
        c1 += __shfl_down_sync(0xffffffffu, c1, off);
        c2 += __shfl_down_sync(0xffffffffu, c2, off);
        c3 += __shfl_down_sync(0xffffffffu, c3, off);
    }
    if ((threadIdx.x & 31) == 0) {
        if (c0) atomicAdd(stats, c0);
        if (c1) atomicAdd(stats + 1, c1);
        if (c2) atomicAdd(stats + 2, c2);
        if (c3) atomicAdd(stats + 3, c3);
    }
}

// Coefficient of row r of a level with N rows, read in place: rows beyond N are padding
// (0, 1, 0), and nothing couples into row 0 or out of row N - 1.
template <typename V>
__device__ __forceinline__ V lower_at(const V* dl, size_t r, long long N) { return r > 0 && r < (size_t)N ? dl[r] : V(0); }
template <typename V>
__device__ __forceinline__ V diag_at(const V* d, size_t r, long long N) { return r < (size_t)N ? d[r] : V(1); }
template <typename V>
__device__ __forceinline__ V upper_at(const V* du, size_t r, long long N) { return r + 1 < (size_t)N ? du[r] : V(0); }

// The system of a linear forest (kernels.tridiag.extract_tridiagonal with partners): row k
// of the order perm (new -> old) is old row i = perm[k], with the entries to the rows before
// and after it (old ids `before`, `after`; -1 at the ends) when they are partners of i.
// The entries come from `entries` (partner_entries: N x 4, (a_ii, a_{i,p0}, a_{i,p1}, 0))
// or, with `entries` null, from what the GPU's [0,2]-factor recorded of A (factor.cu,
// confirm_rows): a row's diagonal, its weights |a_ip| to its partners and the signs of those
// entries (bit 3 + s of counts[i]: to partner s negative; factor.cu's Count).
template <typename V, typename I>
struct ForestSystem {
    const I* __restrict__ partners;  // N x 2, -1: none
    const V* __restrict__ entries;
    const V* __restrict__ weights;  // N x 2
    const unsigned char* __restrict__ counts;
    const V* __restrict__ diagonal;

    __device__ __forceinline__ void row(const I i, const I before, const I after, V& lo, V& di, V& up) const {
        I p0, p1;
        load_pair(partners + 2 * (size_t)i, p0, p1);
        V to0, to1;
        if (entries) {
            V unused;
            load_quad(entries + 4 * (size_t)i, di, to0, to1, unused);
        } else {
            load_pair(weights + 2 * (size_t)i, to0, to1);
            const unsigned int sg = counts[i];
            to0 = sg & 8u ? -to0 : to0;
            to1 = sg & 16u ? -to1 : to1;
            di = diagonal[i];
        }
        lo = before < 0 ? V(0) : before == p0 ? to0 : before == p1 ? to1 : V(0);
        up = after < 0 ? V(0) : after == p0 ? to0 : after == p1 ? to1 : V(0);
    }
};

// Workspace layout. Each array starts on a multiple of 32 values. Per level, interleaved:
// inv, cp, lint, v, w of K values per interior row ((C - 1) P rows), y of H; per separator
// (P rows): sep_b, g, S of H values, sep_lo, sep_hi, ra, rb, rc of K (ra, rb, rc: the next
// level's coefficients). Then the bottom's L, inv, cp of K values per row. Scalar systems
// K = H = 1, 2x2 blocks K = 4, H = 2. Host twin: kernels.tridiag.partition.partition_plan.
__host__ __device__ __forceinline__ size_t ws_align(size_t n) { return (n + 31) / 32 * 32; }

struct Level {
    long long N, P;  // rows, chunks (= rows of the next level)
    int C;           // rows per chunk
    size_t inv, cp, lint, v, w, y, sep_b, g, S, sep_lo, sep_hi, ra, rb, rc;
    size_t end;      // start of the next level (or of the bottom)
};

// Level l of a system of N0 rows (l below the number of levels). Only the factorization
// reads it; y, sep_b, g and S are the apply's, which the host places by the same layout.
template <int K, int H>
__device__ __forceinline__ Level level_at(const int l, const long long N0, const int C0, const int C1) {
    Level lv;
    size_t base = 0;
    long long N = N0;
    for (int k = 0;; ++k) {
        const int C = k == 0 ? C0 : C1;
        const long long P = (N + C - 1) / C;
        const size_t ik = ws_align(K * (size_t)(C - 1) * P), ih = ws_align(H * (size_t)(C - 1) * P);
        const size_t sk = ws_align(K * (size_t)P), sh = ws_align(H * (size_t)P);
        if (k == l) {
            lv.N = N;
            lv.P = P;
            lv.C = C;
            lv.inv = base;
            lv.cp = base + ik;
            lv.lint = base + 2 * ik;
            lv.v = base + 3 * ik;
            lv.w = base + 4 * ik;
            lv.y = base + 5 * ik;
            lv.sep_b = lv.y + ih;
            lv.g = lv.sep_b + sh;
            lv.S = lv.sep_b + 2 * sh;
            lv.sep_lo = lv.sep_b + 3 * sh;
            lv.sep_hi = lv.sep_lo + sk;
            lv.ra = lv.sep_lo + 2 * sk;
            lv.rb = lv.sep_lo + 3 * sk;
            lv.rc = lv.sep_lo + 4 * sk;
            lv.end = lv.sep_lo + 5 * sk;
            return lv;
        }
        base += 5 * ik + ih + 3 * sh + 5 * sk;
        N = P;
    }
}

// The bottom (Thomas) level below n_levels levels: its rows in N, its subdiagonal, inverse
// pivots and cp at the offsets lint, inv and cp.
template <int K, int H>
__device__ __forceinline__ Level bottom_at(const int n_levels, const long long N0, const int C0, const int C1) {
    Level b;
    size_t base = 0;
    b.N = N0;
    if (n_levels > 0) {
        const Level top = level_at<K, H>(n_levels - 1, N0, C0, C1);
        b.N = top.P;
        base = top.end;
    }
    const size_t a = ws_align(K * (size_t)b.N);
    b.lint = base;
    b.inv = base + a;
    b.cp = base + 2 * a;
    return b;
}

struct Counts {
    unsigned long long boosted, negative, negative_diag;
};

// The interior factorization and spikes of chunk j from its coefficients in registers: the
// interior rows' a (a[0] unused), di, ui and first_lo, the coupling of row 0 to the
// separator on the left (spike v).
template <int MAXC, typename V>
__device__ __forceinline__ Counts factor_loaded(const size_t j, const size_t P, const int n, const V first_lo,
                                                const V* a, const V* di, const V* ui, V* __restrict__ inv_den,
                                                V* __restrict__ cp, V* __restrict__ ldl, V* __restrict__ v,
                                                V* __restrict__ w, const bool level0) {
    Counts counts{0, 0, 0};
    V c[MAXC], zv[MAXC], zw[MAXC];
    V prev_cp = 0, pv = 0, pw = 0;
#pragma unroll
    for (int i = 0; i < MAXC; ++i) {
        c[i] = zv[i] = zw[i] = V(0);
        if (i < n) {
            const size_t t = (size_t)i * P + j;
            const V den = boost(di[i] - a[i] * prev_cp, fabs(di[i]) + fabs(a[i]) + fabs(ui[i]), counts.boosted);
            counts.negative += den < V(0);
            if (level0) counts.negative_diag += di[i] < V(0);
            const V inv = V(1) / den;
            prev_cp = i == n - 1 ? V(0) : ui[i] * inv;
            inv_den[t] = inv;
            cp[t] = prev_cp;
            ldl[t] = a[i];
            c[i] = prev_cp;
            zv[i] = pv = ((i == 0 ? first_lo : V(0)) - a[i] * pv) * inv;
            zw[i] = pw = ((i == n - 1 ? ui[i] : V(0)) - a[i] * pw) * inv;
        }
    }
    V nv = 0, nw = 0;
#pragma unroll
    for (int i = MAXC - 1; i >= 0; --i) {
        if (i < n) {
            const size_t t = (size_t)i * P + j;
            v[t] = nv = zv[i] - c[i] * nv;
            w[t] = nw = zw[i] - c[i] * nw;
        }
    }
    return counts;
}

// Chunk j of a level (at most MAXC rows): interior factorization and spikes. Every
// coefficient of the chunk is loaded before the recurrence, which then runs in registers
// (the spikes are stored once), as in the apply's sweep_chunk, rather than a loop with its
// loads inside. Not inlined, so that its __restrict__ outputs keep the compiler free to order
// the loads ahead of the stores (inlined, the pointers are offsets of one workspace
// pointer to it). The coefficients are plain pointers: those of the upper levels are
// written by the same launch, so they must not go through the read-only cache.
template <int MAXC, typename V>
__device__ __noinline__ Counts factor_chunk(const size_t j, const size_t P, const int C, const long long N,
                                            const V* dl, const V* d, const V* du, V* __restrict__ inv_den,
                                            V* __restrict__ cp, V* __restrict__ ldl, V* __restrict__ v,
                                            V* __restrict__ w, const bool level0) {
    const size_t base = j * C;
    const int n = C - 1;
    const V first_lo = lower_at(dl, base, N);
    V a[MAXC], di[MAXC], ui[MAXC];
#pragma unroll
    for (int i = 0; i < MAXC; ++i) {
        a[i] = di[i] = ui[i] = V(0);
        if (i < n) {
            di[i] = diag_at(d, base + i, N);
            ui[i] = upper_at(du, base + i, N);
            if (i > 0) a[i] = lower_at(dl, base + i, N);
        }
    }
    return factor_loaded<MAXC>(j, P, n, first_lo, a, di, ui, inv_den, cp, ldl, v, w, level0);
}

// Chunk j of level 0 of a linear forest's system (ForestSystem), its coefficients gathered
// here rather than read from arrays written by a pass of their own (order_partner_entries):
// the same gathers, without storing and loading three arrays of N values. Also writes the
// chunk's entries of perm_t (see partitioned_factor) and its separator row's coefficients
// (lower, diagonal, upper) at sep_lo[j], sep_d[j], sep_hi[j] for separator_row.
template <int MAXC, typename V, typename I>
__device__ __noinline__ Counts factor_forest_chunk(const size_t j, const size_t P, const int C, const long long N,
                                                   const I* __restrict__ perm, const ForestSystem<V, I> fs,
                                                   I* __restrict__ perm_t, V* __restrict__ inv_den,
                                                   V* __restrict__ cp, V* __restrict__ ldl, V* __restrict__ v,
                                                   V* __restrict__ w, V* __restrict__ sep_lo, V* __restrict__ sep_d,
                                                   V* __restrict__ sep_hi) {
    const long long base = (long long)j * C;
    const int n = C - 1;
    I id[MAXC + 2];  // old ids of rows base - 1 .. base + C (-1 outside 0 .. N - 1)
#pragma unroll
    for (int i = 0; i < MAXC + 2; ++i) {
        const long long r = base - 1 + i;
        id[i] = i < C + 2 && r >= 0 && r < N ? perm[r] : (I)-1;
    }
    V lo[MAXC], di[MAXC], up[MAXC];
#pragma unroll
    for (int i = 0; i < MAXC; ++i) {
        lo[i] = up[i] = V(0);
        di[i] = V(1);  // padding rows beyond N: (0, 1, 0)
        if (i < C) {
            perm_t[(size_t)i * P + j] = id[i + 1];
            if (id[i + 1] >= 0) fs.row(id[i + 1], id[i], id[i + 2], lo[i], di[i], up[i]);
        }
    }
    V a[MAXC];
#pragma unroll
    for (int i = 0; i < MAXC; ++i) {
        a[i] = i > 0 ? lo[i] : V(0);
        if (i == n) {
            sep_lo[j] = lo[i];
            sep_d[j] = di[i];
            sep_hi[j] = up[i];
        }
    }
    return factor_loaded<MAXC>(j, P, n, lo[0], a, di, up, inv_den, cp, ldl, v, w, true);
}

// Separator j of a level: a_j L_{j-1} + b_j L_j + c_j L_{j+1} = g_j, the next level's row j.
// The separator rows' own off-diagonal coefficients are kept (sep_lo, sep_hi) for the
// right-hand side at apply time.
// `stored`: its coefficients are at sep_lo[j], rb[j], sep_hi[j] (factor_forest_chunk).
template <typename V>
__device__ __forceinline__ void separator_row(const size_t j, const Level& lv, const V* dl, const V* d, const V* du,
                                              V* work, const bool level0, unsigned long long& negative_diag,
                                              const bool stored) {
    const size_t P = (size_t)lv.P;
    const long long N = lv.N;
    const V *v = work + lv.v, *w = work + lv.w;
    const size_t s = j * lv.C + lv.C - 1;
    const int n = lv.C - 1;
    const V lo = stored ? work[lv.sep_lo + j] : n > 0 ? lower_at(dl, s, N) : V(0);
    const V hi = stored ? work[lv.sep_hi + j] : upper_at(du, s, N);
    V a = 0, b = stored ? work[lv.rb + j] : diag_at(d, s, N), c = 0;
    if (level0) negative_diag += b < V(0);
    if (n > 0) {
        a = -lo * v[(size_t)(n - 1) * P + j];
        b -= lo * w[(size_t)(n - 1) * P + j];
    } else {
        a = lo;
    }
    if (j + 1 < P) {
        if (n > 0) {
            b -= hi * v[j + 1];
            c = -hi * w[j + 1];
        } else {
            c = hi;
        }
    }
    work[lv.ra + j] = j > 0 ? a : V(0);
    work[lv.rb + j] = b;
    work[lv.rc + j] = c;
    work[lv.sep_lo + j] = lo;
    work[lv.sep_hi + j] = hi;
}

// Level 0's chunks (interior factorizations and spikes), for chunks of at most MAXC rows,
// with perm (new -> old) the level-0 gather/scatter index in the interleaved layout:
// perm_t[i * P + j] = perm[j * C + i] (-1 for padding rows). With `partners`, level 0 is a
// linear forest's system in the order perm (ForestSystem: partners, entries or weights,
// counts and diagonal), gathered by factor_forest_chunk; dl0, d0, du0 are then unused.
template <int MAXC, typename V, typename I>
__device__ __forceinline__ void level0_chunks(const I N0, const int C0, const int C1, const V* __restrict__ dl0,
                                              const V* __restrict__ d0, const V* __restrict__ du0, V* work,
                                              const I* __restrict__ perm, I* __restrict__ perm_t,
                                              const ForestSystem<V, I> fs, unsigned long long& boosted,
                                              unsigned long long& negative, unsigned long long& negative_diag) {
    const size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x, step = (size_t)gridDim.x * blockDim.x;
    const Level lv = level_at<1, 1>(0, N0, C0, C1);
    const size_t P = (size_t)lv.P;
    V *inv = work + lv.inv, *cp = work + lv.cp, *lint = work + lv.lint, *v = work + lv.v, *w = work + lv.w;
    for (size_t j = tid; j < P; j += step) {
        Counts c;
        if (fs.partners) {
            c = factor_forest_chunk<MAXC>(j, P, lv.C, lv.N, perm, fs, perm_t, inv, cp, lint, v, w, work + lv.sep_lo,
                                          work + lv.rb, work + lv.sep_hi);
        } else {
            // chunk j's rows read together, as factor_chunk reads them (rather than a loop over
            // the interleaved positions t)
            if (perm)
                for (int i = 0; i < C0; ++i) {
                    const size_t r = j * C0 + i;
                    perm_t[(size_t)i * P + j] = r < (size_t)N0 ? perm[r] : (I)-1;
                }
            c = factor_chunk<MAXC>(j, P, lv.C, lv.N, dl0, d0, du0, inv, cp, lint, v, w, true);
        }
        boosted += c.boosted;
        negative += c.negative;
        negative_diag += c.negative_diag;
    }
}

// Level 0's chunks of at most 8 rows in a kernel of their own, before partitioned_factor
// with `level0_done`: without the upper levels' code they need fewer registers, so more
// blocks fit per SM (kernels.tridiag.partition.LEVEL0_ALONE_BELOW).
template <typename V, typename I>
__global__ void factor_level0(const I N0, const int C0, const int C1, const V* __restrict__ dl0,
                              const V* __restrict__ d0, const V* __restrict__ du0, V* work,
                              const I* __restrict__ perm, I* __restrict__ perm_t,
                              unsigned long long* __restrict__ stats, const I* __restrict__ partners,
                              const V* __restrict__ entries, const V* __restrict__ weights,
                              const unsigned char* __restrict__ counts, const V* __restrict__ diagonal) {
    unsigned long long boosted = 0, negative = 0, negative_diag = 0;
    level0_chunks<8>(N0, C0, C1, dl0, d0, du0, work, perm, perm_t,
                     ForestSystem<V, I>{partners, entries, weights, counts, diagonal}, boosted, negative,
                     negative_diag);
    add_counts(stats, boosted, negative, negative_diag);
}

// The whole factorization in one cooperative launch: level 0's chunks (unless
// `level0_done`: factor_level0 ran them), then every level's separators and the
// upper levels' chunks (grid-wide barriers between the chunks and their separators, and
// between levels), then the bottom Thomas (one thread). dl0, d0, du0: the level-0
// coefficients in row order (read in place; the bottom's dl is copied into the workspace,
// the solves read it). With `perm` (new -> old, N0 entries) and levels, perm_t gets the
// level-0 gather/scatter index (level0_chunks). With `partners` (and levels), level 0 is a
// linear forest's system in the order perm (ForestSystem), whose separator rows'
// coefficients factor_forest_chunk stored; dl0, d0, du0 are then unused. The counts of the
// levels are summed before the last barrier, the bottom's after it by its one thread, which
// then copies them to `host_stats` (pinned host memory, its device address under unified
// addressing; may be null): the host reads them once the kernel is done, without a copy
// queued after it (kernels.backend.PinnedOutput).
template <typename V, typename I>
__global__ void partitioned_factor(const I N0, const int C0, const int C1, const int n_levels, const V* dl0,
                                   const V* d0, const V* du0, V* work, const I* __restrict__ perm,
                                   I* __restrict__ perm_t, unsigned long long* __restrict__ stats,
                                   const I* __restrict__ partners, const V* __restrict__ entries,
                                   const V* __restrict__ weights, const unsigned char* __restrict__ counts,
                                   const V* __restrict__ diagonal, const int level0_done,
                                   unsigned long long* host_stats) {
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    const size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x, step = (size_t)gridDim.x * blockDim.x;
    unsigned long long boosted = 0, negative = 0, negative_diag = 0;
    const ForestSystem<V, I> fs = {partners, entries, weights, counts, diagonal};
    const bool gathered = partners && n_levels > 0;
    if (n_levels > 0 && !level0_done) {
        if (C0 <= 8)
            level0_chunks<8>(N0, C0, C1, dl0, d0, du0, work, perm, perm_t, fs, boosted, negative, negative_diag);
        else
            level0_chunks<MAX_CHUNK>(N0, C0, C1, dl0, d0, du0, work, perm, perm_t, fs, boosted, negative,
                                     negative_diag);
    }
    const V *dl = dl0, *d = d0, *du = du0;
    for (int l = 0; l < n_levels; ++l) {
        const Level lv = level_at<1, 1>(l, N0, C0, C1);
        if (l > 0) {
            for (size_t j = tid; j < (size_t)lv.P; j += step) {
                V *inv = work + lv.inv, *cp = work + lv.cp, *lint = work + lv.lint, *v = work + lv.v, *w = work + lv.w;
                const size_t P = (size_t)lv.P;
                const Counts c = lv.C <= 8 ? factor_chunk<8>(j, P, lv.C, lv.N, dl, d, du, inv, cp, lint, v, w, false)
                                           : factor_chunk<MAX_CHUNK>(j, P, lv.C, lv.N, dl, d, du, inv, cp, lint, v, w,
                                                                     false);
                boosted += c.boosted;
                negative += c.negative;
            }
        }
        if (l > 0 || !level0_done) grid.sync();
        for (size_t j = tid; j < (size_t)lv.P; j += step)
            separator_row(j, lv, dl, d, du, work, l == 0, negative_diag, l == 0 && gathered);
        if (l == n_levels - 1) {  // every count but the bottom's, summed before the last barrier
            add_counts(stats, boosted, negative, negative_diag);
            boosted = negative = negative_diag = 0;
        }
        grid.sync();
        dl = work + lv.ra;
        d = work + lv.rb;
        du = work + lv.rc;
    }
    if (tid == 0) {
        const Level b = bottom_at<1, 1>(n_levels, N0, C0, C1);
        V *inv_den = work + b.inv, *cp = work + b.cp, *dlb = work + b.lint;
        V prev = 0;
        for (long long i = 0; i < b.N; ++i) {
            const V a = i > 0 ? dl[i] : V(0), di = d[i], ui = i + 1 < b.N ? du[i] : V(0);
            const V den = boost(di - a * prev, fabs(di) + fabs(a) + fabs(ui), boosted);
            negative += den < V(0);
            if (n_levels == 0) negative_diag += di < V(0);
            inv_den[i] = V(1) / den;
            prev = ui * inv_den[i];
            cp[i] = prev;
            dlb[i] = a;
        }
        // the bottom's counts (every other thread's are in stats, or 0 without levels)
        if (boosted) atomicAdd(stats, boosted);
        if (negative) atomicAdd(stats + 1, negative);
        if (negative_diag) atomicAdd(stats + 2, negative_diag);
        if (host_stats)
            for (int i = 0; i < 3; ++i) host_stats[i] = *(volatile unsigned long long*)(stats + i);
    }
}

// The apply kernels take their level's arrays as pointers into the workspace (placed by
// the host twin of level_at): __restrict__ parameters let the compiler batch a chunk's loads
// ahead of its stores. Pointers computed inside the kernel from the one workspace pointer
// may alias for all it knows, which serializes the loads.

// Forward/backward sweep of each chunk interior: y = T_int^{-1} b. With `gather`, the
// right-hand side of row r is x[gather[r]] (gather < 0: padding, zero).
// A chunk (at most MAXC rows) is swept unrolled, every load of the chunk issued before the
// recurrence that does not depend on them: a chunk then costs about one memory latency
// instead of C, which bounds the small launches of the upper levels.
template <int MAXC, typename V, typename I>
__device__ __forceinline__ void sweep_chunk(const I j, const I P, const int C, const I N,
                                            const V* __restrict__ x, const I* __restrict__ gather,
                                            const V* __restrict__ inv_den, const V* __restrict__ cp,
                                            const V* __restrict__ ldl, V* __restrict__ y,
                                            V* __restrict__ sep_b) {
    const int n = C - 1;
    V b[MAXC], inv[MAXC], lo[MAXC], up[MAXC];
#pragma unroll
    for (int i = 0; i < MAXC; ++i) {
        b[i] = inv[i] = lo[i] = up[i] = V(0);
        if (i < C) {
            const size_t r = (size_t)j * C + i;
            if (gather) {
                const I g = gather[(size_t)i * P + j];
                b[i] = g >= 0 ? x[g] : V(0);
            } else if (r < (size_t)N) {
                b[i] = x[r];
            }
        }
        if (i < n) {
            const size_t t = (size_t)i * P + j;
            inv[i] = inv_den[t];
            lo[i] = ldl[t];
            up[i] = cp[t];
        }
    }
#pragma unroll
    for (int i = 0; i < MAXC; ++i)
        if (i == n) sep_b[j] = b[i];
    V z = 0;
#pragma unroll
    for (int i = 0; i < MAXC; ++i)
        if (i < n) b[i] = z = (b[i] - lo[i] * z) * inv[i];
    V next = 0;
#pragma unroll
    for (int i = MAXC - 1; i >= 0; --i)
        if (i < n) y[(size_t)i * P + j] = next = b[i] - up[i] * next;
}

template <typename V, typename I>
__device__ __forceinline__ void forward_chunk(const I j, const I P, const int C, const I N, const V* x,
                                              const I* gather, const V* inv_den, const V* cp, const V* ldl, V* y,
                                              V* sep_b) {
    if (C <= 8) sweep_chunk<8>(j, P, C, N, x, gather, inv_den, cp, ldl, y, sep_b);
    else sweep_chunk<MAX_CHUNK>(j, P, C, N, x, gather, inv_den, cp, ldl, y, sep_b);
}

template <typename V, typename I>
__global__ void chunk_forward(const I P, const int C, const I N, const V* __restrict__ x, const I* __restrict__ gather,
                              const V* __restrict__ inv_den, const V* __restrict__ cp, const V* __restrict__ ldl,
                              V* __restrict__ y, V* __restrict__ sep_b) {
    const I j = blockIdx.x * (I)blockDim.x + threadIdx.x;
    if (j >= P) return;
    forward_chunk(j, P, C, N, x, gather, inv_den, cp, ldl, y, sep_b);
}

// g[j], separator j's right-hand side in the next level: its own minus the couplings to
// the interior solutions beside it.
template <typename V, typename I>
__device__ __forceinline__ void reduced_rhs_row(const I j, const I P, const int C, const V* sep_lo, const V* sep_hi,
                                                const V* y, const V* sep_b, V* g) {
    const int n = C - 1;
    V val = sep_b[j];
    if (n > 0) val -= sep_lo[j] * y[(size_t)(n - 1) * P + j];
    if (n > 0 && j + 1 < P) val -= sep_hi[j] * y[j + 1];
    g[j] = val;
}

template <typename V, typename I>
__global__ void reduced_rhs(const I P, const int C, const V* __restrict__ sep_lo, const V* __restrict__ sep_hi,
                            const V* __restrict__ y, const V* __restrict__ sep_b, V* __restrict__ g) {
    const I j = blockIdx.x * (I)blockDim.x + threadIdx.x;
    if (j >= P) return;
    reduced_rhs_row(j, P, C, sep_lo, sep_hi, y, sep_b, g);
}

// x_interior = y - L_{j-1} v - L_j w; separators are L. With `scatter`, row r goes to
// out[scatter[r]] (scatter < 0: padding, dropped), else to out[r] for r < N. A chunk loads
// all its values before the first store (as the forward sweep).
template <int MAXC, typename V, typename I>
__device__ __forceinline__ void back_chunk(const I j, const I P, const int C, const I N,
                                           const V* __restrict__ y, const V* __restrict__ v,
                                           const V* __restrict__ w, const V left, const V right,
                                           const I* __restrict__ scatter, V* __restrict__ out) {
    V val[MAXC];
    I dest[MAXC];
#pragma unroll
    for (int i = 0; i < MAXC; ++i) {
        const size_t t = (size_t)i * P + j, r = (size_t)j * C + i;
        val[i] = right;
        if (i < C - 1) val[i] = y[t] - left * v[t] - right * w[t];
        dest[i] = (I)-1;
        if (i < C) dest[i] = scatter ? scatter[t] : (r < (size_t)N ? (I)r : (I)-1);
    }
#pragma unroll
    for (int i = 0; i < MAXC; ++i)
        if (i < C && dest[i] >= 0) out[dest[i]] = val[i];
}

// Chunk j's interior from the separators' solution L on either side.
template <typename V, typename I>
__device__ __forceinline__ void backward_chunk(const I j, const I P, const int C, const I N, const V* y, const V* v,
                                               const V* w, const V* L, const I* scatter, V* out) {
    const V left = j > 0 ? L[j - 1] : V(0);
    const V right = L[j];
    if (C <= 8) back_chunk<8>(j, P, C, N, y, v, w, left, right, scatter, out);
    else back_chunk<MAX_CHUNK>(j, P, C, N, y, v, w, left, right, scatter, out);
}

template <typename V, typename I>
__global__ void chunk_back(const I P, const int C, const I N, const V* __restrict__ y, const V* __restrict__ v,
                           const V* __restrict__ w, const V* __restrict__ L, const I* __restrict__ scatter,
                           V* __restrict__ out) {
    const I j = blockIdx.x * (I)blockDim.x + threadIdx.x;
    if (j >= P) return;
    backward_chunk(j, P, C, N, y, v, w, L, scatter, out);
}

// The bottom's Thomas sweeps, by one thread.
template <typename V, typename I>
__device__ __forceinline__ void thomas_sweeps(const I n, const V* dl, const V* inv_den, const V* cp, const V* b, V* x) {
    V z = 0;
    for (I i = 0; i < n; ++i) {
        z = (b[i] - dl[i] * z) * inv_den[i];
        x[i] = z;
    }
    V next = 0;
    for (I i = n - 1; i >= 0; --i) {
        next = x[i] - cp[i] * next;
        x[i] = next;
    }
}

// The bottom Thomas solve (one thread).
template <typename V, typename I>
__global__ void thomas_solve(const I n, const V* __restrict__ dl, const V* __restrict__ inv_den, const V* __restrict__ cp,
                             const V* __restrict__ b, V* __restrict__ x) {
    if (blockIdx.x * blockDim.x + threadIdx.x != 0) return;
    thomas_sweeps(n, dl, inv_den, cp, b, x);
}

// The apply's top levels first_top .. n_levels - 1 (first_top >= 1) and the bottom, in one
// block (they have few chunks each: kernels.tridiag.partition.TOP_LEVEL_CHUNKS), with block barriers
// instead of the two launches per level and direction and the bottom's of the level-by-level
// apply: forward over the chunk interiors and the reduced right-hand sides level by level
// (level first_top reads the g of level first_top - 1), the bottom Thomas solve into the
// deepest separators, then the interiors back (level l into the separators S of level
// l - 1). Its arrays are the factorization's (level_at).
template <typename V, typename I>
__global__ void top_solve(const I N0, const int C0, const int C1, const int first_top, const int n_levels, V* work) {
    for (int l = first_top; l < n_levels; ++l) {
        const Level lv = level_at<1, 1>(l, N0, C0, C1);
        const V* rhs = work + level_at<1, 1>(l - 1, N0, C0, C1).g;
        const I P = (I)lv.P;
        for (I j = threadIdx.x; j < P; j += blockDim.x)
            forward_chunk(j, P, lv.C, (I)lv.N, rhs, (const I*)nullptr, work + lv.inv, work + lv.cp, work + lv.lint,
                          work + lv.y, work + lv.sep_b);
        __syncthreads();
        for (I j = threadIdx.x; j < P; j += blockDim.x)
            reduced_rhs_row(j, P, lv.C, work + lv.sep_lo, work + lv.sep_hi, work + lv.y, work + lv.sep_b, work + lv.g);
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        const Level b = bottom_at<1, 1>(n_levels, N0, C0, C1), deepest = level_at<1, 1>(n_levels - 1, N0, C0, C1);
        thomas_sweeps((I)b.N, work + b.lint, work + b.inv, work + b.cp, work + deepest.g, work + deepest.S);
    }
    __syncthreads();
    for (int l = n_levels - 1; l >= first_top; --l) {
        const Level lv = level_at<1, 1>(l, N0, C0, C1);
        V* target = work + level_at<1, 1>(l - 1, N0, C0, C1).S;
        for (I j = threadIdx.x; j < (I)lv.P; j += blockDim.x)
            backward_chunk(j, (I)lv.P, lv.C, (I)lv.N, work + lv.y, work + lv.v, work + lv.w, work + lv.S,
                           (const I*)nullptr, target);
        __syncthreads();
    }
}

// One pass over the CSR entries of A: the tridiagonal coefficients in the order `inverse`
// (old -> new; null: the original order), one thread per old row i (coalesced reads of A,
// whose rows are the bulk of the traffic) writing new row k = inverse[i]. An entry a_ij
// enters the lower (upper) coefficient when j's new row is k - 1 (k + 1).
template <typename V, typename I>
__global__ void extract_tridiagonal(const I N, const I* __restrict__ indptr, const I* __restrict__ indices,
                                    const V* __restrict__ data, const I* __restrict__ inverse, V* __restrict__ dl,
                                    V* __restrict__ d, V* __restrict__ du) {
    for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < N; i += (I)gridDim.x * blockDim.x) {
        const I k = inverse ? inverse[i] : i;
        V diag = 0, lower = 0, upper = 0;
        for (I e = indptr[i]; e < indptr[i + 1]; ++e) {
            const I j = indices[e];
            if (j == i) {
                diag += data[e];
                continue;
            }
            const I kj = inverse ? inverse[j] : j;
            if (kj == k - 1) lower += data[e];
            else if (kj == k + 1) upper += data[e];
        }
        d[k] = diag;
        dl[k] = lower;
        du[k] = upper;
    }
}

// The forest's coefficients in two passes. partner_entries reads A in its own order (one
// thread per row, coalesced): entries[4 i .. 4 i + 3] = (a_ii, a_{i,p0}, a_{i,p1}, 0) for the
// partners p0, p1 of row i (N x 2, -1: none; duplicates summed). It needs the partners
// only, not the order, so it can run while the forest is computed. order_partner_entries
// then writes row k of the order perm (new -> old; null: the original order): i = perm[k]
// and the entries to the rows before and after it when they are partners of i. Its reads
// of a row's entries and partners are gathered, its writes coalesced.
template <typename V, typename I>
__global__ void partner_entries(const I N, const I* __restrict__ indptr, const I* __restrict__ indices,
                                const V* __restrict__ data, const I* __restrict__ partners, V* __restrict__ entries) {
    for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < N; i += (I)gridDim.x * blockDim.x) {
        I p0, p1;
        load_pair(partners + 2 * (size_t)i, p0, p1);
        V diag = 0, to0 = 0, to1 = 0;
        for (I e = indptr[i]; e < indptr[i + 1]; ++e) {
            const I j = indices[e];
            if (j == i) diag += data[e];
            else if (j == p0) to0 += data[e];
            else if (j == p1) to1 += data[e];
        }
        // all four values: a record fills half or all of a 32-byte sector, and a partly
        // written sector is read from memory before it is written back
        store_quad(entries + 4 * (size_t)i, diag, to0, to1, V(0));
    }
}

// The rows of ForestSystem in arrays (perm null: the original order). A factorization gathers
// them itself instead (partitioned_factor with `partners`).
template <typename V, typename I>
__global__ void order_partner_entries(const I N, const I* __restrict__ perm, const I* __restrict__ partners,
                                      const V* __restrict__ entries, const V* __restrict__ weights,
                                      const unsigned char* __restrict__ counts, const V* __restrict__ diagonal,
                                      V* __restrict__ dl, V* __restrict__ d, V* __restrict__ du) {
    const ForestSystem<V, I> fs = {partners, entries, weights, counts, diagonal};
    for (I k = blockIdx.x * (I)blockDim.x + threadIdx.x; k < N; k += (I)gridDim.x * blockDim.x) {
        const I i = perm ? perm[k] : k;
        const I before = k > 0 ? (perm ? perm[k - 1] : k - 1) : (I)-1;
        const I after = k + 1 < N ? (perm ? perm[k + 1] : k + 1) : (I)-1;
        V lo, di, up;
        fs.row(i, before, after, lo, di, up);
        d[k] = di;
        dl[k] = lo;
        du[k] = up;
    }
}

// ---------------------------------------------------------------------------------------
// 2x2 block tridiagonal systems (AlgTriBlock), the same partitioned scheme with 2x2
// blocks: a block row k is L_k x_{k-1} + D_k x_k + U_k x_{k+1} = b_k. Matrices are stored
// as 4 values (row-major), vectors as 2. Per-chunk interior arrays are interleaved
// (block index t = i * P + j). The level-0 right-hand side is gathered through `gather`
// (2 entries per block row; < 0: ghost unknown with right-hand side 1) and the solution
// scattered through the same array (ghosts dropped).
// templates: block_partitioned_factor<V,I>, block_chunk_forward<V,I>, block_reduced_rhs<V,I>, block_chunk_back<V,I>, block_thomas_solve<V,I>, block_slots<I>, block_row_entries<V,I>, block_gather_rows<V,I>

template <typename V>
struct M2 {
    V a, b, c, d;  // [[a, b], [c, d]]
};
template <typename V>
struct V2 {
    V x, y;
};

template <typename V>
__device__ __forceinline__ M2<V> m2_load(const V* p, size_t t) {
    return M2<V>{p[4 * t], p[4 * t + 1], p[4 * t + 2], p[4 * t + 3]};
}
template <typename V>
__device__ __forceinline__ void m2_store(V* p, size_t t, const M2<V>& m) {
    p[4 * t] = m.a;
    p[4 * t + 1] = m.b;
    p[4 * t + 2] = m.c;
    p[4 * t + 3] = m.d;
}
template <typename V>
__device__ __forceinline__ V2<V> v2_load(const V* p, size_t t) {
    return V2<V>{p[2 * t], p[2 * t + 1]};
}
template <typename V>
__device__ __forceinline__ void v2_store(V* p, size_t t, const V2<V>& v) {
    p[2 * t] = v.x;
    p[2 * t + 1] = v.y;
}
template <typename V>
__device__ __forceinline__ M2<V> m2_mul(const M2<V>& p, const M2<V>& q) {
    return M2<V>{p.a * q.a + p.b * q.c, p.a * q.b + p.b * q.d, p.c * q.a + p.d * q.c, p.c * q.b + p.d * q.d};
}
template <typename V>
__device__ __forceinline__ M2<V> m2_sub(const M2<V>& p, const M2<V>& q) {
    return M2<V>{p.a - q.a, p.b - q.b, p.c - q.c, p.d - q.d};
}
template <typename V>
__device__ __forceinline__ V2<V> mv(const M2<V>& p, const V2<V>& v) {
    return V2<V>{p.a * v.x + p.b * v.y, p.c * v.x + p.d * v.y};
}
template <typename V>
__device__ __forceinline__ V2<V> v2_sub(const V2<V>& p, const V2<V>& q) {
    return V2<V>{p.x - q.x, p.y - q.y};
}
template <typename V>
__device__ __forceinline__ V m2_abs(const M2<V>& p) {
    return fabs(p.a) + fabs(p.b) + fabs(p.c) + fabs(p.d);
}

// Eigenvalues of a 2x2 block with a negative real part: one when det < 0 (real, of
// opposite signs), else both or none by the sign of the trace (det == 0: one is 0).
template <typename V>
__device__ __forceinline__ int m2_negative(const M2<V>& p) {
    const V det = p.a * p.d - p.b * p.c, tr = p.a + p.d;
    if (det < V(0)) return 1;
    if (tr >= V(0)) return 0;
    return det > V(0) ? 2 : 1;
}

// Inverse of a pivot block; a (near-)singular block is boosted on its diagonal by
// eps * |row block| (then its off-diagonal dropped if still singular) and counted.
template <typename V>
__device__ __forceinline__ M2<V> m2_inverse_boosted(M2<V> p, V local, unsigned long long& boosted) {
    const V eps = sizeof(V) == 4 ? V(1e-6) : V(1e-13);
    const V scale = local > V(0) ? local : V(1);
    V det = p.a * p.d - p.b * p.c;
    if (fabs(det) <= eps * scale * scale) {
        ++boosted;
        p.a += eps * scale;
        p.d += eps * scale;
        det = p.a * p.d - p.b * p.c;
        if (fabs(det) <= eps * scale * scale) {
            p.b = V(0);
            p.c = V(0);
            det = p.a * p.d;
        }
    }
    const V r = V(1) / det;
    return M2<V>{p.d * r, -p.b * r, -p.c * r, p.a * r};
}

// Block row r of a level with N block rows, read in place: rows beyond N are padding
// (0, I, 0), and nothing couples into row 0 or out of row N - 1.
template <typename V>
__device__ __forceinline__ M2<V> block_lower(const V* L, size_t r, long long N) {
    return r > 0 && r < (size_t)N ? m2_load(L, r) : M2<V>{0, 0, 0, 0};
}
template <typename V>
__device__ __forceinline__ M2<V> block_diag(const V* D, size_t r, long long N) {
    return r < (size_t)N ? m2_load(D, r) : M2<V>{1, 0, 0, 1};
}
template <typename V>
__device__ __forceinline__ M2<V> block_upper(const V* U, size_t r, long long N) {
    return r + 1 < (size_t)N ? m2_load(U, r) : M2<V>{0, 0, 0, 0};
}

// Chunk j of a block level: Inv (pivot inverses), Cp (Inv U), Lint (the interior coupling),
// V and W (spikes for the left/right separators) per interior block t = i * P + j, with
// the counts of the scalar solver over the eigenvalues of the pivot blocks (and, at level
// 0, of the diagonal blocks) with a negative real part. Not inlined, as factor_chunk.
template <typename V>
__device__ __noinline__ Counts block_factor_chunk(const size_t j, const size_t P, const int C, const long long N,
                                                  const V* L, const V* D, const V* U, V* __restrict__ inv,
                                                  V* __restrict__ cp, V* __restrict__ lint, V* __restrict__ v,
                                                  V* __restrict__ w, const bool level0) {
    Counts counts{0, 0, 0};
    const size_t base = j * C;
    const int n = C - 1;
    const M2<V> zero{0, 0, 0, 0};
    M2<V> prev_cp = zero, zv = zero, zw = zero;
    for (int i = 0; i < n; ++i) {
        const size_t t = (size_t)i * P + j;
        const M2<V> a = i > 0 ? block_lower(L, base + i, N) : zero;
        const M2<V> d = block_diag(D, base + i, N);
        const M2<V> u = block_upper(U, base + i, N);
        const M2<V> piv = m2_sub(d, m2_mul(a, prev_cp));
        const M2<V> iv = m2_inverse_boosted(piv, m2_abs(d) + m2_abs(a) + m2_abs(u), counts.boosted);
        counts.negative += m2_negative(iv);  // the eigenvalues of the inverse have the pivot's signs
        if (level0) counts.negative_diag += m2_negative(d);  // padding blocks are the identity
        prev_cp = i == n - 1 ? zero : m2_mul(iv, u);  // the last interior row couples to the separator
        m2_store(inv, t, iv);
        m2_store(cp, t, prev_cp);
        m2_store(lint, t, a);
        const M2<V> rv = i == 0 ? block_lower(L, base, N) : zero;
        const M2<V> rw = i == n - 1 ? u : zero;
        zv = m2_mul(iv, m2_sub(rv, m2_mul(a, zv)));
        zw = m2_mul(iv, m2_sub(rw, m2_mul(a, zw)));
        m2_store(v, t, zv);
        m2_store(w, t, zw);
    }
    M2<V> nv = zero, nw = zero;
    for (int i = n - 1; i >= 0; --i) {
        const size_t t = (size_t)i * P + j;
        const M2<V> c = m2_load(cp, t);
        nv = m2_sub(m2_load(v, t), m2_mul(c, nv));
        nw = m2_sub(m2_load(w, t), m2_mul(c, nw));
        m2_store(v, t, nv);
        m2_store(w, t, nw);
    }
    return counts;
}

// Separator j of a block level: ra_j S_{j-1} + rb_j S_j + rc_j S_{j+1} = g_j, the next
// level's block row j; its own couplings kept (sep_lo, sep_hi) for the apply.
template <typename V>
__device__ __forceinline__ void block_separator_row(const size_t j, const Level& lv, const int C, const V* L,
                                                    const V* D, const V* U, V* work, const bool level0,
                                                    unsigned long long& negative_diag) {
    const size_t P = (size_t)lv.P;
    const size_t s = j * C + C - 1;
    const int n = C - 1;
    const M2<V> zero{0, 0, 0, 0};
    const M2<V> lo = block_lower(L, s, lv.N), hi = block_upper(U, s, lv.N), d = block_diag(D, s, lv.N);
    if (level0) negative_diag += m2_negative(d);
    const V *v = work + lv.v, *w = work + lv.w;
    const size_t last = (size_t)(n - 1) * P + j;
    M2<V> a = m2_sub(zero, m2_mul(lo, m2_load(v, last)));
    M2<V> b = m2_sub(d, m2_mul(lo, m2_load(w, last)));
    M2<V> c = zero;
    if (j + 1 < P) {
        b = m2_sub(b, m2_mul(hi, m2_load(v, j + 1)));
        c = m2_sub(zero, m2_mul(hi, m2_load(w, j + 1)));
    }
    m2_store(work + lv.ra, j, j > 0 ? a : zero);
    m2_store(work + lv.rb, j, b);
    m2_store(work + lv.rc, j, c);
    m2_store(work + lv.sep_lo, j, lo);
    m2_store(work + lv.sep_hi, j, hi);
}

// The whole block factorization in one cooperative launch, as partitioned_factor: every
// level, then the bottom block Thomas (one thread; its L copied into the workspace with
// L_0 = 0). index (m x 2, -1 for a ghost) is counted into stats[3] (its unknowns) and,
// with levels, laid into the level-0 gather/scatter array (2 P C entries, -1 beyond 2 m).
template <typename V, typename I>
__global__ void block_partitioned_factor(const I m, const int C, const int n_levels, const V* L0, const V* D0,
                                         const V* U0, V* work, const I* __restrict__ index, I* __restrict__ gather,
                                         unsigned long long* __restrict__ stats) {
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    const size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x, step = (size_t)gridDim.x * blockDim.x;
    unsigned long long boosted = 0, negative = 0, negative_diag = 0, unknowns = 0;
    const size_t total = n_levels > 0 ? 2 * (size_t)C * (((size_t)m + C - 1) / C) : 2 * (size_t)m;
    for (size_t t = tid; t < total; t += step) {
        const I k = t < 2 * (size_t)m ? index[t] : (I)-1;
        unknowns += k >= 0;
        if (n_levels > 0) gather[t] = k;
    }
    const V *L = L0, *D = D0, *U = U0;
    for (int l = 0; l < n_levels; ++l) {
        const Level lv = level_at<4, 2>(l, m, C, C);
        for (size_t j = tid; j < (size_t)lv.P; j += step) {
            const Counts c = block_factor_chunk(j, (size_t)lv.P, C, lv.N, L, D, U, work + lv.inv, work + lv.cp,
                                                work + lv.lint, work + lv.v, work + lv.w, l == 0);
            boosted += c.boosted;
            negative += c.negative;
            negative_diag += c.negative_diag;
        }
        grid.sync();
        for (size_t j = tid; j < (size_t)lv.P; j += step)
            block_separator_row(j, lv, C, L, D, U, work, l == 0, negative_diag);
        grid.sync();
        L = work + lv.ra;
        D = work + lv.rb;
        U = work + lv.rc;
    }
    if (tid == 0) {
        const Level b = bottom_at<4, 2>(n_levels, m, C, C);
        const long long n = b.N;
        V *Lb = work + b.lint, *inv = work + b.inv, *cp = work + b.cp;
        const M2<V> zero{0, 0, 0, 0};
        M2<V> prev = zero;
        for (long long i = 0; i < n; ++i) {
            const M2<V> a = block_lower(L, (size_t)i, n), d = block_diag(D, (size_t)i, n), u = block_upper(U, (size_t)i, n);
            const M2<V> iv = m2_inverse_boosted(m2_sub(d, m2_mul(a, prev)), m2_abs(d) + m2_abs(a) + m2_abs(u), boosted);
            negative += m2_negative(iv);
            if (n_levels == 0) negative_diag += m2_negative(d);
            prev = m2_mul(iv, u);
            m2_store(Lb, (size_t)i, a);
            m2_store(inv, (size_t)i, iv);
            m2_store(cp, (size_t)i, prev);
        }
    }
    add_counts(stats, boosted, negative, negative_diag, unknowns);
}

// Right-hand side of block row r of chunk j: level 0 gathers it through `gather` (ghost:
// 1); deeper levels read x in block-row order (rows >= N are padding, 0).
template <typename V, typename I>
__device__ __forceinline__ V2<V> block_rhs(const size_t r, const I N, const V* __restrict__ x,
                                           const I* __restrict__ gather) {
    V2<V> b{0, 0};
    if (gather) {
        const I g0 = gather[2 * r], g1 = gather[2 * r + 1];
        b.x = g0 >= 0 ? x[g0] : V(1);
        b.y = g1 >= 0 ? x[g1] : V(1);
    } else if (r < (size_t)N) {
        b = v2_load(x, r);
    }
    return b;
}

// block_chunk_forward's sweep of a chunk (at most MAXC block rows): the chunk's right-hand
// sides (gathered at level 0) are loaded before the recurrence, so that their latencies
// overlap (rather than a loop with its loads inside).
template <int MAXC, typename V, typename I>
__device__ __forceinline__ void block_sweep_chunk(const I j, const I P, const int C, const I N,
                                                  const V* __restrict__ x, const I* __restrict__ gather,
                                                  const V* __restrict__ inv, const V* __restrict__ cp,
                                                  const V* __restrict__ lint, V* __restrict__ y,
                                                  V* __restrict__ sep_b) {
    const int n = C - 1;
    V2<V> b[MAXC];
#pragma unroll
    for (int i = 0; i < MAXC; ++i) b[i] = i < C ? block_rhs((size_t)j * C + i, N, x, gather) : V2<V>{0, 0};
#pragma unroll
    for (int i = 0; i < MAXC; ++i)
        if (i == n) v2_store(sep_b, (size_t)j, b[i]);
    V2<V> z{0, 0};
#pragma unroll
    for (int i = 0; i < MAXC; ++i) {
        if (i < n) {
            const size_t t = (size_t)i * P + j;
            b[i] = z = mv(m2_load(inv, t), v2_sub(b[i], mv(m2_load(lint, t), z)));
        }
    }
    V2<V> next{0, 0};
#pragma unroll
    for (int i = MAXC - 1; i >= 0; --i) {
        if (i < n) {
            const size_t t = (size_t)i * P + j;
            next = v2_sub(b[i], mv(m2_load(cp, t), next));
            v2_store(y, t, next);
        }
    }
}

// y = T_int^{-1} b per chunk; the separator's right-hand side goes to sep_b.
template <typename V, typename I>
__global__ void block_chunk_forward(const I P, const int C, const I N, const V* __restrict__ x,
                                    const I* __restrict__ gather, const V* __restrict__ inv,
                                    const V* __restrict__ cp, const V* __restrict__ lint, V* __restrict__ y,
                                    V* __restrict__ sep_b) {
    const I j = blockIdx.x * (I)blockDim.x + threadIdx.x;
    if (j >= P) return;
    if (C <= 8) block_sweep_chunk<8>(j, P, C, N, x, gather, inv, cp, lint, y, sep_b);
    else block_sweep_chunk<MAX_CHUNK>(j, P, C, N, x, gather, inv, cp, lint, y, sep_b);
}

template <typename V, typename I>
__global__ void block_reduced_rhs(const I P, const int C, const V* __restrict__ sep_lo, const V* __restrict__ sep_hi,
                                  const V* __restrict__ y, const V* __restrict__ sep_b, V* __restrict__ g) {
    const I j = blockIdx.x * (I)blockDim.x + threadIdx.x;
    if (j >= P) return;
    const int n = C - 1;
    V2<V> val = v2_sub(v2_load(sep_b, (size_t)j), mv(m2_load(sep_lo, (size_t)j), v2_load(y, (size_t)(n - 1) * P + j)));
    if (j + 1 < P) val = v2_sub(val, mv(m2_load(sep_hi, (size_t)j), v2_load(y, (size_t)(j + 1))));
    v2_store(g, (size_t)j, val);
}

// block_chunk_back's work on a chunk (at most MAXC block rows): every value of the chunk is
// computed before the first store.
template <int MAXC, typename V, typename I>
__device__ __forceinline__ void block_back_chunk(const I j, const I P, const int C, const I N,
                                                 const V* __restrict__ y, const V* __restrict__ v,
                                                 const V* __restrict__ w, const V2<V> left, const V2<V> right,
                                                 const I* __restrict__ scatter, V* __restrict__ out) {
    V2<V> val[MAXC];
    I dest[2 * MAXC];
#pragma unroll
    for (int i = 0; i < MAXC; ++i) {
        const size_t t = (size_t)i * P + j, r = (size_t)j * C + i;
        val[i] = right;
        if (i < C - 1) val[i] = v2_sub(v2_sub(v2_load(y, t), mv(m2_load(v, t), left)), mv(m2_load(w, t), right));
        dest[2 * i] = dest[2 * i + 1] = (I)-1;
        if (i < C) {
            if (scatter) {
                dest[2 * i] = scatter[2 * r];
                dest[2 * i + 1] = scatter[2 * r + 1];
            } else if (r < (size_t)N) {
                dest[2 * i] = (I)(2 * r);
                dest[2 * i + 1] = (I)(2 * r + 1);
            }
        }
    }
#pragma unroll
    for (int i = 0; i < MAXC; ++i) {
        if (dest[2 * i] >= 0) out[dest[2 * i]] = val[i].x;
        if (dest[2 * i + 1] >= 0) out[dest[2 * i + 1]] = val[i].y;
    }
}

// x_interior = y - V S_{j-1} - W S_j; separators are S. With `scatter`, unknown (r, c)
// goes to out[scatter[2r + c]] (< 0 dropped), else to out[2r + c] for rows r < N.
template <typename V, typename I>
__global__ void block_chunk_back(const I P, const int C, const I N, const V* __restrict__ y, const V* __restrict__ v,
                                 const V* __restrict__ w, const V* __restrict__ S, const I* __restrict__ scatter,
                                 V* __restrict__ out) {
    const I j = blockIdx.x * (I)blockDim.x + threadIdx.x;
    if (j >= P) return;
    const V2<V> left = j > 0 ? v2_load(S, (size_t)(j - 1)) : V2<V>{0, 0};
    const V2<V> right = v2_load(S, (size_t)j);
    if (C <= 8) block_back_chunk<8>(j, P, C, N, y, v, w, left, right, scatter, out);
    else block_back_chunk<MAX_CHUNK>(j, P, C, N, y, v, w, left, right, scatter, out);
}

template <typename V, typename I>
__global__ void block_thomas_solve(const I n, const V* __restrict__ L, const V* __restrict__ inv,
                                   const V* __restrict__ cp, const V* __restrict__ b, V* __restrict__ x) {
    if (blockIdx.x * blockDim.x + threadIdx.x != 0) return;
    V2<V> z{0, 0};
    for (I i = 0; i < n; ++i) {
        const V2<V> a = i > 0 ? mv(m2_load(L, (size_t)i), z) : V2<V>{0, 0};
        z = mv(m2_load(inv, (size_t)i), v2_sub(v2_load(b, (size_t)i), a));
        v2_store(x, (size_t)i, z);
    }
    V2<V> next{0, 0};
    for (I i = n - 1; i >= 0; --i) {
        next = v2_sub(v2_load(x, (size_t)i), mv(m2_load(cp, (size_t)i), next));
        v2_store(x, (size_t)i, next);
    }
}

// The 2x2 blocks in two passes, as the scalar extraction: block_row_entries reads A in
// its own order, block_gather_rows places the rows' sums in the blocks' order. One pass in
// the blocks' order read A's rows scattered over the matrix wherever the paths cross the
// rows' order.
// slot[i] = 2 * block + position of row i (block_slots; ids outside 0..n_rows - 1 are
// left out, for the caller's check to refuse).
template <typename I>
__global__ void block_slots(const I m, const I n_rows, const I* __restrict__ index, I* __restrict__ slot) {
    for (I k = blockIdx.x * (I)blockDim.x + threadIdx.x; k < m; k += (I)gridDim.x * blockDim.x) {
        for (int s = 0; s < 2; ++s) {
            const I i = index[2 * (size_t)k + s];
            if (i >= 0 && i < n_rows) slot[i] = 2 * k + s;
        }
    }
}

// Row i (position s of block b = slot[i] >> 1) sums its entries by the block and position
// of their column: record i = (l, d, u), each a pair over the two positions, where l and u
// only take the columns in blocks b - 1 and b + 1 of b's path (path_start[b]: whether
// block b begins a path; m + 1 flags). covered[i] and total[i]: the off-diagonal absolute
// weight of the row that the blocks hold, and all of it (the twin of
// kernels.tridiag.extract._extract_blocks_cpu, which sums in the same order per row).
template <typename V, typename I>
__global__ void block_row_entries(const I n_rows, const I* __restrict__ indptr, const I* __restrict__ indices,
                                  const V* __restrict__ data, const I* __restrict__ slot,
                                  const unsigned char* __restrict__ path_start, V* __restrict__ record,
                                  double* __restrict__ covered, double* __restrict__ total) {
    for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < n_rows; i += (I)gridDim.x * blockDim.x) {
        const I b = slot[i] >> 1;
        const bool joined_prev = !path_start[b], joined_next = !path_start[b + 1];
        V l[2] = {0, 0}, d[2] = {0, 0}, u[2] = {0, 0};
        double cov = 0, tot = 0;
        for (I e = indptr[i]; e < indptr[i + 1]; ++e) {
            const I j = indices[e];
            const V a = data[e];
            const double w = j != i ? (double)(a < V(0) ? -a : a) : 0.0;
            tot += w;
            const I sj = slot[j];
            const I bj = sj >> 1;
            const int t = (int)(sj & 1);
            if (bj == b) {
                d[t] += a;
                cov += w;
            } else if (bj == b - 1 && joined_prev) {
                l[t] += a;
                cov += w;
            } else if (bj == b + 1 && joined_next) {
                u[t] += a;
                cov += w;
            }
        }
        V* r = record + 6 * (size_t)i;
        store_pair(r, l[0], l[1]);
        store_pair(r + 2, d[0], d[1]);
        store_pair(r + 4, u[0], u[1]);
        covered[i] = cov;
        total[i] = tot;
    }
}

// Block row k (rows index[2k] and index[2k + 1]; -1 is a ghost, whose equation is
// 1 * x = 1) gathers its rows' records into L_k, D_k, U_k.
template <typename V, typename I>
__global__ void block_gather_rows(const I m, const I* __restrict__ index, const V* __restrict__ record,
                                  V* __restrict__ L, V* __restrict__ D, V* __restrict__ U) {
    for (I k = blockIdx.x * (I)blockDim.x + threadIdx.x; k < m; k += (I)gridDim.x * blockDim.x) {
        for (int s = 0; s < 2; ++s) {
            const I i = index[2 * (size_t)k + s];
            V l0 = 0, l1 = 0, d0 = s == 0 ? V(1) : V(0), d1 = s == 1 ? V(1) : V(0), u0 = 0, u1 = 0;
            if (i >= 0) {
                const V* r = record + 6 * (size_t)i;
                load_pair(r, l0, l1);
                load_pair(r + 2, d0, d1);
                load_pair(r + 4, u0, u1);
            }
            const size_t at = 4 * (size_t)k + 2 * s;
            store_pair(L + at, l0, l1);
            store_pair(D + at, d0, d1);
            store_pair(U + at, u0, u1);
        }
    }
}
