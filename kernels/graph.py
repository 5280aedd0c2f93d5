"""The weighted graph of a sparse matrix used by the [0,n]-factor (paper 001, Sec. 3).

``A' = |A| - diag(A)`` keeps the absolute values of the nonzero off-diagonal entries.
For a matrix whose ``A'`` is not symmetric the proposals use ``A' + A'^T``.
CPU (SciPy) and GPU (CUDA kernel + cuSPARSE) versions give identical CSR results.
"""
from __future__ import annotations

import numpy as np

from .backend import get_array_module, is_device_array

__all__ = ["offdiag_abs", "abs_graph", "is_symmetric"]


def _check_square(A):
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"expected a square sparse matrix, got shape {A.shape}")


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
    _check_square(A)
    if is_device_array(A):
        return _offdiag_abs_gpu(A)
    import scipy.sparse as sp

    A = sp.csr_matrix(A)
    A.sum_duplicates()
    dtype = _real_dtype(A.dtype)
    coo = A.tocoo()
    keep = (coo.row != coo.col) & (coo.data != 0)
    data = np.abs(coo.data[keep]).astype(dtype, copy=False)
    out = sp.csr_matrix((data, (coo.row[keep], coo.col[keep])), shape=A.shape, dtype=dtype)
    out.sort_indices()
    return out


def _offdiag_abs_gpu(A):
    import cupy
    import cupyx.scipy.sparse as csp

    from .cuda import get_kernel

    A = csp.csr_matrix(A)
    A.sum_duplicates()
    dtype = _real_dtype(A.dtype)
    data = A.data
    if data.dtype.kind == "c":
        data = cupy.abs(data)
    data = data.astype(dtype, copy=False)
    itype = A.indices.dtype
    n = A.shape[0]
    threads = 256
    blocks = max(1, min((n + threads - 1) // threads, 65535))
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
    return csp.csr_matrix((out_data, out_indices, out_indptr), shape=A.shape)


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
        Skip the symmetry test when known. ``None`` tests ``A' == A'^T``.

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
        symmetric = is_symmetric(W)
    if symmetric:
        return W
    S = (W + W.T).tocsr()
    S.sort_indices()
    return S
