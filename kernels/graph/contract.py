"""Contraction of the matched pairs of a weight graph (the coarse graph of the 2x2
block preconditioner), CPU (Numba) and GPU (``kernels/cuda/graph.cu``).

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Section 4.4 (AlgTriBlock).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..backend import get_array_module
from ..nvrtc import get_kernel, row_grid
from ..validation import validate_matrix

__all__ = ["contract_pairs"]


@njit(cache=True)
def _contract_pairs_cpu(indptr, indices, data, mate, absval):
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
    validate_matrix(W, dtypes="fcbiu", finite=False, csr="convert", empty=True, what="contract_pairs")
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
        return _contract_pairs_gpu(W, mate, from_matrix)
    import scipy.sparse as sp

    W = sp.csr_matrix(W)
    coarse, members, ptr, idx, val = _contract_pairs_cpu(W.indptr, W.indices, W.data, np.ascontiguousarray(mate, dtype=np.int64),
                                               bool(from_matrix))
    Wc = sp.csr_matrix((val, idx, ptr), shape=(len(members), len(members)))
    Wc.has_canonical_format = True
    return Wc, coarse, members


def _contract_pairs_gpu(W, mate, from_matrix):
    import cupy
    import cupyx.scipy.sparse as csp


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
