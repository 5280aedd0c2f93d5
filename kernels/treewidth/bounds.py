"""Treewidth bounds on bitset graphs (Numba): greedy elimination and contraction.

Upper bounds come from elimination orderings: eliminating a vertex makes its remaining
neighbourhood a clique, and the largest neighbourhood met is the width of the ordering
(the width of the tree decomposition whose bags are the vertices with their later
neighbours). The greedy orderings pick a vertex of minimum degree or minimum fill-in
(edges the elimination adds), ties broken by degree and then by a seeded random order.

Lower bounds come from minors (the treewidth of a minor never exceeds that of the graph):
the degeneracy (largest minimum degree over the min-degree deletion sequence) and the
contraction degeneracy heuristics MMD+ (contract a minimum-degree vertex into its
neighbour with the fewest common neighbours, *least-c*, and record the minimum degree)
with the second-smallest degree as the recorded value, a bound as well.

All functions take a graph as an ``(n, W)`` ``uint64`` bitset adjacency (no self loops)
and copy it before changing it.

References
----------
.. [1] H. L. Bodlaender and A. M. C. A. Koster, "Treewidth computations I. Upper bounds",
   Information and Computation 208(3):259-275, 2010.
.. [2] H. L. Bodlaender and A. M. C. A. Koster, "Treewidth computations II. Lower bounds",
   Information and Computation 209(7):1103-1119, 2011.
.. [3] V. Gogate and R. Dechter, "A complete anytime algorithm for treewidth", UAI 2004,
   pp. 201-208.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._bits import ctz, monotonic, popcount

__all__ = ["elimination_ordering", "ordering_width", "ordering_bags", "degeneracy", "mmd_plus", "MIN_DEGREE",
           "MIN_FILL"]

MIN_DEGREE = 0
MIN_FILL = 1


@njit(cache=True)
def _fill_of(B, v, W, alive):
    """Missing edges in the neighbourhood of ``v`` (each pair once)."""
    f = 0
    for q in range(W):
        x = B[v, q]
        while x:
            u = q * 64 + ctz(x)
            x &= x - np.uint64(1)
            for r in range(W):
                f += popcount(B[v, r] & ~B[u, r])
            f -= 1  # u itself is in N(v) but not in N(u)
    return f // 2


@njit(cache=True)
def elimination_ordering(adj, criterion, seed, stop_width, deadline=0.0):
    """Greedy elimination ordering: ``(order, width)``.

    ``criterion``: MIN_DEGREE or MIN_FILL; ties are broken by smaller degree, then by a
    random key drawn from ``seed`` (``seed < 0``: by vertex index). The elimination stops
    early, returning a width above ``stop_width`` and a partial order padded by the
    remaining vertices, as soon as the width exceeds ``stop_width`` (``stop_width < 0``:
    never). Past ``deadline`` (on the :func:`monotonic` clock; ``<= 0``: none) min-fill
    continues as min-degree, which costs no fill computations.
    """
    n, W = adj.shape
    B = adj.copy()
    alive = np.ones(n, dtype=np.bool_)
    deg = np.zeros(n, dtype=np.int64)
    fill = np.zeros(n, dtype=np.int64)
    tie = np.zeros(n, dtype=np.int64)
    if seed >= 0:
        np.random.seed(seed)
        for v in range(n):
            tie[v] = np.random.randint(0, 1 << 30)
    else:
        for v in range(n):
            tie[v] = v
    for v in range(n):
        d = 0
        for q in range(W):
            d += popcount(B[v, q])
        deg[v] = d
    if criterion == MIN_FILL:
        for v in range(n):
            fill[v] = _fill_of(B, v, W, alive)
    order = np.empty(n, dtype=np.int64)
    nb = np.empty(n, dtype=np.int64)
    dirty = np.zeros(n, dtype=np.bool_)
    width = -1
    for step in range(n):
        if criterion == MIN_FILL and deadline > 0 and (step & 63) == 0 and monotonic() > deadline:
            criterion = MIN_DEGREE
        best = -1
        for v in range(n):
            if not alive[v]:
                continue
            if best < 0:
                best = v
                continue
            if criterion == MIN_FILL:
                if fill[v] < fill[best] or (fill[v] == fill[best] and (deg[v] < deg[best] or (
                        deg[v] == deg[best] and tie[v] < tie[best]))):
                    best = v
            else:
                if deg[v] < deg[best] or (deg[v] == deg[best] and tie[v] < tie[best]):
                    best = v
        v = best
        if deg[v] > width:
            width = deg[v]
            if 0 <= stop_width < width:
                k = step
                for u in range(n):
                    if alive[u]:
                        order[k] = u
                        k += 1
                return order, width
        d = 0
        for q in range(W):
            x = B[v, q]
            while x:
                nb[d] = q * 64 + ctz(x)
                x &= x - np.uint64(1)
                d += 1
        # make the neighbourhood a clique, remove v
        for i in range(d):
            a = nb[i]
            B[a, v >> 6] &= ~(np.uint64(1) << np.uint64(v & 63))
            for q in range(W):
                B[a, q] |= B[v, q]
            B[a, a >> 6] &= ~(np.uint64(1) << np.uint64(a & 63))
            c = 0
            for q in range(W):
                c += popcount(B[a, q])
            deg[a] = c
        for q in range(W):
            B[v, q] = 0
        alive[v] = False
        order[step] = v
        if criterion == MIN_FILL:
            # fill changes for the neighbours and their neighbours
            for i in range(d):
                a = nb[i]
                dirty[a] = True
                for q in range(W):
                    x = B[a, q]
                    while x:
                        dirty[q * 64 + ctz(x)] = True
                        x &= x - np.uint64(1)
            for i in range(d):
                a = nb[i]
                for q in range(W):
                    x = B[a, q]
                    while x:
                        u = q * 64 + ctz(x)
                        x &= x - np.uint64(1)
                        if dirty[u]:
                            fill[u] = _fill_of(B, u, W, alive)
                            dirty[u] = False
                if dirty[a]:
                    fill[a] = _fill_of(B, a, W, alive)
                    dirty[a] = False
    return order, width


@njit(cache=True)
def ordering_width(adj, order):
    """Width of the elimination ordering ``order``."""
    n, W = adj.shape
    B = adj.copy()
    width = -1
    for v in order:
        d = 0
        for q in range(W):
            d += popcount(B[v, q])
        if d > width:
            width = d
        for q in range(W):
            x = B[v, q]
            while x:
                a = q * 64 + ctz(x)
                x &= x - np.uint64(1)
                B[a, v >> 6] &= ~(np.uint64(1) << np.uint64(v & 63))
                for r in range(W):
                    B[a, r] |= B[v, r]
                B[a, a >> 6] &= ~(np.uint64(1) << np.uint64(a & 63))
        for q in range(W):
            B[v, q] = 0
    return width


@njit(cache=True)
def ordering_bags(adj, order):
    """Tree decomposition of an elimination ordering.

    Returns ``(bags, parent)``: ``bags`` an ``(n, W)`` bitset array whose row ``i`` is the bag
    of ``order[i]`` (the vertex and its later neighbours in the filled graph), ``parent[i]``
    the row of the first-eliminated later neighbour, or -1 (a root: the last vertex of a
    connected component).
    """
    n, W = adj.shape
    B = adj.copy()
    pos = np.empty(n, dtype=np.int64)
    for i in range(n):
        pos[order[i]] = i
    bags = np.zeros((n, W), dtype=np.uint64)
    parent = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        v = order[i]
        first = -1
        for q in range(W):
            bags[i, q] = B[v, q]
            x = B[v, q]
            while x:
                a = q * 64 + ctz(x)
                x &= x - np.uint64(1)
                if first < 0 or pos[a] < pos[first]:
                    first = a
                B[a, v >> 6] &= ~(np.uint64(1) << np.uint64(v & 63))
                for r in range(W):
                    B[a, r] |= B[v, r]
                B[a, a >> 6] &= ~(np.uint64(1) << np.uint64(a & 63))
        bags[i, v >> 6] |= np.uint64(1) << np.uint64(v & 63)
        for q in range(W):
            B[v, q] = 0
        if first >= 0:
            parent[i] = pos[first]
    return bags, parent


@njit(cache=True)
def degeneracy(adj):
    """Degeneracy: the largest minimum degree met while deleting minimum-degree vertices."""
    n, W = adj.shape
    deg = np.zeros(n, dtype=np.int64)
    alive = np.ones(n, dtype=np.bool_)
    for v in range(n):
        for q in range(W):
            deg[v] += popcount(adj[v, q])
    best = 0
    for _ in range(n):
        v = -1
        for u in range(n):
            if alive[u] and (v < 0 or deg[u] < deg[v]):
                v = u
        if deg[v] > best:
            best = deg[v]
        alive[v] = False
        for q in range(W):
            x = adj[v, q]
            while x:
                u = q * 64 + ctz(x)
                x &= x - np.uint64(1)
                if alive[u]:
                    deg[u] -= 1
    return best


@njit(cache=True)
def mmd_plus(adj, stop_at, deadline=0.0):
    """Contraction degeneracy lower bound MMD+ (least-c) with the second-smallest degree.

    Repeatedly: record the second-smallest degree of the current minor (``tw >= delta_2``),
    then contract a minimum-degree vertex into the neighbour with which it shares the fewest
    neighbours. Stops early once the bound reaches ``stop_at`` (``< 0``: never) or past
    ``deadline`` (:func:`monotonic` clock, ``<= 0``: none), with the bound found so far.
    """
    n, W = adj.shape
    B = adj.copy()
    alive = np.ones(n, dtype=np.bool_)
    deg = np.zeros(n, dtype=np.int64)
    for v in range(n):
        for q in range(W):
            deg[v] += popcount(B[v, q])
    best = 0
    for left in range(n, 1, -1):
        if deadline > 0 and (left & 63) == 0 and monotonic() > deadline:
            return best
        v = -1
        second = -1
        for u in range(n):
            if not alive[u]:
                continue
            if v < 0 or deg[u] < deg[v]:
                if v >= 0 and (second < 0 or deg[v] < second):
                    second = deg[v]
                v = u
            elif second < 0 or deg[u] < second:
                second = deg[u]
        if second > best:
            best = second
            if 0 <= stop_at <= best:
                return best
        if deg[v] == 0:
            alive[v] = False
            continue
        # neighbour with the fewest common neighbours (then smallest degree)
        w = -1
        wc = 0
        for q in range(W):
            x = B[v, q]
            while x:
                u = q * 64 + ctz(x)
                x &= x - np.uint64(1)
                c = 0
                for r in range(W):
                    c += popcount(B[v, r] & B[u, r])
                if w < 0 or c < wc or (c == wc and deg[u] < deg[w]):
                    w = u
                    wc = c
        # contract v into w
        for q in range(W):
            x = B[v, q]
            while x:
                u = q * 64 + ctz(x)
                x &= x - np.uint64(1)
                B[u, v >> 6] &= ~(np.uint64(1) << np.uint64(v & 63))
                deg[u] -= 1
                if u != w and not (B[w, u >> 6] >> np.uint64(u & 63)) & np.uint64(1):
                    B[w, u >> 6] |= np.uint64(1) << np.uint64(u & 63)
                    B[u, w >> 6] |= np.uint64(1) << np.uint64(w & 63)
                    deg[u] += 1
                    deg[w] += 1
        for q in range(W):
            B[v, q] = 0
        alive[v] = False
    return best
