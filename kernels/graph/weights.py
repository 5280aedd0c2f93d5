"""The weight graph of a sparse matrix, read by the [0,n]-factor.

``A' = |A| - diag(A)`` keeps the absolute values of the nonzero off-diagonal entries.
For a matrix whose ``A'`` is not symmetric the proposals use ``A' + A'^T``. CPU (Numba)
and GPU (``kernels/cuda/graph.cu`` and cuSPARSE) give identical CSR results.

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Section 3.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..backend import get_array_module, is_device_array
from ..matrix import mirror_weights, weights_symmetric
from ..nvrtc import get_kernel, row_grid
from ..validation import validate_matrix

__all__ = ["offdiag_abs", "abs_graph", "transpose_sum", "is_symmetric"]


def _real_dtype(dtype):
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return np.dtype(dt.char.lower())
    if dt not in (np.float32, np.float64):
        return np.dtype(np.float64)
    return dt




def offdiag_abs(A):
    """Return ``|A| - diag(A)`` as CSR, dropping explicit zeros, indices sorted.

    The backend follows the input: SciPy in, SciPy out; cupyx in, cupyx out
    (computed by the ``kernels/cuda/graph.cu`` kernels).
    """
    validate_matrix(A, dtypes="fcbiu", finite=False, csr="convert", empty=True, what="offdiag_abs")
    if is_device_array(A):
        return _offdiag_abs_gpu(A)
    import scipy.sparse as sp

    A = sp.csr_matrix(A)
    A.sum_duplicates()  # canonical: sorted indices, so the output rows are sorted too
    dtype = _real_dtype(A.dtype)
    indptr, indices, data = _offdiag_abs_cpu(A.indptr, A.indices, A.data, np.zeros(0, dtype=dtype))
    return sp.csr_matrix((data, indices, indptr), shape=A.shape)



@njit(cache=True, parallel=True)
def _offdiag_abs_cpu(indptr, indices, data, like):
    N = len(indptr) - 1
    keep = np.zeros(N + 1, dtype=indptr.dtype)
    for i in prange(N):
        c = 0
        for e in range(indptr[i], indptr[i + 1]):
            if indices[e] != i and data[e] != 0:
                c += 1
        keep[i + 1] = c
    out_ptr = np.cumsum(keep).astype(indptr.dtype)
    out_idx = np.empty(out_ptr[N], dtype=indices.dtype)
    out_val = np.empty(out_ptr[N], dtype=like.dtype)
    for i in prange(N):
        n = out_ptr[i]
        for e in range(indptr[i], indptr[i + 1]):
            if indices[e] != i and data[e] != 0:
                out_idx[n] = indices[e]
                out_val[n] = abs(data[e])
                n += 1
    return out_ptr, out_idx, out_val


def _offdiag_abs_gpu(A):
    import cupy
    import cupyx.scipy.sparse as csp


    A = A.tocsr() if csp.issparse(A) else csp.csr_matrix(A)
    if not A.has_canonical_format:  # a check that CuPy caches on the matrix: one per matrix
        A = A.copy()
        A.sum_duplicates()
    dtype = _real_dtype(A.dtype)
    data = A.data
    if data.dtype.kind == "c":
        data = cupy.abs(data)
    data = data.astype(dtype, copy=False)
    itype = A.indices.dtype
    n = A.shape[0]
    threads = 256
    blocks = row_grid(n, threads)  # thread-per-row kernels: rows of the resident warps in L1
    counts = cupy.empty(n, dtype=itype)
    nn = itype.type(n)
    get_kernel("graph", "offdiag_abs_count", dtype, itype)(
        (blocks,), (threads,), (nn, A.indptr, A.indices, data, counts))
    out_indptr = cupy.zeros(n + 1, dtype=itype)
    cupy.cumsum(counts, out=out_indptr[1:])
    nnz = int(out_indptr[-1])
    out_indices = cupy.empty(nnz, dtype=itype)
    out_data = cupy.empty(nnz, dtype=dtype)
    get_kernel("graph", "offdiag_abs_fill", dtype, itype)(
        (blocks,), (threads,), (nn, A.indptr, A.indices, data, out_indptr, out_indices, out_data))
    W = csp.csr_matrix((out_data, out_indices, out_indptr), shape=A.shape)
    W.has_canonical_format = True  # A's rows, in order, less some entries
    return W



def is_symmetric(W) -> bool:
    """True when the CSR matrix ``W`` (sorted indices) equals its transpose exactly."""
    T = W.T.tocsr()
    T.sort_indices()
    xp = get_array_module(W)
    return bool(xp.array_equal(T.indptr, W.indptr)) and bool(xp.array_equal(T.indices, W.indices)) and bool(
        xp.array_equal(T.data, W.data))


def abs_graph(A, symmetric: bool | None = None):
    """Weight graph for the [0,n]-factor: ``A'`` if symmetric, else ``A' + A'^T``.

    Parameters
    ----------
    A : scipy.sparse or cupyx.scipy.sparse matrix, square
    symmetric : bool, optional
        Skip the symmetry test when known. ``None`` tests ``A' == A'^T``
        (:func:`kernels.matrix.weights_symmetric`). An unsymmetric ``A'`` with a
        symmetric pattern is summed on its own pattern (:func:`kernels.matrix.mirror_weights`).

    Returns
    -------
    W : CSR matrix on the backend of ``A``, real dtype, sorted indices, no diagonal.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> A = sp.csr_matrix([[4., -1., 0.], [-2., 4., -1.], [0., -1., 4.]])
    >>> abs_graph(A).toarray()
    array([[0., 3., 0.],
           [3., 0., 2.],
           [0., 2., 0.]])
    """
    W = offdiag_abs(A)
    if symmetric is None:
        symmetric = weights_symmetric(W)  # one pass, no transpose
    if symmetric:
        return W
    S = mirror_weights(W)  # a symmetric pattern: |w_ij| + |w_ji| in place, no transpose
    return S if S is not None else transpose_sum(W)


def transpose_sum(W):
    """``W + W^T`` as a CSR matrix with sorted indices (the weight graph of a matrix whose
    pattern is not symmetric; a symmetric pattern is summed in place by
    :func:`kernels.matrix.mirror_weights`)."""
    S = (W + W.T).tocsr()
    S.sort_indices()
    return S


