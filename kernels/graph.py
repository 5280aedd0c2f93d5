"""The weighted graph of a sparse matrix used by the [0,n]-factor (paper 001, Sec. 3).

``A' = |A| - diag(A)`` keeps the absolute values of the nonzero off-diagonal entries.
For a matrix whose ``A'`` is not symmetric the proposals use ``A' + A'^T``.
CPU (SciPy) and GPU (CUDA kernel + cuSPARSE) versions give identical CSR results.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .backend import get_array_module, is_device_array
from .factor import mirror_weights, weights_symmetric

__all__ = ["offdiag_abs", "abs_graph", "transpose_sum", "is_symmetric", "contract_pairs"]


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

    from .cuda import get_kernel, row_grid

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
        (:func:`kernels.factor.weights_symmetric`). An unsymmetric ``A'`` with a
        symmetric pattern is summed on its own pattern (:func:`kernels.factor.mirror_weights`).

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
    :func:`kernels.factor.mirror_weights`)."""
    S = (W + W.T).tocsr()
    S.sort_indices()
    return S


@njit(cache=True)
def _contract(indptr, indices, data, mate, absval):
    N = len(indptr) - 1
    coarse = np.empty(N, dtype=np.int64)
    Nc = 0
    for v in range(N):  # the smaller vertex of a pair (or an unmatched one) represents it
        if mate[v] < 0 or mate[v] > v:
            coarse[v] = Nc
            Nc += 1
    members = np.full((Nc, 2), -1, dtype=np.int64)
    for v in range(N):
        if mate[v] < 0 or mate[v] > v:
            members[coarse[v], 0] = v
            if mate[v] >= 0:
                coarse[mate[v]] = coarse[v]
                members[coarse[v], 1] = mate[v]
    out_ptr = np.zeros(Nc + 1, dtype=np.int64)
    out_idx = np.empty(len(indices), dtype=np.int64)
    out_val = np.empty(len(indices), dtype=data.dtype)
    slot = np.full(Nc, -1, dtype=np.int64)
    n = 0
    for c in range(Nc):
        start = n
        for k in range(2):
            m = members[c, k]
            if m < 0:
                continue
            for e in range(indptr[m], indptr[m + 1]):
                j = coarse[indices[e]]
                if j == c or (absval and data[e] == 0):
                    continue
                w = abs(data[e]) if absval else data[e]
                if slot[j] < start:  # first entry of column j in this row
                    slot[j] = n
                    out_idx[n] = j
                    out_val[n] = w
                    n += 1
                else:
                    out_val[slot[j]] += w
        for a in range(start + 1, n):  # sort the row by column (rows are short)
            j, w = out_idx[a], out_val[a]
            b = a - 1
            while b >= start and out_idx[b] > j:
                out_idx[b + 1] = out_idx[b]
                out_val[b + 1] = out_val[b]
                b -= 1
            out_idx[b + 1] = j
            out_val[b + 1] = w
        out_ptr[c + 1] = n
    return coarse, members, out_ptr, out_idx[:n], out_val[:n]


def contract_pairs(W, mate, *, check=True, from_matrix=False):
    """Contract the matched pairs of a weight graph to single vertices.

    The coarse graph is ``R W R^T`` without its diagonal, where ``R`` sums each pair: the
    weight between two coarse vertices is the sum of the weights between their members.
    Coarse vertex ``c`` stands for ``members[c] = (smaller, larger)`` of a pair or
    ``(vertex, -1)``, numbered in the order of the smaller member; ``coarse[v]`` is the
    coarse vertex of ``v``. One pass over ``W`` instead of two sparse products: Numba on
    the CPU, one thread per coarse row on the GPU (``kernels/cuda/graph.cu``), summing in
    the same order, so both give the same matrix.

    Parameters
    ----------
    W : scipy.sparse or cupyx.scipy.sparse CSR, square, no diagonal
    mate : int array of length N on the backend of ``W``, the partner of each vertex or
        -1 (a matching)
    from_matrix : bool
        ``W`` is a matrix ``A`` (a real dtype) whose weight graph ``|A| - diag(A)`` is
        contracted, as the factor reads it: absolute values, the diagonal and explicit
        zeros left out (no weight graph is built)
    check : bool
        Test that ``mate`` is a matching (a host synchronization on the GPU); False for a
        ``mate`` known to be one (a [0,1]-factor's), with which an invalid one gives an
        undefined result.

    Returns
    -------
    Wc : CSR (canonical) on the backend of ``W``, coarse : int array (N), members : int
        array (Nc x 2); int64 on the CPU, ``W``'s index type on the GPU

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> W = sp.csr_matrix(np.array([[0, 3, 1, 0], [3, 0, 0, 2], [1, 0, 0, 5], [0, 2, 5, 0.]]))
    >>> Wc, coarse, members = contract_pairs(W, np.array([1, 0, -1, -1]))
    >>> Wc.toarray(), coarse.tolist(), members.tolist()
    (array([[0., 1., 2.],
           [1., 0., 5.],
           [2., 5., 0.]]), [0, 0, 1, 2], [[0, 1], [2, -1], [3, -1]])
    """
    _check_square(W)
    xp = get_array_module(W)
    N = W.shape[0]
    mate = xp.asarray(mate)
    if mate.shape != (N,):
        raise ValueError(f"mate must have length {N}, got shape {mate.shape}")
    if check:
        partner_of_partner = mate[xp.clip(mate, 0, N - 1)]
        if bool(((mate < -1) | (mate >= N) | ((mate >= 0) & (partner_of_partner != xp.arange(N)))).any()):
            raise ValueError("mate is not a matching (partners must point at each other)")
    if xp is not np:
        return _contract_gpu(W, mate, from_matrix)
    import scipy.sparse as sp

    W = sp.csr_matrix(W)
    coarse, members, ptr, idx, val = _contract(W.indptr, W.indices, W.data, np.ascontiguousarray(mate, dtype=np.int64),
                                               bool(from_matrix))
    Wc = sp.csr_matrix((val, idx, ptr), shape=(len(members), len(members)))
    Wc.has_canonical_format = True
    return Wc, coarse, members


def _contract_gpu(W, mate, from_matrix):
    import cupy
    import cupyx.scipy.sparse as csp

    from .cuda import get_kernel, row_grid

    W = csp.csr_matrix(W)
    itype, vtype = W.indices.dtype, W.data.dtype
    N = W.shape[0]
    mate = cupy.ascontiguousarray(mate, dtype=itype)
    rank = cupy.cumsum((mate < 0) | (mate > cupy.arange(N, dtype=itype)), dtype=itype)
    Nc = int(rank[-1])
    coarse = cupy.empty(N, itype)
    members = cupy.empty((Nc, 2), itype)
    bound = cupy.empty(Nc, itype)
    threads = 256
    get_kernel("graph", "contract_number", itype)(
        (row_grid(N, threads),), (threads,), (itype.type(N), W.indptr, mate, rank, coarse, members, bound))
    scratch_ptr = cupy.zeros(Nc + 1, itype)
    cupy.cumsum(bound, out=scratch_ptr[1:])  # the bounds sum to nnz(W): no host read
    scratch_idx = cupy.empty(W.nnz, itype)
    scratch_val = cupy.empty(W.nnz, vtype)
    counts = cupy.empty(Nc, itype)
    grid = (row_grid(Nc, threads),)
    nc = itype.type(Nc)
    get_kernel("graph", "contract_rows", vtype, itype)(
        grid, (threads,), (nc, W.indptr, W.indices, W.data, coarse, members, scratch_ptr, scratch_idx, scratch_val,
                           counts, np.int32(from_matrix)))
    out_ptr = cupy.zeros(Nc + 1, itype)
    cupy.cumsum(counts, out=out_ptr[1:])
    nnz = int(out_ptr[-1])
    out_idx = cupy.empty(nnz, itype)
    out_val = cupy.empty(nnz, vtype)
    get_kernel("graph", "contract_compact", vtype, itype)(
        grid, (threads,), (nc, scratch_ptr, scratch_idx, scratch_val, out_ptr, out_idx, out_val))
    Wc = csp.csr_matrix((out_val, out_idx, out_ptr), shape=(Nc, Nc))
    Wc.has_canonical_format = True
    return Wc, coarse, members
