// Weight graph of a sparse matrix: |A| without the diagonal and without zero entries.
// Two passes over CSR rows (count, then fill into offsets from an exclusive scan).
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
