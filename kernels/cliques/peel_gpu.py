"""A degeneracy-bounded vertex order computed on the GPU by peeling in parallel rounds.

The smallest-last order (:func:`kernels.cliques.degeneracy_order`) removes one vertex at
a time, which no GPU can speed up. The enumeration does not need that exact order: any
order in which every vertex has at most ``D`` (the degeneracy) neighbours after it splits
the search into sub-problems of at most ``D`` candidates. Peeling in rounds gives one:
at level ``k`` every remaining vertex of remaining degree at most ``k`` is removed at once
(a round), their remaining neighbours lose one degree each, and the rounds repeat until
none is left at that level, when ``k`` rises to the smallest remaining degree. A vertex
removed in a round at level ``k`` has at most ``k`` neighbours still present, so at most
``k`` later in the order ``(round, vertex id)``; ``k`` is its core number. The order is
deterministic (integer arithmetic only), so every process that computes it gets the same.

References
----------
.. [1] V. Batagelj and M. Zaversnik, "An O(m) Algorithm for Cores Decomposition of
   Networks", arXiv:cs/0310049, 2003 (the cores that bound the order).
.. [2] D. Eppstein, M. Loeffler and D. Strash, "Listing All Maximal Cliques in Sparse
   Graphs in Near-Optimal Time", ISAAC 2010, LNCS 6506, Springer, 2010 (sub-problems
   of at most degeneracy-many candidates).
"""
from __future__ import annotations

import numpy as np

__all__ = ["peeling_order", "later_counts_device"]

_KERNELS = {}


def _kernels():
    if not _KERNELS:
        import cupy

        # one thread per removed vertex: each still-present neighbour loses one degree
        _KERNELS["drop"] = cupy.ElementwiseKernel(
            "int64 u, raw int64 indptr, raw int32 indices, raw bool present", "raw int32 deg",
            "for (long long k = indptr[u]; k < indptr[u + 1]; ++k) { int w = indices[k];"
            " if (present[w]) atomicSub(&deg[w], 1); }", "peel_drop")
        _KERNELS["later"] = cupy.ElementwiseKernel(
            "raw int64 indptr, raw int32 indices, raw int64 rank", "int64 later",
            "long long c = 0; long long r = rank[i];"
            " for (long long k = indptr[i]; k < indptr[i + 1]; ++k) c += rank[indices[k]] > r;"
            " later = c;", "peel_later_counts")
    return _KERNELS


def peeling_order(indptr, indices):
    """``(rank, core)`` on the GPU (CuPy int64 arrays): ``rank[v]`` is ``v``'s position in
    the order, ``core[v]`` its core number, an upper bound on its later neighbours.

    ``indptr`` (int64) and ``indices`` (int32) are the CSR of a simple undirected graph,
    NumPy or CuPy.

    Examples
    --------
    >>> import numpy as np                                          # doctest: +SKIP
    >>> rank, core = peeling_order(np.array([0, 1, 2]), np.array([1, 0], np.int32))  # doctest: +SKIP
    >>> core.tolist()                                               # doctest: +SKIP
    [1, 1]
    """
    import cupy

    k_ = _kernels()
    indptr = cupy.asarray(indptr, dtype=np.int64)
    indices = cupy.asarray(indices, dtype=np.int32)
    n = len(indptr) - 1
    deg = cupy.diff(indptr).astype(np.int32)
    present = cupy.ones(n, dtype=bool)
    rounds = cupy.zeros(n, dtype=np.int64)
    core = cupy.zeros(n, dtype=np.int64)
    big = np.int32(np.iinfo(np.int32).max)
    level, r, left = 0, 0, n
    while left:
        frontier = cupy.flatnonzero(present & (deg <= level))
        m = int(frontier.size)  # the round's one synchronization
        if m == 0:
            level = int(cupy.where(present, deg, big).min())
            continue
        rounds[frontier] = r
        core[frontier] = level
        present[frontier] = False
        k_["drop"](frontier, indptr, indices, present, deg)
        left -= m
        r += 1
    order = cupy.argsort(rounds * n + cupy.arange(n, dtype=np.int64))
    rank = cupy.empty(n, dtype=np.int64)
    rank[order] = cupy.arange(n, dtype=np.int64)
    return rank, core


def later_counts_device(indptr, indices, rank):
    """Neighbours of each vertex later in the order (CuPy; the candidates of its sub-problem)."""
    import cupy

    later = cupy.empty(len(indptr) - 1, dtype=np.int64)
    _kernels()["later"](cupy.asarray(indptr, dtype=np.int64), cupy.asarray(indices, dtype=np.int32), rank, later)
    return later
