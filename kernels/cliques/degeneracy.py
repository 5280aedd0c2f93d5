"""The degeneracy order that splits every clique search into one sub-problem per vertex,
and the bitset rows of a sub-problem's local graph (Numba), shared by the enumeration
(:mod:`kernels.cliques.mce_cpu`) and the maximum clique (:mod:`kernels.cliques.maxclique_cpu`).

References
----------
.. [1] J. Jenkins, I. Arkatkar, J. D. Owens, A. Choudhary and N. F. Samatova, "Lessons
   Learned from Exploring the Backtracking Paradigm on the GPU", Euro-Par 2011 Parallel
   Processing, LNCS 6853, Springer, 2011.
.. [2] D. Eppstein, M. Loeffler and D. Strash, "Listing All Maximal Cliques in Sparse
   Graphs in Near-Optimal Time", ISAAC 2010, LNCS 6506, Springer, 2010 (the degeneracy
   order that splits the top level).
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["degeneracy_order", "ranked_degeneracy", "later_count", "later_counts", "popc", "ctz", "bsearch",
           "build_row", "ONE", "ZERO"]


_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)
ONE = np.uint64(1)
ZERO = np.uint64(0)


@njit(cache=True, inline="always")
def popc(x):
    x = x - ((x >> np.uint64(1)) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return np.int64((x * _H01) >> np.uint64(56))


@njit(cache=True, inline="always")
def ctz(x):
    # index of the lowest set bit of a nonzero word
    return popc((x & (~x + ONE)) - ONE)


def degeneracy_order(indptr, indices):
    """Smallest-last (degeneracy) order by bucket peeling; returns ``(order, core)`` (int64).

    ``core[v]`` is the core number, an upper bound (not always equal) on the number of
    neighbours of ``v`` that come later in ``order``. The peeling works on 32-bit arrays
    when the graph allows (the random accesses dominate: measured 20-35% faster).
    """
    n = len(indptr) - 1
    small = n < 2 ** 31 - 1
    vert, deg = _peel(indptr, indices, np.empty(0, np.int32 if small else np.int64))
    return vert.astype(np.int64), deg.astype(np.int64)


def ranked_degeneracy(indptr, indices):
    """``(order, core, rank)`` with ``rank[order[i]] = i``: the split of every clique search."""
    order, core = degeneracy_order(indptr, indices)
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    return order, core, rank


@njit(cache=True)
def _peel(indptr, indices, proto):
    n = len(indptr) - 1
    deg = np.empty(n, proto.dtype)
    maxd = 0
    for v in range(n):
        deg[v] = indptr[v + 1] - indptr[v]
        if deg[v] > maxd:
            maxd = deg[v]
    bins = np.zeros(maxd + 2, proto.dtype)
    for v in range(n):
        bins[deg[v]] += 1
    start = 0
    for d in range(maxd + 1):
        num = bins[d]
        bins[d] = start
        start += num
    pos = np.empty(n, proto.dtype)
    vert = np.empty(n, proto.dtype)
    for v in range(n):
        pos[v] = bins[deg[v]]
        vert[pos[v]] = v
        bins[deg[v]] += 1
    for d in range(maxd, 0, -1):
        bins[d] = bins[d - 1]
    bins[0] = 0
    for i in range(n):
        v = vert[i]
        dv = deg[v]
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            du = deg[u]
            if du > dv:
                pu = pos[u]
                pw = bins[du]
                w = vert[pw]
                if u != w:
                    pos[u] = pw
                    vert[pu] = w
                    pos[w] = pu
                    vert[pw] = u
                bins[du] += 1
                deg[u] = du - 1
    return vert, deg


@njit(cache=True, inline="always")
def later_count(indptr, indices, rank, v):
    """Neighbours of ``v`` later in the order: the size of its sub-problem's ``P``."""
    rv = rank[v]
    k = 0
    for e in range(indptr[v], indptr[v + 1]):
        if rank[indices[e]] > rv:
            k += 1
    return k


@njit(cache=True)
def later_counts(indptr, indices, rank):
    n = len(indptr) - 1
    out = np.empty(n, np.int64)
    for v in range(n):
        out[v] = later_count(indptr, indices, rank, v)
    return out


@njit(cache=True)
def bsearch(indices, lo, hi, x):
    while lo < hi:
        mid = (lo + hi) >> 1
        if indices[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def build_row(indptr, indices, u, pmark, Pv, k, row, W):
    """Bits over the local ``P`` of the neighbours of ``u``; returns whether any is set."""
    for w in range(W):
        row[w] = ZERO
    lo = indptr[u]
    hi = indptr[u + 1]
    du = hi - lo
    anyset = False
    if du <= 8 * k:
        for e in range(lo, hi):
            j = pmark[indices[e]]
            if j >= 0:
                row[j >> 6] |= ONE << np.uint64(j & 63)
                anyset = True
    else:
        for j in range(k):
            x = Pv[j]
            p = bsearch(indices, lo, hi, x)
            if p < hi and indices[p] == x:
                row[j >> 6] |= ONE << np.uint64(j & 63)
                anyset = True
    return anyset
