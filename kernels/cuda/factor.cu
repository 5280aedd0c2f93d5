// Parallel [0,n]-factor (Klein and Strzodka, ICPP 2022, Algorithm 2), n <= 4.
// propose: one thread per row; the generalized SpMV keeps the n best admissible
//          (weight, -column) pairs of the row in a small sorted register accumulator.
// confirm: keep mutual proposals; on uncharged steps flag whether any row proposed.
// `first` (iteration 0): no vertex has partners yet, so propose reads neither `count` nor
// `partners` and confirm writes every slot (the factor arrays need no initialization).
// The first confirm lists the rows with room left that can still propose (`next`); the
// later rounds run over this list only (`listed`), and each round keeps for the next the
// listed rows still open and alive. A saturated row stays saturated and nobody proposes to
// it; a dead row (every neighbour saturated, a partner already or of weight 0, so that it
// proposes nothing in any later round) marks its first proposal slot DEAD (with records:
// DEAD_BIT of its count byte), and nobody proposes to it either (its neighbours are all
// closed to it): stale proposals of unlisted rows are never read. open_rounds runs those
// rounds in one cooperative launch.
// sym_check: flags non-finite entries and sums fingerprints of the off-diagonal entries,
//            those above the diagonal against those below it (check_entry).
// mirror_sum: the weights |a_ij| + |a_ji| of the weight graph A' + A'^T on A's own pattern.
// propose_slotted: the first proposal that also writes the rows' slots (RowSlot) for the
//                  later rounds.
// propose_warp: the same proposal with one warp per row (lanes scan strided entries, then a
//               butterfly merge of the sorted top-n lists; identical result: strict total order).
// The first proposal can also check the matrix (check_entry), replacing sym_check's pass,
// or compute mirror_sum's weights (mirror_entry) and propose on them, replacing its pass;
// or choose between the two by sample_check's verdict on a sample of rows (`choose`):
// a matrix with unsymmetric values is then factorized on A' + A'^T at once, not first
// speculatively on A.
// templates: propose<V,I>, propose_slotted<V,I>, propose_warp<V,I>, confirm<V,I>, open_rounds<V,I>
// templates: sym_check<V,I>, mirror_sum<V,I>, sample_check<V,I>
#include <cooperative_groups.h>

#include "append.cuh"
#include "hashing.cuh"
#include "pairs.cuh"

#define MAX_N 4
#define DEAD (-2)  // prop[v * n] of a row that will never propose again
#define ENTRY_BATCH 4  // entries of a row a proposal loads ahead (scan_row)
// A row's partner count (at most MAX_N) in one byte: the proposals gather it for every
// entry, from a quarter of the bytes of an int. Its bits SIGN_BIT + s are set
// when the entry to partner s is negative (confirm_rows).
typedef unsigned char Count;
#define COUNT_MASK 7
#define SIGN_BIT 3
// The later rounds of a [0,2]-factor (one record per row, Proposals::record) keep two more
// bits there: PROPOSED_BIT when the row's record holds this round's proposals, DEAD_BIT when
// the row will never propose again. A row that proposes nothing then stores no record
// (the confirms test the bit before they trust one; the records start as the first round's
// dead arrays): a third of the rows listed in rounds 1-4 of random_diffusion2d are alive
// but blocked by the charges, and another tenth die. A row proposed to in a round is
// listed in it (open, and alive since its proposer is an admissible neighbour), so its bit
// is that round's; a confirm's store of the count byte keeps both bits.
#define PROPOSED_BIT (1u << 5)
#define DEAD_BIT (1u << 6)

// `mask` with bit `pos` set to `bit` (0 or 1)
__device__ __forceinline__ unsigned int with_bit(unsigned int mask, int pos, unsigned int bit) {
    return (mask & ~(1u << pos)) | (bit << pos);
}

template <typename V, typename I>
__device__ __forceinline__ bool better(V w1, I j1, V w2, I j2) {
    return w1 > w2 || (w1 == w2 && j1 < j2);
}

// Position of column i in the sorted row j, or -1, for the entry (i, j) that lies
// `from_end` entries before the end of row i. A stencil symmetric about its centre puts
// the mirror as far from the start of row j (a row away from the boundary): that position
// is tried first, one load, then a binary search.
template <typename I>
__device__ __forceinline__ I mirror_position(const I* __restrict__ indptr, const I* __restrict__ indices, I j, I i,
                                             I from_end) {
    I lo = indptr[j], hi = indptr[j + 1];
    const I end = hi;
    if (lo + from_end < hi && indices[lo + from_end] == i) return lo + from_end;
    while (lo < hi) {
        const I mid = lo + (hi - lo) / 2;
        if (indices[mid] < i) lo = mid + 1;
        else hi = mid;
    }
    return lo < end && indices[lo] == i ? lo : (I)-1;
}

// The matrix check fused into the first proposal (`check` non-null), the tests of
// sym_check without a pass of their own: for every entry of row v, check[0] = 1 when a_vj
// is not finite, and `print` adds the fingerprint of every nonzero off-diagonal entry
// above the diagonal and subtracts that of every one below it (summed into check[2] by
// add_print). |A| - diag(A) is symmetric exactly when the entries (i, j, |a_ij|) above the
// diagonal are those (j, i, |a_ji|) below it, and then the sum is 0; otherwise it is 0
// with probability about 2^-64 (64-bit fingerprints, summed modulo 2^64). No entry looks
// its mirror up, a chain of three loads from another row that kept the first proposal
// bound by L2.
// A flag is stored only while it reads 0: racing stores of the same value are benign, but
// every row storing to one address serializes.
__device__ __forceinline__ void raise_flag(unsigned long long* flag) {
    if (*(volatile unsigned long long*)flag == 0ull) *flag = 1ull;
}

// splitmix64's finalizer
__device__ __forceinline__ unsigned long long mix64(unsigned long long x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// Fingerprint of the off-diagonal entry (lo, hi), lo < hi, of magnitude w: nonzero and
// finite where it counts, so equal magnitudes have equal bits. One mix of the key (with
// 32-bit indices (lo, hi) itself, no mix) xor an odd multiple of the bits: mix64 is a
// bijection, so two entries of one position but unequal magnitudes never share a print.
// The first proposal's 64-bit multiplies, two per mix, bound it on rows of nine entries:
// one mix per entry.
template <typename V, typename I>
__device__ __forceinline__ unsigned long long entry_print(const I lo, const I hi, const V w) {
    const unsigned long long bits = sizeof(V) == 4 ? (unsigned long long)__float_as_uint((float)w)
                                                   : (unsigned long long)__double_as_longlong((double)w);
    const unsigned long long key =
        sizeof(I) == 4 ? ((unsigned long long)(unsigned int)lo << 32) | (unsigned int)hi
                       : mix64((unsigned long long)lo ^ 0x9e3779b97f4a7c15ull) ^ (unsigned long long)hi;
    return mix64(key ^ bits * 0xd6e8feb86659fd93ull);
}

template <typename V, typename I>
__device__ __forceinline__ void check_entry(const I v, const I j, const V a, unsigned long long* check,
                                            unsigned long long& print) {
    if (!isfinite(a)) raise_flag(check);
    const V w = (V)fabs(a);
    if (j == v || w == V(0)) return;
    if (j > v) print += entry_print(v, j, w);
    else print -= entry_print(j, v, w);
}

// A proposal on the weight graph A' + A'^T of a matrix with unsymmetric values (`mirror`):
// mirror_sum's weight of the entry (v, j), looked up in every round instead of stored
// (H200, a 7-point convection-diffusion matrix of 2.7M rows: the first proposal takes
// 171 us without storing its 19M weights, 300 with, in float32, and 230 against 476 in
// float64; the lookups cost the later rounds over the rows left open 35-38 us). With
// `check`: check[1] = 1 when a nonzero entry has no mirror (A's pattern does not hold the
// weight graph, whose factor is then void).
template <typename V, typename I>
__device__ __forceinline__ V mirror_entry(const I v, const I j, const I from_end, const V a,
                                          const I* __restrict__ indptr, const I* __restrict__ indices,
                                          const V* __restrict__ data, unsigned long long* check) {
    V w = V(0);
    if (check && !isfinite(a)) raise_flag(check);
    if (j != v) {
        w = (V)fabs(a);
        const I m = mirror_position(indptr, indices, j, v, from_end);
        if (m >= 0) w = w + (V)fabs(data[m]);
        else if (check && w != V(0)) raise_flag(check + 1);
    }
    return w;
}

// check[3] = 1 (sample_verdict) when a sampled row proves |A| - diag(A) unsymmetric: a
// first proposal with `choose` then proposes on mirror_entry's weights instead of checking.
// A failed check (non-finite entries or unsymmetric |A| - diag(A)) voids the speculative
// factor: confirm then returns at once, so the host need not wait for the
// check before it queues them (open_rounds finds no open rows).
__device__ __forceinline__ bool check_failed(const unsigned long long* __restrict__ check) {
    return check && (check[0] | check[1] | check[2]);
}

// Sums the threads' fingerprints into check[2] (every lane of the warp must call it).
__device__ __forceinline__ void add_print(unsigned long long* check, unsigned long long print) {
    if (!check) return;
    for (int off = 16; off > 0; off >>= 1) print += __shfl_down_sync(0xffffffffu, print, off);
    if ((threadIdx.x & 31) == 0 && print != 0ull) atomicAdd(check + 2, print);
}

// A row's off-diagonal entries in one aligned 32-byte record (float values, int indices),
// written by the first proposal, which reads the row anyway, for matrices of at most
// SLOT_ENTRIES + 1 entries per row on average: the later rounds then read a listed row
// from one sector instead of its offsets, columns and values in parts of three to five
// (kernels.factor.ROW_SLOT_ENTRIES). Unused places hold column -1; a row with more
// off-diagonal entries has SLOT_LONG in place 0 and is read from A.
#define SLOT_ENTRIES 4
#define SLOT_LONG (-2)
static_assert(SLOT_ENTRIES == ENTRY_BATCH, "a slot is read as one batch of entries");
template <typename V, typename I>
struct __align__(16) RowSlot {
    I j[SLOT_ENTRIES];
    V a[SLOT_ENTRIES];
};

template <typename V, typename I>
union RowSlotBytes {
    RowSlot<V, I> slot;
    uint4 raw[sizeof(RowSlot<V, I>) / 16];
};

// Entries lo, lo + stride, ... < hi of row v: keeps the `room` best admissible (weight,
// -column) pairs (not v, not saturated, not yet a partner, nonzero, other charge when
// charging) sorted in acc; returns how many it holds. `alive` is set when an entry passes
// every test but the charge one (the row may propose in a later round). Bit s of `neg` is
// set when the entry kept in acc[s] is negative and its weight is its absolute value
// (absval, not mirror): the proposal then stores the entry itself (store_proposals), from
// which confirm takes both the weight and the matrix entry. `diag` adds the diagonal entry.
// `slot` (non-null, not SLOT_LONG): the row's entries are read from it instead, one batch.
// `captured` (non-null, the first proposal): the row's off-diagonal entries are copied to it.
template <typename V, typename I>
__device__ __forceinline__ int scan_row(const I v, const I lo, const I hi, const int stride,
                                        const I* __restrict__ indptr, const I* __restrict__ indices,
                                        const V* __restrict__ data,
                                        const I* partners, const Count* count, const int n,
                                        const int c, const int room, const unsigned int k, const unsigned int seed,
                                        const int charging, const unsigned long long threshold, const int absval,
                                        const int first, V* acc_w, I* acc_j, unsigned int& neg, V& diag,
                                        unsigned long long* check, unsigned long long& print, bool& alive,
                                        const int mirror, const RowSlot<V, I>* slot = nullptr,
                                        RowSlot<V, I>* captured = nullptr) {
    const bool qv = (unsigned long long)hash32((unsigned int)v, k, seed) < threshold;
    I mine[MAX_N];
    for (int s = 0; s < MAX_N; ++s) mine[s] = s < c ? partners[(size_t)v * n + s] : (I)-1;
    int filled = 0, kept = 0;
    I cj[SLOT_ENTRIES] = {-1, -1, -1, -1};  // the off-diagonal entries `captured`
    V ca[SLOT_ENTRIES] = {V(0), V(0), V(0), V(0)};
    // Entries in batches of ENTRY_BATCH: their columns, values and the columns' counts are
    // loaded before any is used, so that a row waits for two loads, not two per entry.
    // jb: the columns (-1: past the row's end), e0: the batch's first entry in A (mirror).
    auto take = [&](const I* jb, const V* ab, const I e0) {
        int cb[ENTRY_BATCH];
#pragma unroll
        for (int b = 0; b < ENTRY_BATCH; ++b) cb[b] = !first && jb[b] >= 0 ? count[jb[b]] & COUNT_MASK : 0;
#pragma unroll
        for (int b = 0; b < ENTRY_BATCH; ++b) {
            const I e = e0 + b * stride, j = jb[b];
            if (j < 0) continue;  // past the row's end
            V mirrored = V(0);
            if (mirror) mirrored = mirror_entry(v, j, hi - 1 - e, ab[b], indptr, indices, data, check);
            else if (check) check_entry(v, j, ab[b], check, print);
            if (j == v) diag += ab[b];  // summed as partner_entries sums (tridiag.cu)
            if (j == v || cb[b] >= n) continue;
            bool already = false;
            for (int s = 0; s < MAX_N; ++s) already |= (mine[s] == j);
            if (already) continue;
            const V w = mirror ? mirrored : absval ? (V)fabs(ab[b]) : ab[b];
            if (w == V(0)) continue;
            const bool negative = absval && !mirror && ab[b] < V(0);
            alive = true;
            if (charging && (((unsigned long long)hash32((unsigned int)j, k, seed) < threshold) == qv)) continue;
            int pos;
            if (filled < room) {
                pos = filled++;
            } else if (better(w, j, acc_w[room - 1], acc_j[room - 1])) {
                pos = room - 1;
            } else {
                continue;
            }
            while (pos > 0 && better(w, j, acc_w[pos - 1], acc_j[pos - 1])) {
                acc_w[pos] = acc_w[pos - 1];
                acc_j[pos] = acc_j[pos - 1];
                neg = with_bit(neg, pos, (neg >> (pos - 1)) & 1u);
                --pos;
            }
            acc_w[pos] = w;
            acc_j[pos] = j;
            neg = with_bit(neg, pos, (unsigned int)negative);
        }
    };
    if (slot) {
        take(slot->j, slot->a, lo);
        return filled;
    }
    for (I e0 = lo; e0 < hi; e0 += ENTRY_BATCH * stride) {
        I jb[ENTRY_BATCH];
        V ab[ENTRY_BATCH];
#pragma unroll
        for (int b = 0; b < ENTRY_BATCH; ++b) {
            const I e = e0 + b * stride;
            jb[b] = e < hi ? indices[e] : (I)-1;
            ab[b] = e < hi ? data[e] : V(0);
        }
        if (captured) {  // places chosen by unrolled comparisons: no dynamic index into registers
#pragma unroll
            for (int b = 0; b < ENTRY_BATCH; ++b) {
                const bool off = jb[b] >= 0 && jb[b] != v;
#pragma unroll
                for (int s = 0; s < SLOT_ENTRIES; ++s) {
                    if (off && kept == s) {
                        cj[s] = jb[b];
                        ca[s] = ab[b];
                    }
                }
                kept += off;
            }
        }
        take(jb, ab, e0);
    }
    if (captured) {
#pragma unroll
        for (int s = 0; s < SLOT_ENTRIES; ++s) {
            captured->j[s] = s == 0 && kept > SLOT_ENTRIES ? (I)SLOT_LONG : cj[s];
            captured->a[s] = ca[s];
        }
    }
    return filled;
}

// Where the rows' proposals lie: row v's targets at j + sj * v, the weights (or entries) at
// w + sw * v. In the later rounds of a [0,2]-factor (open_rounds) one record per row holds
// both (`record`), the pair of the larger type first and the other padded to as many bytes
// (16 bytes for float and int, 32 otherwise; proposal_buffers in kernels/factor/rounds_gpu.py),
// stored whole (store_record): a scattered store then writes one sector, or half of one,
// instead of a part of two. Otherwise two arrays, sj = sw = n: the first round's coalesced
// stores were slower with records.
//
// With `mask` (the later rounds over slots, RowSlot), a row read from its slot stores its
// proposals as a byte instead, the bits of its slot's places it proposes to (a row of A
// still stores a record): a proposal then writes a byte of an array that stays in L2, not
// a part of a sector of one that does not, and the confirm reads the row's slot and its
// targets' (one sector each, as their records were). The records' order, best first, is
// that of the weights (better), restored from the slot.
template <typename V, typename I>
struct Proposals {
    I* j;
    V* w;
    int sj, sw;
    bool record;
    unsigned char* mask;
    const RowSlot<V, I>* slots;
    __device__ __forceinline__ I* targets(const I v) const { return j + (size_t)sj * v; }
    __device__ __forceinline__ V* values(const I v) const { return w + (size_t)sw * v; }
};

// Places of a slot's columns that are among the first `filled` of acc_j, as bits.
template <typename V, typename I>
__device__ __forceinline__ unsigned int slot_mask(const RowSlot<V, I>& slot, const int filled, const I* acc_j) {
    unsigned int m = 0;
#pragma unroll
    for (int b = 0; b < SLOT_ENTRIES; ++b)
#pragma unroll
        for (int t = 0; t < 2; ++t) m |= (unsigned int)(t < filled && slot.j[b] >= 0 && slot.j[b] == acc_j[t]) << b;
    return m;
}

// The slot of row v, whole (two 16-byte loads).
template <typename V, typename I>
__device__ __forceinline__ RowSlot<V, I> load_slot(const RowSlot<V, I>* slots, const I v) {
    RowSlotBytes<V, I> sb;
#pragma unroll
    for (int i = 0; i < (int)(sizeof(RowSlot<V, I>) / 16); ++i)
        sb.raw[i] = reinterpret_cast<const uint4*>(slots + v)[i];
    return sb.slot;
}

// Stores row v's slot whole (two 16-byte stores).
template <typename V, typename I>
__device__ __forceinline__ void store_slot(RowSlot<V, I>* slots, const I v, const RowSlot<V, I>& slot) {
    RowSlotBytes<V, I> sb;
    sb.slot = slot;
#pragma unroll
    for (int i = 0; i < (int)(sizeof(RowSlot<V, I>) / 16); ++i) reinterpret_cast<uint4*>(slots + v)[i] = sb.raw[i];
}

// Row v's proposals of this round (n = 2, records): targets j0, j1 (-1: none) and their
// entries a0, a1, from its mask and slot or from its record.
template <typename V, typename I>
__device__ __forceinline__ void load_proposals(const Proposals<V, I> P, const I v, const int absval, I& j0, I& j1,
                                               V& a0, V& a1) {
    if (P.mask) {
        const RowSlot<V, I> slot = load_slot(P.slots, v);
        if (slot.j[0] != (I)SLOT_LONG) {
            const unsigned int m = P.mask[v];
            j0 = j1 = (I)-1;
            a0 = a1 = V(0);
#pragma unroll
            for (int b = SLOT_ENTRIES - 1; b >= 0; --b) {  // the two lowest places set, in place order
                if ((m >> b) & 1u) {
                    j1 = j0;
                    a1 = a0;
                    j0 = slot.j[b];
                    a0 = slot.a[b];
                }
            }
            if (j1 >= 0) {  // best first, as scan_row keeps them
                const V w0 = absval ? (V)fabs(a0) : a0, w1 = absval ? (V)fabs(a1) : a1;
                if (better(w1, j1, w0, j0)) {
                    const I tj = j0;
                    const V ta = a0;
                    j0 = j1;
                    a0 = a1;
                    j1 = tj;
                    a1 = ta;
                }
            }
            return;
        }
    }
    load_pair(P.targets(v), j0, j1);
    load_pair(P.values(v), a0, a1);
}

// Whether row t, which proposed this round, proposed to v.
template <typename V, typename I>
__device__ __forceinline__ bool proposed_to(const Proposals<V, I> P, const I t, const I v) {
    if (P.mask) {
        const RowSlot<V, I> slot = load_slot(P.slots, t);
        if (slot.j[0] != (I)SLOT_LONG) {
            const unsigned int m = P.mask[t];
            bool hit = false;
#pragma unroll
            for (int b = 0; b < SLOT_ENTRIES; ++b) hit |= ((m >> b) & 1u) && slot.j[b] == v;
            return hit;
        }
    }
    I b0, b1;
    load_pair(P.targets(t), b0, b1);
    return b0 == v || b1 == v;
}

// Row v's n = 2 record (targets j0, j1; weights w0, w1), written whole in 16-byte pieces
// (its padding too), so that no sector of it is left partly written.
template <typename V, typename I>
__device__ __forceinline__ void store_record(const Proposals<V, I> P, const I v, const I j0, const I j1, const V w0,
                                             const V w1) {
    constexpr bool values_first = sizeof(V) >= sizeof(I);
    constexpr int big = values_first ? sizeof(V) : sizeof(I);
    union {
        uint4 raw[big / 4];
        unsigned char bytes[4 * big];
    } rec;
#pragma unroll
    for (int i = 0; i < big / 4; ++i) rec.raw[i] = make_uint4(0u, 0u, 0u, 0u);
    const V w[2] = {w0, w1};
    const I j[2] = {j0, j1};
    memcpy(rec.bytes + (values_first ? 0 : 2 * sizeof(I)), w, sizeof(w));
    memcpy(rec.bytes + (values_first ? 2 * sizeof(V) : 0), j, sizeof(j));
    uint4* dst = reinterpret_cast<uint4*>(values_first ? (void*)P.values(v) : (void*)P.targets(v));
#pragma unroll
    for (int i = 0; i < big / 4; ++i) dst[i] = rec.raw[i];
}

// Row v's proposals; confirm reads a weight only where a proposal is (the other slots hold 0).
template <typename V, typename I>
__device__ __forceinline__ void store_proposals(const I v, const int n, const int filled, const bool alive,
                                                const V* acc_w, const I* acc_j, const unsigned int neg,
                                                const Proposals<V, I> P) {
    if (n == 2) {
        const I j0 = filled > 0 ? acc_j[0] : alive ? (I)-1 : (I)DEAD, j1 = filled > 1 ? acc_j[1] : (I)-1;
        V w[2];
#pragma unroll
        for (int s = 0; s < 2; ++s) w[s] = s < filled ? ((neg >> s) & 1u ? -acc_w[s] : acc_w[s]) : V(0);
        if (P.record) {
            store_record(P, v, j0, j1, w[0], w[1]);
        } else {
            // both weights in one store, 0 where no proposal is: a warp then writes whole
            // sectors instead of a part of each where rows propose fewer than two
            store_pair(P.targets(v), j0, j1);
            store_pair(P.values(v), w[0], w[1]);
        }
        return;
    }
    for (int s = 0; s < n; ++s) {
        P.targets(v)[s] = s < filled ? acc_j[s] : (s == 0 && !alive ? (I)DEAD : (I)-1);
        if (s < filled) P.values(v)[s] = (neg >> s) & 1u ? -acc_w[s] : acc_w[s];
    }
}

// Row v's proposals at the end of its proposal (`held`: its count byte as the round began).
// With records, only a row that proposes stores one, and the count byte says which rows
// did (written only where a bit changes).
// `mask` >= 0: the row was read from its slot, and P.mask takes its proposals (the places
// it proposes to) in place of a record.
template <typename V, typename I>
__device__ __forceinline__ void finish_proposal(const I v, const int n, const int filled, const bool alive,
                                                const V* acc_w, const I* acc_j, const unsigned int neg,
                                                const Proposals<V, I> P, Count* count, const unsigned int held,
                                                const int mask = -1) {
    if (P.record) {
        const unsigned int now =
            (held & ~(PROPOSED_BIT | DEAD_BIT)) | (filled ? PROPOSED_BIT : 0u) | (alive ? 0u : DEAD_BIT);
        if (now != held) count[v] = (Count)now;
        if (!filled) return;
        if (P.mask && mask >= 0) {
            P.mask[v] = (unsigned char)mask;
            return;
        }
    }
    store_proposals(v, n, filled, alive, acc_w, acc_j, neg, P);
}

// The row loops below are shared by the one-step kernels and by open_rounds, which runs
// the later rounds in one cooperative launch; arrays written by a round (partners, count,
// prop, prop_w) are plain pointers there, so no load of them goes through the
// non-coherent read-only cache.
// Proposals of the rows r = r0, r0 + step, ... (row r, or rows[r] when listed). SLOTS: the
// rows' slots are written (first) or read (later rounds), where `slots` is not null;
// compiled without them, the first proposal keeps its registers (more resident blocks).
template <typename V, typename I, bool SLOTS>
__device__ __forceinline__ void propose_rows(const I r0, const I step, const I n_rows, const I* __restrict__ indptr,
                                             const I* __restrict__ indices, const V* __restrict__ data,
                                             const I* partners, Count* count, const Proposals<V, I> P,
                                             const int n, const unsigned int k, const unsigned int seed,
                                             const int charging, const unsigned long long threshold, const int absval,
                                             const int first, const int listed, const I* rows,
                                             const unsigned int* n_open, unsigned long long* check,
                                             unsigned long long& print, const int mirror, V* diag,
                                             RowSlot<V, I>* slots) {
    const I total = listed ? (I)*n_open : n_rows;
    for (I r = r0; r < total; r += step) {
        const I v = listed ? rows[r] : r;
        const unsigned int held = first ? 0u : count[v];
        const int c = (int)(held & COUNT_MASK);
        const int room = n - c;
        V acc_w[MAX_N];
        I acc_j[MAX_N];
        unsigned int neg = 0;
        V dv = V(0);
        bool alive = false;
        int filled = 0, mask = -1;
        if (room > 0) {
            RowSlot<V, I> slot;
            bool done = false;
            if (SLOTS && slots && !first) {  // the row from its slot, unless it is long
                slot = load_slot(slots, v);
                if (slot.j[0] != (I)SLOT_LONG) {
                    filled = scan_row(v, (I)0, (I)0, 1, indptr, indices, data, partners, count, n, c, room, k, seed,
                                      charging, threshold, absval, first, acc_w, acc_j, neg, dv, check, print, alive,
                                      mirror, &slot);
                    if (P.mask) mask = (int)slot_mask(slot, filled, acc_j);
                    done = true;
                }
            }
            if (!done) {
                const bool capture = SLOTS && slots && first;
                filled = scan_row(v, indptr[v], indptr[v + 1], 1, indptr, indices, data, partners, count, n, c, room,
                                  k, seed, charging, threshold, absval, first, acc_w, acc_j, neg, dv, check, print,
                                  alive, mirror, (const RowSlot<V, I>*)nullptr, capture ? &slot : nullptr);
                if (capture) store_slot(slots, v, slot);
            }
        }
        finish_proposal(v, n, filled, alive, acc_w, acc_j, neg, P, count, held, mask);
        if (diag) diag[v] = dv;
    }
}

// The verdict of a sample for the first proposal's `choose`: warp t tests the row
// t * n_rows / n_sample (a lane per entry: a chain of one binary search, not one per
// entry, before the proposal may start) for a nonzero off-diagonal entry without a mirror
// of equal magnitude (|A| - diag(A) is then unsymmetric). Rows spread over the matrix, not
// its first ones: a PDE matrix's first rows are boundary rows. A sample without fault
// proves nothing; the first proposal's check decides then. Launched on SAMPLE_BLOCKS
// blocks of SAMPLE_THREADS (kernels.factor.SAMPLE_ROWS rows at most), each storing its
// verdict in a byte after check[0..3], and block 0 zeroes check[0..2], which the first
// proposal then sums into: the flags need no memset of their own (sample_verdict).
#define SAMPLE_THREADS 128
#define SAMPLE_BLOCKS 1024

template <typename V, typename I>
__global__ void sample_check(const I n_rows, const I n_sample, const I* __restrict__ indptr,
                             const I* __restrict__ indices, const V* __restrict__ data,
                             unsigned long long* __restrict__ check) {
    const I t = (blockIdx.x * (I)blockDim.x + threadIdx.x) >> 5;
    bool fault = false;
    if (t < n_sample) {
        const I i = (I)((long long)t * n_rows / n_sample);
        for (I e = indptr[i] + (I)(threadIdx.x & 31); e < indptr[i + 1]; e += 32) {
            const I j = indices[e];
            const V w = (V)fabs(data[e]);
            if (j == i || w == V(0)) continue;
            const I m = mirror_position(indptr, indices, j, i, indptr[i + 1] - 1 - e);
            fault |= m < 0 || (V)fabs(data[m]) != w;
        }
    }
    fault = __syncthreads_or(fault);
    if (threadIdx.x == 0) {
        reinterpret_cast<unsigned char*>(check + 4)[blockIdx.x] = fault;
        if (blockIdx.x == 0) check[0] = check[1] = check[2] = 0ull;
    }
}

// Whether a block of sample_check found a fault, for a first proposal with `choose`
// (every thread of the block calls it); block 0 stores it in check[3] for the later
// kernels and the host.
__device__ __forceinline__ int sample_verdict(unsigned long long* check) {
    const uint4* verdicts = reinterpret_cast<const uint4*>(check + 4);
    unsigned int any = 0;
    for (int b = threadIdx.x; b < SAMPLE_BLOCKS / 16; b += blockDim.x) {
        const uint4 v = verdicts[b];
        any |= v.x | v.y | v.z | v.w;
    }
    const int fault = __syncthreads_or(any != 0u);
    if (blockIdx.x == 0 && threadIdx.x == 0) check[3] = (unsigned long long)fault;
    return fault;
}

template <typename V, typename I>
__global__ void propose(const I n_rows, const I* __restrict__ indptr, const I* __restrict__ indices,
                        const V* __restrict__ data, const I* __restrict__ partners,
                        Count* __restrict__ count, I* __restrict__ prop, V* __restrict__ prop_w,
                        const int n, const unsigned int k, const unsigned int seed, const int charging,
                        const unsigned long long threshold, const int absval, const int first, const int listed,
                        const I* __restrict__ rows, const unsigned int* __restrict__ n_open,
                        unsigned long long* __restrict__ check, int mirror, const int choose, V* __restrict__ diag) {
    if (choose) mirror = sample_verdict(check);  // no fault in the sample: check A, else propose on A' + A'^T
    unsigned long long print = 0;
    propose_rows<V, I, false>(blockIdx.x * (I)blockDim.x + threadIdx.x, (I)gridDim.x * blockDim.x, n_rows, indptr,
                              indices, data, partners, count, Proposals<V, I>{prop, prop_w, n, n, false}, n, k, seed,
                              charging, threshold, absval, first, listed, rows, n_open, check, print, mirror, diag,
                              (RowSlot<V, I>*)nullptr);
    add_print(check, print);
}

// The first proposal (round 0 over all rows, none listed, nobody partnered yet) that also
// writes the rows' slots for the later rounds; only its own arguments, since every
// argument costs the host time before the device's first long kernel (see
// kernels.nvrtc.kernel_int).
template <typename V, typename I>
__global__ void propose_slotted(const I n_rows, const I* __restrict__ indptr, const I* __restrict__ indices,
                                const V* __restrict__ data, I* __restrict__ prop, V* __restrict__ prop_w,
                                const int n, const unsigned int seed, const int charging,
                                const unsigned long long threshold, const int absval,
                                unsigned long long* __restrict__ check, int mirror, const int choose,
                                V* __restrict__ diag, RowSlot<V, I>* __restrict__ slots) {
    if (choose) mirror = sample_verdict(check);
    unsigned long long print = 0;
    propose_rows<V, I, true>(blockIdx.x * (I)blockDim.x + threadIdx.x, (I)gridDim.x * blockDim.x, n_rows, indptr,
                             indices, data, (const I*)nullptr, (Count*)nullptr,
                             Proposals<V, I>{prop, prop_w, n, n, false},
                             n, 0u, seed, charging, threshold, absval, 1, 0, (const I*)nullptr,
                             (const unsigned int*)nullptr, check, print, mirror, diag, slots);
    add_print(check, print);
}

// Keeps the mutual proposals of the rows r = r0, r0 + step, ... (r0: the thread's index in
// the grid; the loop is block-uniform). With `next`, the rows still open and alive are
// appended to the list next[0 .. *n_next). A stored proposal is the entry itself where its
// weight is its absolute value (`absval`; store_proposals): the weight kept is then that
// value's, and its sign goes to bit SIGN_BIT + c of count[v] (partner c): with the first
// proposal's diagonal, A's entries to the partners without a pass over A (valid where the
// factor is on A itself, not on A' + A'^T), at no cost to the rounds, which load and store
// count[v] anyway (a record of a row's entries, or a byte of signs per row or per partner,
// cost the rounds more).
template <typename V, typename I>
__device__ __forceinline__ void confirm_rows(const I r0, const I step, const I n_rows, const Proposals<V, I> P,
                                             I* partners, V* weights, Count* count, const int n,
                                             unsigned long long* proposed, const int count_proposals,
                                             const int first, const int listed, const I* rows,
                                             const unsigned int* n_open, const int absval, I* next = nullptr,
                                             unsigned int* n_next = nullptr) {
    const I total = listed ? (I)*n_open : n_rows;
    for (I b = r0 - threadIdx.x; b < total; b += step) {
        const I r = b + threadIdx.x;
        const I v = r < total ? (listed ? rows[r] : r) : (I)-1;
        bool keep = false, proposer = false;
        if (v >= 0) {
            const unsigned int held = first ? 0u : count[v];
            int c = (int)(held & COUNT_MASK);
            unsigned int signs = held & ~(unsigned int)COUNT_MASK;
            int made = 0;
            // every proposal and every proposal back loaded before any is used (unrolled)
            I mine[MAX_N];
            V mine_a[2] = {V(0), V(0)};  // with records: the entries proposed to
            bool mutual[MAX_N];
            if (n == 2) {
                // with records, only the rows whose count byte says so proposed this round
                mine[0] = mine[1] = mine[2] = mine[3] = (I)-1;
                if (!P.record) load_pair(P.targets(v), mine[0], mine[1]);
                else if (held & PROPOSED_BIT) load_proposals(P, v, absval, mine[0], mine[1], mine_a[0], mine_a[1]);
#pragma unroll
                for (int s = 0; s < 2; ++s) {
                    mutual[s] = false;
                    if (mine[s] >= 0 && (!P.record || (count[mine[s]] & PROPOSED_BIT)))
                        mutual[s] = proposed_to(P, mine[s], v);
                }
                mutual[2] = mutual[3] = false;
            } else {
#pragma unroll
                for (int s = 0; s < MAX_N; ++s) mine[s] = s < n ? P.targets(v)[s] : (I)-1;
#pragma unroll
                for (int s = 0; s < MAX_N; ++s) {
                    mutual[s] = false;
#pragma unroll
                    for (int t = 0; t < MAX_N; ++t)
                        mutual[s] |= mine[s] >= 0 && t < n && P.targets(mine[s])[t] == v;
                }
            }
            if (first && n == 2) {  // every slot, in one store per array
                I kept0 = -1, kept1 = -1;
                V kept0_w = V(0), kept1_w = V(0);
#pragma unroll
                for (int s = 0; s < 2; ++s) {
                    if (mine[s] < 0) continue;
                    ++made;
                    if (!mutual[s]) continue;
                    const V w = P.values(v)[s];
                    if (c++ == 0) {
                        kept0 = mine[s];
                        kept0_w = w;
                    } else {
                        kept1 = mine[s];
                        kept1_w = w;
                    }
                }
                store_pair(partners + 2 * (size_t)v, kept0, kept1);
                store_pair(weights + 2 * (size_t)v, absval ? (V)fabs(kept0_w) : kept0_w,
                           absval ? (V)fabs(kept1_w) : kept1_w);
                signs = ((unsigned int)(kept0_w < V(0)) << SIGN_BIT) |
                        ((unsigned int)(kept1_w < V(0)) << (SIGN_BIT + 1));
            } else {
#pragma unroll
                for (int s = 0; s < MAX_N; ++s) {
                    const I w = mine[s];
                    if (w < 0) continue;
                    ++made;
                    if (mutual[s]) {
                        const V a = n == 2 && P.record ? mine_a[s] : P.values(v)[s];
                        partners[(size_t)v * n + c] = w;
                        weights[(size_t)v * n + c] = absval ? (V)fabs(a) : a;
                        signs |= (unsigned int)(a < V(0)) << (SIGN_BIT + c);
                        ++c;
                    }
                }
                if (first) {
                    for (int s = c; s < n; ++s) {
                        partners[(size_t)v * n + s] = (I)-1;
                        weights[(size_t)v * n + s] = V(0);
                    }
                }
            }
            if (first || c != (int)(held & COUNT_MASK)) count[v] = (Count)(c | signs);
            proposer = made > 0;
            keep = c < n && (P.record ? !(held & DEAD_BIT) : P.targets(v)[0] != (I)DEAD);
        }
        // a flag, not a count: one atomic per proposing row (millions on one address)
        // serializes; racing plain stores of the same value are benign. Tested once per
        // block, not per warp: every warp's load of that one address queues at one L2 slice
        // (and the flag's line must not be the list counter's).
        if (count_proposals && __syncthreads_or(proposer) && threadIdx.x == 0 &&
            *(volatile unsigned long long*)proposed == 0ull)
            *proposed = 1ull;
        if (next) {  // one call site: every lane of a warp must reach the same ballot
            const unsigned int slot = block_append(keep, n_next);
            if (keep) next[slot] = v;
        }
    }
}

template <typename V, typename I>
__global__ void confirm(const I n_rows, I* __restrict__ prop, V* __restrict__ prop_w, I* __restrict__ partners,
                        V* __restrict__ weights, Count* __restrict__ count, const int n,
                        unsigned long long* __restrict__ proposed, const int count_proposals, const int first,
                        const int listed, const I* __restrict__ rows,
                        const unsigned int* __restrict__ n_open, const unsigned long long* __restrict__ check,
                        I* __restrict__ next, unsigned int* __restrict__ n_next, const int absval) {
    if (check_failed(check)) return;
    confirm_rows<V, I>(blockIdx.x * (I)blockDim.x + threadIdx.x, (I)gridDim.x * blockDim.x, n_rows,
                       Proposals<V, I>{prop, prop_w, n, n, false}, partners, weights, count, n, proposed,
                       count_proposals, first, listed, rows, n_open, absval, next, n_next);
}

// The tests of check_entry in a pass of their own (weights_symmetric; the factor fuses
// them into its first proposal).
template <typename V, typename I>
__global__ void sym_check(const I n_rows, const I* __restrict__ indptr, const I* __restrict__ indices,
                          const V* __restrict__ data, unsigned long long* __restrict__ check) {
    unsigned long long print = 0;
    for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < n_rows; i += (I)gridDim.x * blockDim.x) {
        const I end = indptr[i + 1];
        for (I e = indptr[i]; e < end; ++e)
            check_entry(i, indices[e], data[e], check, print);
    }
    add_print(check, print);
}

// Weight graph A' + A'^T on the pattern of A, for structurally symmetric A (convection-
// diffusion and most PDE matrices): w[e] = mirror_entry's |a_ij| + |a_ji| for the entry
// e = (i, j), 0 on the diagonal; check[1] = 1 when a nonzero entry has no mirror (the
// weight graph then has entries outside A's pattern), check[0] = 1 at a non-finite entry.
template <typename V, typename I>
__global__ void mirror_sum(const I n_rows, const I* __restrict__ indptr, const I* __restrict__ indices,
                           const V* __restrict__ data, V* __restrict__ w, unsigned long long* __restrict__ check) {
    for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < n_rows; i += (I)gridDim.x * blockDim.x) {
        const I end = indptr[i + 1];
        for (I e = indptr[i]; e < end; ++e)
            w[e] = mirror_entry(i, indices[e], end - 1 - e, data[e], indptr, indices, data, check);
    }
}

// Warp-per-row proposals of the rows r = w0, w0 + n_warps, ... (lane: the thread's lane).
template <typename V, typename I>
__device__ __forceinline__ void propose_rows_warp(const I w0, const I n_warps, const int lane, const I n_rows,
                                                  const I* __restrict__ indptr, const I* __restrict__ indices,
                                                  const V* __restrict__ data, const I* partners, Count* count,
                                                  const Proposals<V, I> P, const int n, const unsigned int k,
                                                  const unsigned int seed, const int charging,
                                                  const unsigned long long threshold, const int absval,
                                                  const int first, const int listed, const I* rows,
                                                  const unsigned int* n_open, unsigned long long* check,
                                                  unsigned long long& print, const int mirror, V* diag) {
    const unsigned FULL = 0xffffffffu;
    const I total = listed ? (I)*n_open : n_rows;
    for (I r = w0; r < total; r += n_warps) {  // warp-uniform loop
        const I v = listed ? rows[r] : r;
        const unsigned int held = first ? 0u : count[v];
        const int c = (int)(held & COUNT_MASK);
        const int room = n - c;
        V acc_w[MAX_N];
        I acc_j[MAX_N];
        for (int s = 0; s < MAX_N; ++s) {
            acc_w[s] = V(0);
            acc_j[s] = (I)-1;
        }
        int filled = 0;
        unsigned int neg = 0;
        V dv = V(0);
        bool alive = false;
        if (room > 0) {  // warp-uniform branch
            filled = scan_row(v, indptr[v] + lane, indptr[v + 1], 32, indptr, indices, data, partners, count, n, c,
                              room, k, seed, charging, threshold, absval, first, acc_w, acc_j, neg, dv, check, print,
                              alive, mirror);
            alive = __any_sync(FULL, alive);
            for (int off = 16; off > 0; off >>= 1) dv += __shfl_xor_sync(FULL, dv, off);  // one lane's, or 0
            for (int off = 16; off > 0; off >>= 1) {
                V ow[MAX_N];
                I oj[MAX_N];
                const int of = __shfl_xor_sync(FULL, filled, off);
                const unsigned int oneg = __shfl_xor_sync(FULL, neg, off);
                unsigned int mneg = 0;
                for (int s = 0; s < MAX_N; ++s) {
                    ow[s] = __shfl_xor_sync(FULL, acc_w[s], off);
                    oj[s] = __shfl_xor_sync(FULL, acc_j[s], off);
                }
                V mw[MAX_N];
                I mj[MAX_N];
                int ia = 0, ib = 0, t = 0;
                for (; t < room; ++t) {
                    bool take_a;
                    if (ia < filled && ib < of) take_a = better(acc_w[ia], acc_j[ia], ow[ib], oj[ib]);
                    else if (ia < filled) take_a = true;
                    else if (ib < of) take_a = false;
                    else break;
                    if (take_a) {
                        mw[t] = acc_w[ia];
                        mj[t] = acc_j[ia];
                        mneg |= ((neg >> ia) & 1u) << t;
                        ++ia;
                    } else {
                        mw[t] = ow[ib];
                        mj[t] = oj[ib];
                        mneg |= ((oneg >> ib) & 1u) << t;
                        ++ib;
                    }
                }
                filled = t;
                neg = mneg;
                for (int s = 0; s < MAX_N; ++s) {
                    acc_w[s] = s < t ? mw[s] : V(0);
                    acc_j[s] = s < t ? mj[s] : (I)-1;
                }
            }
        }
        if (lane == 0) {
            finish_proposal(v, n, filled, alive, acc_w, acc_j, neg, P, count, held);
            if (diag) diag[v] = dv;
        }
    }
}

template <typename V, typename I>
__global__ void propose_warp(const I n_rows, const I* __restrict__ indptr, const I* __restrict__ indices,
                             const V* __restrict__ data, const I* __restrict__ partners,
                             Count* __restrict__ count, I* __restrict__ prop, V* __restrict__ prop_w,
                             const int n, const unsigned int k, const unsigned int seed, const int charging,
                             const unsigned long long threshold, const int absval, const int first,
                             const int listed, const I* __restrict__ rows, const unsigned int* __restrict__ n_open,
                             unsigned long long* __restrict__ check, int mirror,
                             const int choose, V* __restrict__ diag) {
    if (choose) mirror = sample_verdict(check);
    unsigned long long print = 0;
    propose_rows_warp<V, I>((blockIdx.x * (I)blockDim.x + threadIdx.x) >> 5, ((I)gridDim.x * blockDim.x) >> 5,
                      (int)(threadIdx.x & 31), n_rows, indptr, indices, data, partners, count,
                      Proposals<V, I>{prop, prop_w, n, n, false}, n, k, seed, charging, threshold, absval, first,
                      listed, rows, n_open, check, print, mirror, diag);
    add_print(check, print);
}

// Rounds 1 .. iterations - 1 over the open rows in one cooperative launch (grid-wide
// barriers between proposals and confirmations): launched one kernel per step, the short
// rounds cost more host time than device time. Round k reads the list rows[(k - 1) % 2]
// of n_open[k - 1] rows and appends those still open and alive to rows[k % 2], counted by
// n_open[k] (rows: 2 x n_rows; n_open zeroed; the lists shrink round by round). Stops after an uncharged round without proposals, as the host loop does.
// With `check`, the rounds propose on the weights the first proposal chose (check[3]).
template <typename V, typename I>
__global__ void open_rounds(const I n_rows, const I* __restrict__ indptr, const I* __restrict__ indices,
                            const V* __restrict__ data, I* partners, V* weights, Count* count, I* prop, V* prop_w,
                            const int ps, const int ws, const int n, const int iterations, const int m,
                            const int k_m, const unsigned int seed, const unsigned long long threshold,
                            const int absval, const int warp,
                            I* rows, unsigned int* n_open, unsigned long long* proposed,
                            int mirror, const unsigned long long* __restrict__ check, RowSlot<V, I>* slots,
                            unsigned char* masks) {
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    if (check && check[3]) mirror = 1;  // the first proposal chose A' + A'^T (`choose`)
    if (mirror) slots = nullptr;  // they hold A's entries, not the weights of A' + A'^T
    const I tid = blockIdx.x * (I)blockDim.x + threadIdx.x, step = (I)gridDim.x * blockDim.x;
    unsigned long long no_print = 0;  // the later rounds check nothing
    // the rows' proposal masks where they are read from slots (n = 2; Proposals)
    const Proposals<V, I> P = {prop, prop_w, ps, ws, n == 2, slots && n == 2 ? masks : nullptr, slots};
    for (int k = 1; k < iterations; ++k) {
        const int charging = (k % m) != k_m;
        const I* listed = rows + (size_t)((k - 1) & 1) * n_rows;
        if (warp)
            propose_rows_warp<V, I>(tid >> 5, step >> 5, (int)(threadIdx.x & 31), n_rows, indptr, indices, data,
                                    partners, count, P, n, (unsigned int)k, seed, charging, threshold,
                                    absval, 0, 1, listed, n_open + k - 1, nullptr, no_print, mirror, (V*)nullptr);
        else
            propose_rows<V, I, true>(tid, step, n_rows, indptr, indices, data, partners, count, P, n,
                               (unsigned int)k, seed, charging, threshold, absval, 0, 1, listed, n_open + k - 1,
                               nullptr, no_print, mirror, (V*)nullptr, slots);
        grid.sync();
        // the last round lists no rows for a next one, and no barrier follows it
        const bool last = k + 1 == iterations;
        confirm_rows<V, I>(tid, step, n_rows, P, partners, weights, count, n, proposed + k, !charging, 0, 1,
                           listed, n_open + k - 1, absval, last ? nullptr : rows + (size_t)(k & 1) * n_rows,
                           n_open + k);
        if (last) break;
        grid.sync();
        if (!charging && *(volatile unsigned long long*)(proposed + k) == 0ull) break;
    }
}
