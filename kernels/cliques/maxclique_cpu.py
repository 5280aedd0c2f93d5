"""Maximum clique on the CPU: colouring branch and bound over bitsets (Numba).

The same decomposition as the enumeration: vertices in reverse degeneracy order, a
sub-problem skipped when ``1 + |P| <= best``, and inside it a bitset branch and bound
whose bound is a greedy sequential colouring of ``P`` (MCQ / BBMC style).

References
----------
.. [1] E. Tomita and T. Seki, "An Efficient Branch-and-Bound Algorithm for Finding a
   Maximum Clique", DMTCS 2003, LNCS 2731, Springer, 2003 (MCQ: the colouring bound).
.. [2] P. San Segundo, D. Rodriguez-Losada and A. Jimenez, "An exact bit-parallel
   algorithm for the maximum clique problem", Computers & Operations Research 38(2),
   2011 (BBMC: the bitsets).
"""
from __future__ import annotations

import functools

import numpy as np
from numba import njit, objmode

from .degeneracy import ONE, ZERO, build_row, ctz, later_count, popc, ranked_degeneracy

__all__ = ["max_clique_cpu", "colour_sort", "bb_candidate", "bb_candidates", "bb_rows", "BBSetup"]


@njit(cache=True)
def colour_sort(d, W, rows, SP, L, C):
    """Greedy sequential colouring of ``SP[d]``; ``L[d]`` lists vertices by colour class,
    ``C[d]`` the colour (1-based) of each; returns the count."""
    U = np.empty(W, np.uint64)
    Q = np.empty(W, np.uint64)
    for w in range(W):
        U[w] = SP[d, w]
    cnt = 0
    col = 0
    remaining = 0
    for w in range(W):
        remaining += popc(U[w])
    while remaining > 0:
        col += 1
        for w in range(W):
            Q[w] = U[w]
        w = 0
        while w < W:
            x = Q[w]
            if x == ZERO:
                w += 1
                continue
            i = (w << 6) + ctz(x)
            bi = ONE << np.uint64(i & 63)
            Q[w] &= ~bi
            U[w] &= ~bi
            remaining -= 1
            row = rows[i]
            for t in range(w, W):
                Q[t] &= ~row[t]
            L[d, cnt] = i
            C[d, cnt] = col
            cnt += 1
    return cnt


@njit(cache=True)
def _bb_sub(k, W, rows, SP, L, C, cnt, idx, clq, best, best_clq, nodes, deadline, node_cap):
    """Branch and bound inside one sub-problem (root clique of size 1 already taken).

    Returns ``(best, nodes, status)`` with status 0 done, 1 deadline, 2 node cap.
    """
    for i in range(k):
        SP[1, i >> 6] |= ONE << np.uint64(i & 63)
    cnt[1] = colour_sort(1, W, rows, SP, L, C)
    idx[1] = cnt[1]
    d = 1
    status = 0
    while d >= 1:
        if idx[d] == 0:
            d -= 1
            continue
        j = idx[d] - 1
        idx[d] = j
        if d + C[d, j] <= best:
            # remaining vertices have colours <= C[d, j]: prune the node
            idx[d] = 0
            d -= 1
            continue
        i = L[d, j]
        bi = ONE << np.uint64(i & 63)
        row = rows[i]
        pc = 0
        for w in range(W):
            a = SP[d, w] & row[w]
            SP[d + 1, w] = a
            pc += popc(a)
        SP[d, i >> 6] &= ~bi
        clq[d + 1] = i
        nodes += 1
        if (nodes & 1023) == 0:
            if node_cap > 0 and nodes >= node_cap:
                status = 2
                break
            # a trip to Python every 1,024 nodes, deadline or not: it reads the clock and
            # lets the interpreter raise KeyboardInterrupt (Ctrl-C) out of the search
            with objmode(now="float64"):
                now = _poll(nodes, best)
            if deadline > 0.0 and now > deadline:
                status = 1
                break
        if pc == 0:
            if d + 1 > best:
                best = d + 1
                for t in range(2, d + 2):
                    best_clq[t] = clq[t]
                best_clq[0] = -1  # marker: rewrite with the root below
            continue
        if d + 1 + pc <= best:
            continue
        cnt[d + 1] = colour_sort(d + 1, W, rows, SP, L, C)
        idx[d + 1] = cnt[d + 1]
        d += 1
    return best, nodes, status


@njit(cache=True, inline="always")
def bb_candidate(u, rv, rank, core, best):
    """``u`` (a neighbour of a vertex of rank ``rv``) belongs to that vertex's sub-problem:
    later in the order and of core number at least ``best``."""
    return rank[u] > rv and core[u] >= best


@njit(cache=True)
def bb_candidates(indptr, indices, v, rank, core, best, Pv):
    """``P`` of the sub-problem of ``v`` into ``Pv``: later neighbours that can still be in
    a clique larger than ``best`` (core >= best), by decreasing rank (high core first, for
    a tighter greedy colouring); returns its size."""
    rv = rank[v]
    k = 0
    for e in range(indptr[v], indptr[v + 1]):
        u = indices[e]
        if bb_candidate(u, rv, rank, core, best):
            Pv[k] = u
            k += 1
    if k > 1:
        perm = np.argsort(-rank[Pv[:k]])
        Pv[:k] = Pv[:k][perm]
    return k


@njit(cache=True)
def bb_rows(indptr, indices, Pv, k, pmark, rows, W):
    """Adjacency bitsets over ``Pv[:k]`` (local index = position in ``Pv``) into ``rows``."""
    for i in range(k):
        pmark[Pv[i]] = i
    for i in range(k):
        build_row(indptr, indices, Pv[i], pmark, Pv, k, rows[i], W)
    for i in range(k):
        pmark[Pv[i]] = -1


#: The progress callback of the running CPU search (``max_clique_cpu(progress=...)``), or None.
_REPORT = [None]


def _poll(nodes, best):
    """The search's trip to Python every 1,024 nodes: the clock, and the progress callback
    (``callback(nodes, best)``) when one is set."""
    import time

    now = time.perf_counter()
    callback = _REPORT[0]
    if callback is not None:
        callback(int(nodes), int(best))
    return now


@njit(cache=True)
def _max_clique_run(indptr, indices, order, rank, core, lower, deadline, node_cap, pmark, Pv, rows, SP, L, C, cnt,
                    idx, clq, best_clq, result):
    """Sub-problems in reverse degeneracy order; ``result`` receives the best clique.

    Returns ``(best, nodes, status)``.
    """
    n = len(order)
    best = lower
    nodes = 0
    status = 0
    for p in range(n - 1, -1, -1):
        v = order[p]
        kk = later_count(indptr, indices, rank, v)
        if 1 + kk <= best:
            continue
        if kk == 0:
            best = 1
            result[0] = v
            continue
        k = bb_candidates(indptr, indices, v, rank, core, best, Pv)
        if 1 + k <= best:
            continue
        W = (k + 63) >> 6
        bb_rows(indptr, indices, Pv, k, pmark, rows, W)
        for dd in range(k + 3):
            for w in range(W):
                SP[dd, w] = ZERO
        best_clq[0] = 0
        nb, nodes, status = _bb_sub(k, W, rows, SP, L, C, cnt, idx, clq, best, best_clq, nodes, deadline,
                                    node_cap)
        if best_clq[0] == -1:
            result[0] = v
            for t in range(2, nb + 1):
                result[t - 1] = Pv[best_clq[t]]
        best = nb
        if status != 0:
            break
    return best, nodes, status


class BBSetup:
    """Degeneracy order and scratch arrays shared by the CPU search and the GPU plan."""

    def __init__(self, indptr, indices):
        self.indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        self.indices = np.ascontiguousarray(indices, dtype=np.int64)
        n = len(self.indptr) - 1
        self.order, self.core, self.rank = ranked_degeneracy(self.indptr, self.indices)
        self.D = D = int(self.core.max())
        Wm = max(1, (D + 63) // 64)
        self.pmark = np.full(n, -1, np.int64)
        self.Pv = np.zeros(D + 1, np.int64)
        self.rows = np.zeros((D + 1, Wm), np.uint64)
        self.SP = np.zeros((D + 3, Wm), np.uint64)
        self.L = np.zeros((D + 3, D + 1), np.int32)
        self.C = np.zeros((D + 3, D + 1), np.int32)


def max_clique_cpu(indptr, indices, lower=0, deadline=0.0, node_cap=0, progress=None):
    """Maximum clique by colouring branch and bound; returns ``(vertices, optimal, nodes)``.

    Only cliques larger than ``lower`` are searched for (the result is empty when none
    exists). ``deadline`` is an absolute ``time.perf_counter()`` value (0: none);
    ``node_cap`` > 0 stops after about that many search-tree nodes. ``progress``, if
    given, is called as ``progress(nodes, best)`` every 1,024 search-tree nodes (one
    search per process at a time reports).
    """
    if len(indptr) <= 1:
        return np.zeros(0, np.int64), True, 0
    b = BBSetup(indptr, indices)
    D = b.D
    cnt = np.zeros(D + 3, np.int64)
    idx = np.zeros(D + 3, np.int64)
    clq = np.zeros(D + 3, np.int64)
    best_clq = np.zeros(D + 3, np.int64)
    result = np.full(D + 2, -1, np.int64)
    _REPORT[0] = progress
    try:
        best, nodes, status = _max_clique_run(b.indptr, b.indices, b.order, b.rank, b.core, int(lower),
                                              float(deadline), int(node_cap), b.pmark, b.Pv, b.rows, b.SP, b.L, b.C,
                                              cnt, idx, clq, best_clq, result)
    finally:
        _REPORT[0] = None
    verts = np.sort(result[:best]) if best > 0 and result[0] >= 0 else np.zeros(0, np.int64)
    return verts, status == 0, int(nodes)


@functools.cache
def compile_once():
    """Compile (or load from the cache) :func:`max_clique_cpu` the first time it is called
    in a process, on a triangle; time-limited callers call it before their clock starts,
    since a cold Numba cache takes longer than a typical limit."""
    max_clique_cpu(np.array([0, 2, 4, 6]), np.array([1, 2, 0, 2, 0, 1]))
