"""Algorithm 1 of Klein and Strzodka (2022): the sequential greedy [0,n]-factor.

Edges by decreasing weight, each kept while both its ends have fewer than ``n`` partners:
the quality reference of the parallel factor (:mod:`kernels.factor.rounds`). CPU only
(Numba).

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Algorithm 1.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..hashing import hash32_array

__all__ = ["greedy_factor_cpu"]


@njit(cache=True)
def _rows_of(indptr, n_entries):
    """The row of every stored entry of a CSR matrix (int64)."""
    rows = np.empty(n_entries, dtype=np.int64)
    for i in range(len(indptr) - 1):
        for k in range(indptr[i], indptr[i + 1]):
            rows[k] = i
    return rows


@njit(cache=True)
def _greedy(rows, indices, data, order, N, n_max):
    """Scan the edges ``order`` (indices into the CSR arrays, upper triangle only)."""
    partners = -np.ones((N, n_max), dtype=np.int64)
    weights = np.zeros((N, n_max), dtype=data.dtype)
    count = np.zeros(N, dtype=np.int64)
    for k in order:
        u, v = rows[k], indices[k]
        if count[u] < n_max and count[v] < n_max:
            partners[u, count[u]] = v
            weights[u, count[u]] = data[k]
            count[u] += 1
            partners[v, count[v]] = u
            weights[v, count[v]] = data[k]
            count[v] += 1
    return partners, weights


def greedy_factor_cpu(W, n: int, ties: str = "index", seed: int = 0):
    """Algorithm 1 on a symmetric weight graph ``W`` (SciPy CSR): edges by decreasing
    weight, added while both ends have fewer than ``n`` partners.

    ``ties="index"`` breaks ties between equal weights by the edge's (row, column),
    smallest first (fully deterministic, the CPU reference). ``ties="hash"`` orders equal
    weights by :func:`kernels.hashing.hash32` of the edge ``(lo, hi, seed)``: an arbitrary
    but reproducible order, like an unstable sort by weight alone (the paper's Algorithm 1
    does not define the order of equal weights, and on the ANISO stencils the order moves
    its n = 1 coverage from 0.33 to 0.29). Returns ``(partners, weights)`` as NumPy arrays
    (``N x n``, -1 and 0 in empty slots).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> W = sp.csr_matrix([[0, 3.0, 1.0], [3.0, 0, 2.0], [1.0, 2.0, 0]])
    >>> partners, weights = greedy_factor_cpu(W, 1)
    >>> partners.ravel().tolist()
    [1, 0, -1]
    """
    indptr = W.indptr.astype(np.int64)
    indices = W.indices.astype(np.int64)
    data = W.data
    rows = _rows_of(indptr, len(indices))
    upper = np.flatnonzero(rows < indices)
    if ties == "index":
        # decreasing weight; ties by (row, col) increasing: stable sort of the row-major list
        order = upper[np.argsort(-data[upper], kind="stable")]
    elif ties == "hash":
        key = hash32_array(rows[upper], indices[upper], seed)
        order = upper[np.lexsort((key, -data[upper]))]
    else:
        raise ValueError(f"ties must be 'index' or 'hash', got {ties!r}")
    return _greedy(rows, indices, data, order, W.shape[0], int(n))
