// CSR sparse matrix-vector product y = A x, `lanes` threads per row (a power of two up to
// 32, about the mean row length): the lanes of a row read its entries together
// (coalesced) and add their partial sums by shuffles. Unlike a cuSPARSE call through
// CuPy, this kernel can be captured into a CUDA graph. One row per lane group, no early
// exit, so that every lane of a warp takes part in the shuffles.
// templates: csr_spmv<V,I>

template <typename V, typename I>
__global__ void csr_spmv(const I n_rows, const int lanes, const I* __restrict__ indptr,
                         const I* __restrict__ indices, const V* __restrict__ data,
                         const V* __restrict__ x, V* __restrict__ y) {
    const size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const int lane = (int)(threadIdx.x & (unsigned)(lanes - 1));
    const size_t row = tid / (size_t)lanes;
    V sum = 0;
    if (row < (size_t)n_rows) {
        const I end = indptr[row + 1];
        for (I e = indptr[row] + lane; e < end; e += lanes) sum += data[e] * x[indices[e]];
    }
    for (int offset = lanes / 2; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset, lanes);
    if (lane == 0 && row < (size_t)n_rows) y[row] = sum;
}
