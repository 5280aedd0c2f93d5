// Algebraic multigrid: the kernels of the cycle (residuals, a fused Jacobi sweep, the
// aggregation's fused residual and restriction, prolongation, the dense coarse solve) and
// of the pairwise set-up (strength of connection, the sparse products of the Galerkin
// operators). Every kernel reads its scalars from
// device memory or from its arguments and never waits for the host, so that a whole cycle
// can be captured into a CUDA graph. The CPU twins are in kernels/amg/_cpu.py.
//
// `lanes` threads (a power of two up to 32) share a row: they read its entries together
// and add their partial sums by shuffles, as kernels/cuda/spmv.cu does. No thread leaves
// before the shuffles, so that every lane of a warp takes part.
// templates: residual<V,I>, jacobi_sweep<V,I>, residual_restrict<V,I>, csr_spmv_add<V,I>, strength_weights<V,I>
// templates: dense_gemv<V>, ordered_product<V,I>, gathered_residual<V,I>, hash_product<V,I>, copy_rows<V,I>
// templates: line_colour_round<I>, line_chords<V,I>, strength_mirror<V,I>, pair_coarse_rows<V,I>

template <typename V>
__device__ __forceinline__ V lane_sum(V sum, const int lanes) {
    for (int offset = lanes / 2; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset, lanes);
    return sum;
}

// The partial sum of (A x)[row] of this lane (x == nullptr: x = 0, the sum is 0).
template <typename V, typename I>
__device__ __forceinline__ V row_product(const I row, const int lane, const int lanes, const I* __restrict__ indptr,
                                         const I* __restrict__ indices, const V* __restrict__ data,
                                         const V* __restrict__ x) {
    V sum = 0;
    if (x == nullptr) return sum;
    const I end = indptr[row + 1];
    for (I e = indptr[row] + lane; e < end; e += lanes) sum += data[e] * x[indices[e]];
    return sum;
}

// The row of this lane group, the lane, and (A x)[row] added over the group's lanes (the
// sum is the row's in lane 0): the common part of the row kernels below.
template <typename V>
struct LaneRow {
    size_t row;
    int lane;
    bool inside;
    V sum;
};

template <typename V, typename I>
__device__ __forceinline__ LaneRow<V> lane_row_product(const I n_rows, const int lanes, const I* __restrict__ indptr,
                                                       const I* __restrict__ indices, const V* __restrict__ data,
                                                       const V* __restrict__ x) {
    const size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    LaneRow<V> out;
    out.lane = (int)(threadIdx.x & (unsigned)(lanes - 1));
    out.row = tid / (size_t)lanes;
    out.inside = out.row < (size_t)n_rows;
    const V sum = out.inside ? row_product(I(out.row), out.lane, lanes, indptr, indices, data, x) : V(0);
    out.sum = lane_sum(sum, lanes);
    return out;
}

// r = b - A x.
template <typename V, typename I>
__global__ void residual(const I n_rows, const int lanes, const I* __restrict__ indptr, const I* __restrict__ indices,
                         const V* __restrict__ data, const V* __restrict__ x, const V* __restrict__ b,
                         V* __restrict__ r) {
    const LaneRow<V> p = lane_row_product(n_rows, lanes, indptr, indices, data, x);
    if (p.lane == 0 && p.inside) r[p.row] = b[p.row] - p.sum;
}

// One damped Jacobi sweep into a new vector: out = x + omega[0] * dinv * (b - A x).
template <typename V, typename I>
__global__ void jacobi_sweep(const I n_rows, const int lanes, const I* __restrict__ indptr,
                             const I* __restrict__ indices, const V* __restrict__ data, const V* __restrict__ dinv,
                             const V* __restrict__ omega, const V* __restrict__ x, const V* __restrict__ b,
                             V* __restrict__ out) {
    const LaneRow<V> p = lane_row_product(n_rows, lanes, indptr, indices, data, x);
    if (p.lane == 0 && p.inside) out[p.row] = x[p.row] + omega[0] * dinv[p.row] * (b[p.row] - p.sum);
}

// The restriction of the residual by aggregates, fused: bc[c] = sum over the members m of
// aggregate c of (b - A x)[m]. `members` holds `width` entries per aggregate (-1: none),
// summed in that order (the CPU twin's). x == nullptr: x = 0.
template <typename V, typename I>
__global__ void residual_restrict(const I n_coarse, const int width, const int lanes, const I* __restrict__ members,
                                  const I* __restrict__ indptr, const I* __restrict__ indices,
                                  const V* __restrict__ data, const V* __restrict__ x, const V* __restrict__ b,
                                  V* __restrict__ bc) {
    const size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const int lane = (int)(threadIdx.x & (unsigned)(lanes - 1));
    const size_t c = tid / (size_t)lanes;
    const bool inside = c < (size_t)n_coarse;
    V total = 0;
    for (int k = 0; k < width; ++k) {
        const I m = inside ? members[c * width + k] : I(-1);
        V sum = m >= 0 ? row_product(m, lane, lanes, indptr, indices, data, x) : V(0);
        sum = lane_sum(sum, lanes);
        if (m >= 0) total += b[m] - sum;  // lane 0's sum is the row's
    }
    if (lane == 0 && inside) bc[c] = total;
}

// The residual of one colour of multicolour line Gauss-Seidel (kernels/amg/line_gs.py):
// r[k] = b[order[k]] - (A x)[order[k]] for the colour's n_rows rows, whose entries are row k
// of a row-permuted copy of A (indptr: the colour's slice of its offsets, absolute into
// indices and data). The CPU twin is the first loop of line_gs._sweep_cpu.
template <typename V, typename I>
__global__ void gathered_residual(const I n_rows, const int lanes, const I* __restrict__ indptr,
                                  const I* __restrict__ indices, const V* __restrict__ data,
                                  const I* __restrict__ order, const V* __restrict__ x, const V* __restrict__ b,
                                  V* __restrict__ r) {
    const LaneRow<V> p = lane_row_product(n_rows, lanes, indptr, indices, data, x);
    if (p.lane == 0 && p.inside) r[p.row] = b[order[p.row]] - p.sum;
}

// The prolongation of a correction: x += P e (P in CSR).
template <typename V, typename I>
__global__ void csr_spmv_add(const I n_rows, const int lanes, const I* __restrict__ indptr,
                             const I* __restrict__ indices, const V* __restrict__ data, const V* __restrict__ e,
                             V* __restrict__ x) {
    const LaneRow<V> p = lane_row_product(n_rows, lanes, indptr, indices, data, e);
    if (p.lane == 0 && p.inside) x[p.row] += p.sum;
}

// x = M b for a dense row-major n x n matrix M (the coarse level's inverse): a warp per row.
template <typename V>
__global__ void dense_gemv(const int n, const V* __restrict__ M, const V* __restrict__ b, V* __restrict__ x) {
    const size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const int lane = (int)(threadIdx.x & 31u);
    const size_t row = tid / 32;
    V sum = 0;
    if (row < (size_t)n) {
        const V* m = M + row * (size_t)n;
        for (int k = lane; k < n; k += 32) sum += m[k] * b[k];
    }
    sum = lane_sum(sum, 32);
    if (lane == 0 && row < (size_t)n) x[row] = sum;
}

// Strength of connection of the pairwise aggregation, thread per row: the scaled coupling
// s_ij = |a_ij| / sqrt(|a_ii a_jj|) (|a_ij| where a_ii a_jj = 0) of each off-diagonal
// entry, kept in w where s_ij >= theta * max_k s_ik and s_ij > 0, else 0 (the diagonal
// too). The twin of kernels.amg._cpu.strength_weights, with the same operations in the
// same order (no fused multiply-add is possible in them), so both give the same weights.
template <typename V>
__device__ __forceinline__ V scaled_coupling(const V a, const V di, const V dj) {
    const V dd = di * dj;
    const V mag = a < V(0) ? -a : a;
    return dd == V(0) ? mag : mag / sqrt(dd < V(0) ? -dd : dd);
}

template <typename V, typename I>
__global__ void strength_weights(const I n_rows, const I* __restrict__ indptr, const I* __restrict__ indices,
                                 const V* __restrict__ data, const V* __restrict__ diag, const V theta,
                                 V* __restrict__ w) {
    const size_t row = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (row >= (size_t)n_rows) return;
    const I begin = indptr[row], end = indptr[row + 1];
    const V di = diag[row];
    V largest = 0;
    for (I e = begin; e < end; ++e) {
        const I j = indices[e];
        if ((size_t)j == row) continue;
        const V s = scaled_coupling<V>(data[e], di, diag[j]);
        largest = s > largest ? s : largest;
    }
    const V bound = theta * largest;
    for (I e = begin; e < end; ++e) {
        const I j = indices[e];
        V s = 0;
        if ((size_t)j != row) {
            s = scaled_coupling<V>(data[e], di, diag[j]);
            s = (s >= bound && s > V(0)) ? s : V(0);
        }
        w[e] = s;
    }
}

// The sparse product C = A B of CSR matrices with sorted indices, computed in the order of
// the CPU twin (kernels.amg._cpu.ordered_product), so that both give the same bits: a
// thread per row of C visits its columns in increasing order; each entry is the sum over
// the entries a_ik of the row of A, in their order, of a_ik b_kj, accumulated from 0 with
// separately rounded products and additions (the intrinsics are never contracted into a
// fused multiply-add). Entries that sum to exactly 0 are left out, as SciPy's product
// does. Two passes: with `counts`, the number of entries of each row is written there;
// without, the entries are written from Cp[row]. The next column is the least column
// above the current one in the rows of B that the row of A selects, found by binary
// search in each (no per-thread state, whatever the row lengths).
template <typename V>
__device__ __forceinline__ V mul_rn(const V a, const V b);
template <>
__device__ __forceinline__ float mul_rn<float>(const float a, const float b) { return __fmul_rn(a, b); }
template <>
__device__ __forceinline__ double mul_rn<double>(const double a, const double b) { return __dmul_rn(a, b); }
template <typename V>
__device__ __forceinline__ V add_rn(const V a, const V b);
template <>
__device__ __forceinline__ float add_rn<float>(const float a, const float b) { return __fadd_rn(a, b); }
template <>
__device__ __forceinline__ double add_rn<double>(const double a, const double b) { return __dadd_rn(a, b); }

// The first position in [lo, hi) of the sorted `cols` whose column is at least `key`.
template <typename I>
__device__ __forceinline__ I first_at_least(const I* __restrict__ cols, I lo, I hi, const I key) {
    while (lo < hi) {
        const I mid = lo + (hi - lo) / 2;
        if (cols[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

template <typename V, typename I>
__global__ void ordered_product(const I n_rows, const I n_cols, const I* __restrict__ Ap, const I* __restrict__ Aj,
                                const V* __restrict__ Ax, const I* __restrict__ Bp, const I* __restrict__ Bj,
                                const V* __restrict__ Bx, I* __restrict__ counts, const I* __restrict__ Cp,
                                I* __restrict__ Cj, V* __restrict__ Cx) {
    const size_t row = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (row >= (size_t)n_rows) return;
    const I begin = Ap[row], end = Ap[row + 1];
    I next = n_cols;  // n_cols: no column left
    for (I e = begin; e < end; ++e) {
        const I k = Aj[e];
        if (Bp[k] < Bp[k + 1] && Bj[Bp[k]] < next) next = Bj[Bp[k]];
    }
    const I out = counts == nullptr ? Cp[row] : I(0);
    I written = 0;
    while (next < n_cols) {
        const I j = next;
        next = n_cols;
        V sum = V(0);
        for (I e = begin; e < end; ++e) {
            const I k = Aj[e];
            const I stop = Bp[k + 1];
            I pos = first_at_least(Bj, Bp[k], stop, j);
            if (pos < stop && Bj[pos] == j) {
                sum = add_rn(sum, mul_rn(Ax[e], Bx[pos]));
                ++pos;
            }
            if (pos < stop && Bj[pos] < next) next = Bj[pos];
        }
        if (sum != V(0)) {
            if (counts == nullptr) {
                Cj[out + written] = j;
                Cx[out + written] = sum;
            }
            ++written;
        }
    }
    if (counts != nullptr) counts[row] = written;
}

// The same product, in the same order of each entry's additions, with a group of `group`
// lanes (a power of two up to 32) per row of C and the row's entries accumulated in a
// table of `slots` (a power of two) in shared memory, keyed by column (open addressing,
// linear probing): the group takes the entries a_ik of the row of A one after the other,
// its lanes insert the products a_ik b_kj of the row k of B together (their columns are
// distinct, so no two lanes add into one entry) and wait for each other before the next
// a_ik, so that every entry receives its terms in the order of the row of A, each added
// with a separately rounded operation to a sum that starts from 0: the bits of
// `ordered_product`, with one read of each product's operands instead of a binary search
// per column. The nonzero entries are then moved to the front of the table and each is
// written at its rank by column, from Tp[row] of Tj, Tx; counts[row] is their number, or
// -1 where the row has more columns than the table holds (the caller forms those rows
// otherwise). Dynamic shared memory: (blockDim.x / group) * slots * (sizeof(V) + sizeof(I))
// bytes.
__device__ __forceinline__ int cas_key(int* address, const int expected, const int value) {
    return atomicCAS(address, expected, value);
}
__device__ __forceinline__ long long cas_key(long long* address, const long long expected, const long long value) {
    return (long long)atomicCAS((unsigned long long*)address, (unsigned long long)expected, (unsigned long long)value);
}

template <typename V, typename I>
__global__ void hash_product(const I n_rows, const int group, const int slots, const I* __restrict__ Ap,
                             const I* __restrict__ Aj, const V* __restrict__ Ax, const I* __restrict__ Bp,
                             const I* __restrict__ Bj, const V* __restrict__ Bx, const long long* __restrict__ Tp,
                             I* __restrict__ counts, I* __restrict__ Tj, V* __restrict__ Tx) {
    extern __shared__ unsigned char shared[];
    const int groups = blockDim.x / group;
    const int gid = threadIdx.x / group, lane = threadIdx.x % group;
    V* vals = reinterpret_cast<V*>(shared) + (size_t)gid * slots;
    I* keys = reinterpret_cast<I*>(reinterpret_cast<V*>(shared) + (size_t)groups * slots) + (size_t)gid * slots;
    const int first_lane = (threadIdx.x & 31) & ~(group - 1);
    const unsigned mask = group == 32 ? 0xffffffffu : (((1u << group) - 1u) << first_lane);
    const size_t row = blockIdx.x * (size_t)groups + gid;
    if (row >= (size_t)n_rows) return;  // the whole group leaves together
    for (int s = lane; s < slots; s += group) {
        keys[s] = I(-1);
        vals[s] = V(0);
    }
    __syncwarp(mask);
    const unsigned wrap = (unsigned)slots - 1u;
    bool overflow = false;
    const I end = Ap[row + 1];
    for (I e = Ap[row]; e < end; ++e) {
        const I k = Aj[e];
        const V a = Ax[e];
        const I stop = Bp[k + 1];
        for (I f = Bp[k] + lane; f < stop; f += group) {
            const I j = Bj[f];
            const V p = mul_rn(a, Bx[f]);
            unsigned h = ((unsigned)j * 2654435761u) & wrap;
            int probes = 0;
            I seen;
            while ((seen = cas_key(&keys[h], I(-1), j)) != I(-1) && seen != j && ++probes < slots) h = (h + 1u) & wrap;
            if (probes < slots) vals[h] = add_rn(vals[h], p);
            else overflow = true;
        }
        __syncwarp(mask);
    }
    if (__any_sync(mask, overflow)) {
        if (lane == 0) counts[row] = I(-1);
        return;
    }
    // the nonzero entries to the front, in slot order (every lane reads its slot before the
    // ballot, and writes only to slots already read)
    int m = 0;
    for (int base = 0; base < slots; base += group) {
        const int s = base + lane;
        const I key = s < slots ? keys[s] : I(-1);
        const V val = s < slots ? vals[s] : V(0);
        const bool keep = key != I(-1) && val != V(0);
        const unsigned ballot = (__ballot_sync(mask, keep) & mask) >> first_lane;
        if (keep) {
            const int at = m + __popc(ballot & ((1u << lane) - 1u));
            keys[at] = key;
            vals[at] = val;
        }
        m += __popc(ballot);
        __syncwarp(mask);
    }
    const long long out = Tp[row];
    for (int t = lane; t < m; t += group) {
        const I key = keys[t];
        int rank = 0;
        for (int q = 0; q < m; ++q) rank += keys[q] < key;
        Tj[out + rank] = key;
        Tx[out + rank] = vals[t];
    }
    if (lane == 0) counts[row] = I(m);
}

// The rows of a product formed in room of its own into their CSR arrays: row `rows[r]`
// (rows == nullptr: r) has Cp[row + 1] - Cp[row] entries from Sp[r] of Sj, Sx, copied from
// Cp[row] of Cj, Cx; rows whose skip[row] is negative (skip == nullptr: none) are left.
template <typename V, typename I>
__global__ void copy_rows(const I n, const int lanes, const I* __restrict__ rows, const I* __restrict__ skip,
                          const long long* __restrict__ Sp, const I* __restrict__ Sj, const V* __restrict__ Sx,
                          const I* __restrict__ Cp, I* __restrict__ Cj, V* __restrict__ Cx) {
    const size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const size_t r = tid / (size_t)lanes;
    if (r >= (size_t)n) return;
    const I row = rows == nullptr ? I(r) : rows[r];
    if (skip != nullptr && skip[row] < 0) return;
    const I begin = Cp[row], length = Cp[row + 1] - begin;
    const long long from = Sp[r];
    for (I t = (I)(tid % (size_t)lanes); t < length; t += lanes) {
        Cj[begin + t] = Sj[from + t];
        Cx[begin + t] = Sx[from + t];
    }
}

// The priority of a line in the Jones-Plassmann colouring of the line Gauss-Seidel smoother
// (kernels/amg/line_gs.py, line_priority): MurmurHash3's 32-bit finalizer of its index
// (hashing.cuh); a line precedes another of equal hash when its index is smaller.
#include "hashing.cuh"

#define LINE_COLOUR_WORDS 8  // colours 0..255 in a bit set of 32-bit words

// One round of the colouring, a warp per line not yet coloured: its lanes read the rows of
// the line (order[line_start[line] ...]) and their entries (and the transpose's, where
// t_indptr is given: an unsymmetric pattern); a coupled line that precedes this one and is
// not coloured yet makes it wait for a later round, else the line takes the least colour
// that no preceding coupled line has. As no two coupled lines are coloured in one round and
// a line's colour depends only on those of the lines that precede it, the colouring is that
// of first-fit over the lines in priority order (the CPU twin), whatever the timing of the
// rounds. `waiting` counts the lines left for later rounds; `overflow` is set when a line
// would need more than 256 colours (the caller colours on the host then).
template <typename I>
__global__ void line_colour_round(const I n_lines, const I* __restrict__ line_start, const I* __restrict__ order,
                                  const I* __restrict__ line_of, const I* __restrict__ indptr,
                                  const I* __restrict__ indices, const I* __restrict__ t_indptr,
                                  const I* __restrict__ t_indices, int* __restrict__ colour,
                                  unsigned* __restrict__ waiting, unsigned* __restrict__ overflow) {
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x & 31;
    if (warp >= (size_t)n_lines) return;  // the whole warp
    const I line = (I)warp;
    if (colour[line] >= 0) return;
    const unsigned mine = fmix32((unsigned)line);
    unsigned taken[LINE_COLOUR_WORDS];
    for (int w = 0; w < LINE_COLOUR_WORDS; ++w) taken[w] = 0u;
    bool wait = false, over = false;
    for (I pos = line_start[line] + lane; pos < line_start[line + 1] && !wait; pos += 32) {
        const I i = order[pos];
        for (int side = 0; side < 2 && !wait; ++side) {
            const I* ptr = side == 0 ? indptr : t_indptr;
            const I* idx = side == 0 ? indices : t_indices;
            if (ptr == nullptr) break;
            for (I e = ptr[i]; e < ptr[i + 1]; ++e) {
                const I other = line_of[idx[e]];
                if (other == line) continue;
                const int c = colour[other];
                if (c >= 0) {
                    if (c < 32 * LINE_COLOUR_WORDS) taken[c >> 5] |= 1u << (c & 31);
                    else over = true;
                } else {
                    const unsigned theirs = fmix32((unsigned)other);
                    if (theirs > mine || (theirs == mine && other < line)) {
                        wait = true;
                        break;
                    }
                }
            }
        }
    }
    if (__any_sync(0xffffffffu, wait)) {
        if (lane == 0) atomicAdd(waiting, 1u);
        return;
    }
    if (__any_sync(0xffffffffu, over)) {
        if (lane == 0) *overflow = 1u;
        return;
    }
    for (int w = 0; w < LINE_COLOUR_WORDS; ++w) {
        for (int offset = 16; offset > 0; offset /= 2) taken[w] |= __shfl_xor_sync(0xffffffffu, taken[w], offset);
    }
    if (lane == 0) {
        int c = 0;
        while (c < 32 * LINE_COLOUR_WORDS && (taken[c >> 5] >> (c & 31)) & 1u) ++c;
        if (c == 32 * LINE_COLOUR_WORDS) *overflow = 1u;
        else colour[line] = c;
    }
}

// The chords of the lines, a thread per row k of the colouring's order: the sum of |a_ij|
// over the entries of row i = order[k] to other rows of its own line that are not its
// forest partners (partners[2 i], partners[2 i + 1]; -1: none), in the row's order (the
// CPU twin's, line_gs._chords: the same bits).
template <typename V, typename I>
__global__ void line_chords(const I n, const I* __restrict__ order, const I* __restrict__ line_of,
                            const I* __restrict__ partners, const I* __restrict__ indptr, const I* __restrict__ indices,
                            const V* __restrict__ data, V* __restrict__ out) {
    const size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (k >= (size_t)n) return;
    const I i = order[k];
    const I own = line_of[i], p0 = partners[2 * (size_t)i], p1 = partners[2 * (size_t)i + 1];
    V total = V(0);
    for (I e = indptr[i]; e < indptr[i + 1]; ++e) {
        const I j = indices[e];
        if (j != i && line_of[j] == own && j != p0 && j != p1) total = add_rn(total, fabs(data[e]));
    }
    out[k] = total;
}

// The strong couplings made symmetric on the matrix's own pattern, a thread per row (the
// twin of kernels.amg._cpu.strength_mirror): out[e] = w_ij + w_ji for the off-diagonal
// entry e = (i, j), w_ji read at the mirror entry (j, i) found by binary search in row j;
// 0 on the diagonal. flags[0] is set where a nonzero w_ij has no mirror entry (the pattern
// is not symmetric: the caller sums W + W^T instead), flags[1] where w_ij != w_ji.
template <typename V, typename I>
__global__ void strength_mirror(const I n_rows, const I* __restrict__ indptr, const I* __restrict__ indices,
                                const V* __restrict__ w, V* __restrict__ out, unsigned* __restrict__ flags) {
    const size_t row = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (row >= (size_t)n_rows) return;
    bool unmirrored = false, unsymmetric = false;
    for (I e = indptr[row]; e < indptr[row + 1]; ++e) {
        const I j = indices[e];
        if ((size_t)j == row) {
            out[e] = V(0);
            continue;
        }
        const I stop = indptr[j + 1];
        const I f = first_at_least(indices, indptr[j], stop, (I)row);
        if (f < stop && (size_t)indices[f] == row) {
            unsymmetric |= w[e] != w[f];
            out[e] = add_rn(w[e], w[f]);
        } else {
            unmirrored |= w[e] != V(0);
            out[e] = w[e];
        }
    }
    if (unmirrored) flags[0] = 1u;
    if (unsymmetric) flags[1] = 1u;
}

// The rows of the pair Galerkin operator (kernels.amg.aggregation.pair_galerkin), a thread
// per coarse vertex c: its off-diagonal row from the contraction (Op, Oj, Ox: canonical,
// no diagonal) with the diagonal entry inserted in column order, written from Op[c] + c.
// The diagonal is, over the members m of c (members[2 c], members[2 c + 1]; -1: none),
// the sum of row m's entries inside the pair (its diagonal and the entry to its partner),
// accumulated in double from 0 in the row's order, the two members' sums added (the
// second 0 for a single vertex) and rounded to V once: the host's bincount and sum.
template <typename V, typename I>
__global__ void pair_coarse_rows(const I nc, const I* __restrict__ members, const I* __restrict__ coarse,
                                 const I* __restrict__ Ap, const I* __restrict__ Aj, const V* __restrict__ Ax,
                                 const I* __restrict__ Op, const I* __restrict__ Oj, const V* __restrict__ Ox,
                                 I* __restrict__ Cj, V* __restrict__ Cx) {
    const size_t c = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (c >= (size_t)nc) return;
    double own[2] = {0.0, 0.0};
    for (int k = 0; k < 2; ++k) {
        const I m = members[2 * c + k];
        if (m < 0) continue;
        double sum = 0.0;
        for (I e = Ap[m]; e < Ap[m + 1]; ++e)
            if ((size_t)coarse[Aj[e]] == c) sum = __dadd_rn(sum, (double)Ax[e]);
        own[k] = sum;
    }
    const V diagonal = (V)__dadd_rn(own[0], members[2 * c + 1] >= 0 ? own[1] : 0.0);
    I out = Op[c] + (I)c;
    bool placed = false;
    for (I e = Op[c]; e < Op[c + 1]; ++e) {
        if (!placed && (size_t)Oj[e] > c) {
            Cj[out] = (I)c;
            Cx[out++] = diagonal;
            placed = true;
        }
        Cj[out] = Oj[e];
        Cx[out++] = Ox[e];
    }
    if (!placed) {
        Cj[out] = (I)c;
        Cx[out] = diagonal;
    }
}
