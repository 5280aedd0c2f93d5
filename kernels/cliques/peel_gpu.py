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
The rounds are three small kernels each, queued in batches without waiting for the host.

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

_SOURCE = r"""
#define PEEL_INT_MAX 2147483647

// One round at the level held in *level: every present vertex of degree <= level leaves
// (flag, round stamp, core number); warp-aggregated counts of the leavers and the least
// degree of those that stay (the next level when nobody leaves).
extern "C" __global__ void peel_mark(long long n, const int* __restrict__ level, int round, const int* __restrict__ deg,
                                     unsigned char* __restrict__ present, unsigned char* __restrict__ flag,
                                     int* __restrict__ rounds, int* __restrict__ core,
                                     unsigned long long* __restrict__ count, int* __restrict__ least) {
    long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int L = *level;
    int d = PEEL_INT_MAX;
    bool leave = false;
    if (v < n) {
        if (present[v]) {
            d = deg[v];
            if (d <= L) {
                leave = true;
                present[v] = 0;
                rounds[v] = round;
                core[v] = L;
                d = PEEL_INT_MAX;
            }
        }
        flag[v] = leave;
    }
    unsigned mask = __ballot_sync(0xffffffffu, leave);
    for (int off = 16; off > 0; off >>= 1) d = min(d, __shfl_down_sync(0xffffffffu, d, off));
    if ((threadIdx.x & 31) == 0) {
        if (mask) atomicAdd(count, (unsigned long long)__popc(mask));
        if (d != PEEL_INT_MAX) atomicMin(least, d);
    }
}

// The leavers' neighbours that are still present lose one degree each.
extern "C" __global__ void peel_drop(long long n, const long long* __restrict__ indptr, const int* __restrict__ indices,
                                     const unsigned char* __restrict__ present, const unsigned char* __restrict__ flag,
                                     int* __restrict__ deg) {
    long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n || !flag[v]) return;
    for (long long k = indptr[v]; k < indptr[v + 1]; ++k) {
        int w = indices[k];
        if (present[w]) atomicSub(&deg[w], 1);
    }
}

// After a round: the count of those left, and the next level when the round was empty.
extern "C" __global__ void peel_advance(int* __restrict__ level, unsigned long long* __restrict__ count,
                                        int* __restrict__ least, long long* __restrict__ left) {
    unsigned long long c = *count;
    if (c == 0 && *least != PEEL_INT_MAX) *level = *least;
    *left -= (long long)c;
    *count = 0;
    *least = PEEL_INT_MAX;
}
"""

_KERNELS = {}


def _kernels():
    if not _KERNELS:
        import cupy

        mod = cupy.RawModule(code=_SOURCE)
        for name in ("peel_mark", "peel_drop", "peel_advance"):
            _KERNELS[name] = mod.get_function(name)
        _KERNELS["later"] = cupy.ElementwiseKernel(
            "raw int64 indptr, raw int32 indices, raw int64 rank", "int64 later",
            "long long c = 0; long long r = rank[i];"
            " for (long long k = indptr[i]; k < indptr[i + 1]; ++k) c += rank[indices[k]] > r;"
            " later = c;", "peel_later_counts")
    return _KERNELS


def peeling_order(indptr, indices, batch=8):
    """``(rank, core)`` on the GPU (CuPy int64 arrays): ``rank[v]`` is ``v``'s position in
    the order, ``core[v]`` its core number, an upper bound on its later neighbours.

    ``indptr`` (int64) and ``indices`` (int32) are the CSR of a simple undirected graph,
    NumPy or CuPy. The rounds run on the device; the host reads how many vertices are
    left after every ``batch`` rounds (the batch doubles up to 64, so a graph that peels
    in ``R`` rounds costs about ``log R + R / 64`` synchronizations; rounds after the last
    vertex left change nothing).

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
    present = cupy.ones(n, dtype=np.uint8)
    flag = cupy.zeros(n, dtype=np.uint8)
    rounds = cupy.zeros(n, dtype=np.int32)
    core = cupy.zeros(n, dtype=np.int32)
    level = cupy.zeros(1, dtype=np.int32)
    count = cupy.zeros(1, dtype=np.uint64)
    least = cupy.full(1, np.iinfo(np.int32).max, dtype=np.int32)
    left = cupy.full(1, n, dtype=np.int64)
    threads = 256
    blocks = (max(n, 1) + threads - 1) // threads
    r = 0
    while n and int(left[0]) > 0:
        for _ in range(batch):
            k_["peel_mark"]((blocks,), (threads,), (np.int64(n), level, np.int32(r), deg, present, flag, rounds, core,
                                                    count, least))
            k_["peel_drop"]((blocks,), (threads,), (np.int64(n), indptr, indices, present, flag, deg))
            k_["peel_advance"]((1,), (1,), (level, count, least, left))
            r += 1
        batch = min(2 * batch, 64)
    order = cupy.argsort(rounds.astype(np.int64) * max(n, 1) + cupy.arange(n, dtype=np.int64))
    rank = cupy.empty(n, dtype=np.int64)
    rank[order] = cupy.arange(n, dtype=np.int64)
    return rank, core.astype(np.int64)


def later_counts_device(indptr, indices, rank):
    """Neighbours of each vertex later in the order (CuPy; the candidates of its sub-problem)."""
    import cupy

    later = cupy.empty(len(indptr) - 1, dtype=np.int64)
    _kernels()["later"](cupy.asarray(indptr, dtype=np.int64), cupy.asarray(indices, dtype=np.int32), rank, later)
    return later
