// Weight graph of a sparse matrix: |A| without the diagonal and without zero entries.
// Two passes over CSR rows (count, then fill into offsets from an exclusive scan).
// Below: the contraction of matched pairs (the coarse graph of AlgTriBlock).
// templates: offdiag_abs_count<V,I>, offdiag_abs_fill<V,I>

template <typename V, typename I>
__global__ void offdiag_abs_count(const I n_rows, const I* __restrict__ indptr,
                                  const I* __restrict__ indices, const V* __restrict__ data,
                                  I* __restrict__ counts) {
    for (I row = blockIdx.x * (I)blockDim.x + threadIdx.x; row < n_rows;
         row += (I)gridDim.x * blockDim.x) {
        I c = 0;
        for (I k = indptr[row]; k < indptr[row + 1]; ++k)
            c += (indices[k] != row && data[k] != V(0));
        counts[row] = c;
    }
}

template <typename V, typename I>
__global__ void offdiag_abs_fill(const I n_rows, const I* __restrict__ indptr,
                                 const I* __restrict__ indices, const V* __restrict__ data,
                                 const I* __restrict__ out_indptr, I* __restrict__ out_indices,
                                 V* __restrict__ out_data) {
    for (I row = blockIdx.x * (I)blockDim.x + threadIdx.x; row < n_rows;
         row += (I)gridDim.x * blockDim.x) {
        I pos = out_indptr[row];
        for (I k = indptr[row]; k < indptr[row + 1]; ++k) {
            const V a = data[k];
            if (indices[k] != row && a != V(0)) {
                out_indices[pos] = indices[k];
                out_data[pos] = a < V(0) ? -a : a;
                ++pos;
            }
        }
    }
}

// Contraction of the matched pairs of a weight graph (AlgTriBlock's coarse graph), the
// twin of kernels.graph.contract._contract_pairs_cpu. The smaller vertex of a pair (or an unmatched vertex)
// represents it; `rank` is the inclusive scan of the representative flags, so coarse
// vertex c = rank[v] - 1 is numbered in the order of its smaller member.
// templates: contract_number<I>, contract_rows<V,I>, contract_compact<V,I>

template <typename I>
__global__ void contract_number(const I N, const I* __restrict__ indptr, const I* __restrict__ mate,
                                const I* __restrict__ rank, I* __restrict__ coarse, I* __restrict__ members,
                                I* __restrict__ bound) {
    for (I v = blockIdx.x * (I)blockDim.x + threadIdx.x; v < N; v += (I)gridDim.x * blockDim.x) {
        const I u = mate[v];
        if (u >= 0 && u < v) continue;  // the pair is numbered by its smaller member
        const I c = rank[v] - 1;
        coarse[v] = c;
        members[2 * (size_t)c] = v;
        members[2 * (size_t)c + 1] = u;
        I degree = indptr[v + 1] - indptr[v];
        if (u >= 0) {
            coarse[u] = c;
            degree += indptr[u + 1] - indptr[u];
        }
        bound[c] = degree;  // at most this many coarse neighbours
    }
}

// One thread per coarse row: the members' entries mapped to coarse columns, the row's own
// column dropped, repeats summed into the first occurrence (member 0's entries first, in
// CSR order: the CPU twin's summation order), then sorted by column, and written at
// scratch_ptr[c] (the exclusive scan of `bound`); counts[c] = entries kept. A row of at
// most REG_ROW candidates is built in registers (below), one of at most LOCAL_ROW in the
// thread's local arrays (interleaved across the warp, so the searches and shifts of
// neighbouring threads coalesce), a longer one in place in the scratch.
constexpr int LOCAL_ROW = 64;

// The weight of entry e: the value, or with `absval` (the weight graph read off a matrix
// A, as the factor's from_matrix) its absolute value.
template <typename V, typename I>
__device__ __forceinline__ V entry_weight(const V* __restrict__ data, const I e, const int absval) {
    const V a = data[e];
    return absval && a < V(0) ? -a : a;
}

// add(j, e) for every entry e of coarse row c's members whose coarse column j is not c (with
// `absval`, nonzero ones only: explicit zeros are no edges): the entries of member 0, then
// of member 1, each in CSR order (the builders' summation order). The builders load the
// weight themselves (with it loaded here, contract_pairs on ANISO2 float32 ran 2.55-2.75 ms
// against 2.42-2.45, H200, four processes each).
template <typename V, typename I, typename Add>
__device__ __forceinline__ void coarse_candidates(const I c, const I* __restrict__ indptr,
                                                  const I* __restrict__ indices, const V* __restrict__ data,
                                                  const I* __restrict__ coarse, const I* __restrict__ members,
                                                  const int absval, Add add) {
    for (int s = 0; s < 2; ++s) {
        const I v = members[2 * (size_t)c + s];
        if (v < 0) continue;
        for (I e = indptr[v]; e < indptr[v + 1]; ++e) {
            const I j = coarse[indices[e]];
            if (j != c && !(absval && data[e] == V(0))) add(j, e);
        }
    }
}

template <typename V, typename I, typename Row>
__device__ I build_coarse_row(const I c, const I* __restrict__ indptr, const I* __restrict__ indices,
                              const V* __restrict__ data, const I* __restrict__ coarse,
                              const I* __restrict__ members, const int absval, Row row) {
    I n = 0;
    coarse_candidates(c, indptr, indices, data, coarse, members, absval, [&](const I j, const I e) {
        I a = 0;
        while (a < n && row.idx(a) != j) ++a;
        if (a < n) {
            row.val(a) += entry_weight(data, e, absval);
        } else {
            row.idx(n) = j;
            row.val(n) = entry_weight(data, e, absval);
            ++n;
        }
    });
    for (I a = 1; a < n; ++a) {  // insertion sort: the rows are short
        const I j = row.idx(a);
        const V w = row.val(a);
        I b = a - 1;
        while (b >= 0 && row.idx(b) > j) {
            row.idx(b + 1) = row.idx(b);
            row.val(b + 1) = row.val(b);
            --b;
        }
        row.idx(b + 1) = j;
        row.val(b + 1) = w;
    }
    return n;
}

// A row of at most REG_ROW candidates (the stencils': a pair of 9-point rows has 16) is
// built in registers instead: every index below is a compile-time constant, the search and
// the append are predicated, and an odd-even transposition sort orders the row (unused
// slots hold the largest index and sort last). The same sums in the same order as
// build_coarse_row, whose local arrays live in memory.
constexpr int REG_ROW = 16;

template <typename V, typename I>
__device__ __forceinline__ I build_coarse_row_registers(const I c, const I* __restrict__ indptr,
                                                        const I* __restrict__ indices, const V* __restrict__ data,
                                                        const I* __restrict__ coarse, const I* __restrict__ members,
                                                        const int absval, I (&ri)[REG_ROW], V (&rv)[REG_ROW]) {
    const I none = (I)((1ull << (8 * sizeof(I) - 1)) - 1);
#pragma unroll
    for (int a = 0; a < REG_ROW; ++a) {
        ri[a] = none;
        rv[a] = V(0);
    }
    I n = 0;
    coarse_candidates(c, indptr, indices, data, coarse, members, absval, [&](const I j, const I e) {
        const V w = entry_weight(data, e, absval);
        bool found = false;
#pragma unroll
        for (int a = 0; a < REG_ROW; ++a) {
            if (a < n && ri[a] == j) {
                rv[a] += w;
                found = true;
            }
        }
        if (!found) {
#pragma unroll
            for (int a = 0; a < REG_ROW; ++a) {
                if (a == n) {
                    ri[a] = j;
                    rv[a] = w;
                }
            }
            ++n;
        }
    });
#pragma unroll
    for (int round = 0; round < REG_ROW; ++round) {
#pragma unroll
        for (int a = round & 1; a + 1 < REG_ROW; a += 2) {
            if (ri[a] > ri[a + 1]) {
                const I j = ri[a];
                ri[a] = ri[a + 1];
                ri[a + 1] = j;
                const V w = rv[a];
                rv[a] = rv[a + 1];
                rv[a + 1] = w;
            }
        }
    }
    return n;
}

template <typename V, typename I>
struct LocalRow {
    I* i;
    V* v;
    __device__ I& idx(I a) { return i[a]; }
    __device__ V& val(I a) { return v[a]; }
};

template <typename V, typename I>
__global__ void contract_rows(const I Nc, const I* __restrict__ indptr, const I* __restrict__ indices,
                              const V* __restrict__ data, const I* __restrict__ coarse,
                              const I* __restrict__ members, const I* __restrict__ scratch_ptr,
                              I* __restrict__ scratch_idx, V* __restrict__ scratch_val, I* __restrict__ counts,
                              const int absval) {
    I local_idx[LOCAL_ROW];
    V local_val[LOCAL_ROW];
    for (I c = blockIdx.x * (I)blockDim.x + threadIdx.x; c < Nc; c += (I)gridDim.x * blockDim.x) {
        const I start = scratch_ptr[c];
        const I bound = scratch_ptr[c + 1] - start;
        I n;
        if (bound <= REG_ROW) {
            I ri[REG_ROW];
            V rv[REG_ROW];
            n = build_coarse_row_registers(c, indptr, indices, data, coarse, members, absval, ri, rv);
#pragma unroll
            for (int a = 0; a < REG_ROW; ++a) {
                if (a < n) {
                    scratch_idx[start + a] = ri[a];
                    scratch_val[start + a] = rv[a];
                }
            }
        } else if (bound <= LOCAL_ROW) {
            n = build_coarse_row(c, indptr, indices, data, coarse, members, absval,
                                 LocalRow<V, I>{local_idx, local_val});
            for (I a = 0; a < n; ++a) {
                scratch_idx[start + a] = local_idx[a];
                scratch_val[start + a] = local_val[a];
            }
        } else {
            n = build_coarse_row(c, indptr, indices, data, coarse, members, absval,
                                 LocalRow<V, I>{scratch_idx + start, scratch_val + start});
        }
        counts[c] = n;
    }
}

template <typename V, typename I>
__global__ void contract_compact(const I Nc, const I* __restrict__ scratch_ptr, const I* __restrict__ scratch_idx,
                                 const V* __restrict__ scratch_val, const I* __restrict__ out_ptr,
                                 I* __restrict__ out_idx, V* __restrict__ out_val) {
    for (I c = blockIdx.x * (I)blockDim.x + threadIdx.x; c < Nc; c += (I)gridDim.x * blockDim.x) {
        const I from = scratch_ptr[c];
        const I to = out_ptr[c];
        const I n = out_ptr[c + 1] - to;
        for (I a = 0; a < n; ++a) {
            out_idx[to + a] = scratch_idx[from + a];
            out_val[to + a] = scratch_val[from + a];
        }
    }
}
