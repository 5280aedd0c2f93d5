"""Safe reductions and safe separators for treewidth (Numba, bitset graphs).

*Simplicial rule*: a vertex whose neighbourhood is a clique can be removed; the
treewidth is the maximum of its degree and the treewidth of the rest. *Almost simplicial
rule*: a vertex whose neighbourhood is a clique but for one vertex, with degree at most a
known lower bound ``low``, can be removed after making its neighbourhood a clique; the
treewidth of the graph is at most ``max(low, tw(rest))`` and at least ``tw(rest)`` (the
rest with the fill edges is a minor of the graph). Both rules are applied until neither
applies, raising ``low`` with the degrees of the simplicial vertices removed.

*Safe separators*: a separator ``S`` is safe when the treewidth of the graph is the
maximum over the parts ``G[C + S]`` with ``S`` made a clique. Cutting a tree decomposition
at an edge with separator ``S`` into the sides ``X`` and ``Y``: when the vertices of ``Y``
can be contracted onto ``S`` (each vertex of ``Y`` joins the branch set of one vertex of
``S``, branch sets stay connected) so that ``S`` becomes a clique, the part on the ``X`` side
with ``S`` made a clique is a minor of the graph; with the same test for ``X``, both parts
are minors and the tree decomposition of the graph is the two parts' decompositions glued
at a bag holding ``S``. :func:`clique_minor` looks for such a contraction greedily (a
failure proves nothing; a success is checked by construction).

References
----------
.. [1] H. L. Bodlaender and A. M. C. A. Koster, "Safe separators for treewidth", Discrete
   Mathematics 306(3):337-350, 2006.
.. [2] H. L. Bodlaender, A. M. C. A. Koster and F. van den Eijkhof, "Preprocessing rules
   for triangulation of probabilistic networks", Computational Intelligence
   21(3):286-305, 2005.
.. [3] H. Tamaki, "Positive-instance driven dynamic programming for treewidth", Journal
   of Combinatorial Optimization 37(4):1283-1311, 2019 (safe separators from a greedy
   decomposition, tested by a greedy search for a clique minor).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._bits import ctz, monotonic, popcount

__all__ = ["peel_low_degree", "simplicial_reduce", "clique_minor"]


@njit(cache=True)
def peel_low_degree(indptr, indices, n):
    """Remove vertices of degree at most one until none is left, in ``O(n + m)``.

    These are the simplicial rule's cheapest cases, applied on the sparse graph before
    anything else: what they remove is the forest part of the graph (isolated vertices,
    trees, the trees hanging from the rest), what stays is the 2-core. A vertex removed
    with one neighbour left gets the bag ``{v, parent}``, a vertex removed alone the bag
    ``{v}``; eliminating the vertices in removal order has width at most one.

    Parameters
    ----------
    indptr, indices : ndarray of int64
        CSR adjacency (symmetric, no repeated entries; self loops are ignored).
    n : int

    Returns
    -------
    order : ndarray of int64
        The removed vertices in removal order.
    parent : ndarray of int64
        For ``order[i]``, its one neighbour still present at its removal (-1: none).
    alive : ndarray of bool
        The vertices left (the 2-core).
    """
    deg = np.zeros(n, dtype=np.int64)
    for v in range(n):
        d = 0
        for p in range(indptr[v], indptr[v + 1]):
            if indices[p] != v:
                d += 1
        deg[v] = d
    alive = np.ones(n, dtype=np.bool_)
    queue = np.empty(n, dtype=np.int64)
    parent = np.empty(n, dtype=np.int64)
    tail = 0
    for v in range(n):
        if deg[v] <= 1:
            queue[tail] = v
            tail += 1
    head = 0
    while head < tail:
        v = queue[head]
        par = -1
        if deg[v] == 1:
            for p in range(indptr[v], indptr[v + 1]):
                u = indices[p]
                if u != v and alive[u]:
                    par = u
                    break
        alive[v] = False
        parent[head] = par
        head += 1
        if par >= 0:
            deg[par] -= 1
            if deg[par] == 1:  # had two or more: not queued yet
                queue[tail] = par
                tail += 1
    return queue[:tail], parent[:tail], alive


@njit(cache=True)
def _is_clique_but(B, v, skip, W):
    """Whether the neighbourhood of ``v`` minus ``skip`` (-1: none) is a clique."""
    for q in range(W):
        x = B[v, q]
        while x:
            u = q * 64 + ctz(x)
            x &= x - np.uint64(1)
            if u == skip:
                continue
            for r in range(W):
                m = B[v, r] & ~B[u, r]
                if r == (u >> 6):
                    m &= ~(np.uint64(1) << np.uint64(u & 63))
                if skip >= 0 and r == (skip >> 6):
                    m &= ~(np.uint64(1) << np.uint64(skip & 63))
                if m:
                    return False
    return True


@njit(cache=True)
def _simplicial_kind(B, v, W):
    """0: simplicial, 1: almost simplicial, 2: neither."""
    # first neighbour u that misses some other neighbour
    for q in range(W):
        x = B[v, q]
        while x:
            u = q * 64 + ctz(x)
            x &= x - np.uint64(1)
            nmiss = 0
            other = -1
            for r in range(W):
                m = B[v, r] & ~B[u, r]
                if r == (u >> 6):
                    m &= ~(np.uint64(1) << np.uint64(u & 63))
                if m:
                    nmiss += popcount(m)
                    other = r * 64 + ctz(m)
            if nmiss == 0:
                continue
            # the special vertex is u, or its only non-neighbour in N(v)
            if _is_clique_but(B, v, u, W):
                return 1
            if nmiss == 1 and _is_clique_but(B, v, other, W):
                return 1
            return 2
    return 0


@njit(cache=True)
def simplicial_reduce(adj, alive, low, deadline=0.0):
    """Apply the simplicial and almost simplicial rules in place.

    ``adj`` (bitset adjacency) gains the fill edges and loses the removed vertices;
    ``alive`` is cleared for them. Returns ``(removed, nbr_ptr, nbr, low)``: the removed
    vertices in order, the neighbourhood of each at its removal (CSR), and the raised
    lower bound. Stops early (every removal so far stays valid) past ``deadline``
    (:func:`monotonic` clock, ``<= 0``: none).
    """
    n, W = adj.shape
    removed = np.empty(n, dtype=np.int64)
    nbr_ptr = np.zeros(n + 1, dtype=np.int64)
    cap = 1024
    nbr = np.empty(cap, dtype=np.int64)
    nr = 0
    stack = np.empty(n, dtype=np.int64)
    queued = np.zeros(n, dtype=np.bool_)
    while True:
        top = 0
        for v in range(n - 1, -1, -1):
            if alive[v]:
                stack[top] = v
                top += 1
                queued[v] = True
        low_before = low
        ticks = 0
        while top:
            ticks += 1
            if deadline > 0 and (ticks & 255) == 0 and monotonic() > deadline:
                return removed[:nr], nbr_ptr[: nr + 1], nbr[: nbr_ptr[nr]], low
            top -= 1
            v = stack[top]
            queued[v] = False
            if not alive[v]:
                continue
            d = 0
            for q in range(W):
                d += popcount(adj[v, q])
            kind = _simplicial_kind(adj, v, W)
            if kind == 2 or (kind == 1 and d > low):
                continue
            if kind == 0 and d > low:
                low = d
            # record, fill, remove
            removed[nr] = v
            if nbr_ptr[nr] + d > cap:
                while nbr_ptr[nr] + d > cap:
                    cap *= 2
                grown = np.empty(cap, dtype=np.int64)
                grown[: nbr_ptr[nr]] = nbr[: nbr_ptr[nr]]
                nbr = grown
            p = nbr_ptr[nr]
            for q in range(W):
                x = adj[v, q]
                while x:
                    a = q * 64 + ctz(x)
                    x &= x - np.uint64(1)
                    nbr[p] = a
                    p += 1
                    adj[a, v >> 6] &= ~(np.uint64(1) << np.uint64(v & 63))
                    for r in range(W):
                        adj[a, r] |= adj[v, r]
                    adj[a, a >> 6] &= ~(np.uint64(1) << np.uint64(a & 63))
                    if not queued[a]:
                        queued[a] = True
                        stack[top] = a
                        top += 1
            nbr_ptr[nr + 1] = p
            nr += 1
            for q in range(W):
                adj[v, q] = 0
            alive[v] = False
        if low == low_before:
            break
    return removed[:nr], nbr_ptr[: nr + 1], nbr[: nbr_ptr[nr]], low


@njit(cache=True)
def clique_minor(adj, S, allowed, max_steps, deadline=0.0):
    """Greedy search for branch sets that contract ``allowed`` onto ``S`` into a clique.

    Each vertex of ``S`` starts its own branch set; repeatedly, the pair of branch sets
    that are not adjacent and have the fewest (but at least one) common free neighbours
    gets connected by the common free vertex that connects the most non-adjacent pairs;
    when no pair has a common free neighbour, a pair gets connected by a shortest path of
    free vertices, which joins the branch set with fewer free neighbours. Pairs with few
    common neighbours go first because their choice is forced, a path has many routes and
    may take the only common neighbour of another pair; a branch set with few free
    neighbours gets the path because it may have no other way out. Gives up past
    ``deadline`` (:func:`monotonic` clock, ``<= 0``: none). Returns ``(ok, owner)``: ``ok``
    is True when every pair of branch sets is adjacent (a clique minor exists), False when
    the greedy gets stuck or runs out of ``max_steps``; ``owner[v]`` is the index (in
    increasing vertex order) of the vertex of ``S`` whose branch set holds ``v``, or -1.
    """
    n, W = adj.shape
    s = 0
    for q in range(W):
        s += popcount(S[q])
    owner = np.full(n, -1, dtype=np.int64)
    if s <= 1:
        for q in range(W):
            if S[q]:
                owner[q * 64 + ctz(S[q])] = 0
        return True, owner
    verts = np.empty(s, dtype=np.int64)
    i = 0
    for q in range(W):
        x = S[q]
        while x:
            verts[i] = q * 64 + ctz(x)
            x &= x - np.uint64(1)
            i += 1
    B = np.zeros((s, W), dtype=np.uint64)
    NB = np.zeros((s, W), dtype=np.uint64)
    free = np.empty(W, dtype=np.uint64)
    for q in range(W):
        free[q] = allowed[q] & ~S[q]
    for i in range(s):
        v = verts[i]
        B[i, v >> 6] |= np.uint64(1) << np.uint64(v & 63)
        for q in range(W):
            NB[i, q] = adj[v, q]
    covered = np.zeros((s, s), dtype=np.bool_)
    parent = np.full(n, -1, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    cand = np.empty(W, dtype=np.uint64)
    for step in range(max_steps):
        if deadline > 0 and (step & 15) == 15 and monotonic() > deadline:
            return False, owner
        # uncovered pair with the fewest common free neighbours
        bi = -1
        bj = -1
        bc = 1 << 60
        for i in range(s):
            for j in range(i + 1, s):
                if covered[i, j]:
                    continue
                hit = False
                for q in range(W):
                    if NB[i, q] & B[j, q]:
                        hit = True
                        break
                if hit:
                    covered[i, j] = True
                    continue
                c = 0
                for q in range(W):
                    c += popcount(NB[i, q] & NB[j, q] & free[q])
                if c == 0:
                    c = 1 << 40  # needs a path: many routes, so after the forced choices
                if c < bc:
                    bc = c
                    bi = i
                    bj = j
        if bi < 0:
            for i in range(s):
                for q in range(W):
                    x = B[i, q]
                    while x:
                        owner[q * 64 + ctz(x)] = i
                        x &= x - np.uint64(1)
            return True, owner
        if bc < 1 << 40:
            # the common free neighbour (and side) that covers the most uncovered pairs
            best = -1
            bside = bi
            bscore = -1
            for q in range(W):
                cand[q] = NB[bi, q] & NB[bj, q] & free[q]
            for q in range(W):
                x = cand[q]
                while x:
                    r = q * 64 + ctz(x)
                    x &= x - np.uint64(1)
                    for side in (bi, bj):
                        score = 0
                        for t in range(s):
                            if t == side or covered[min(t, side), max(t, side)]:
                                continue
                            for w in range(W):
                                if adj[r, w] & B[t, w]:
                                    score += 1
                                    break
                        if score > bscore:
                            bscore = score
                            best = r
                            bside = side
            r = best
            B[bside, r >> 6] |= np.uint64(1) << np.uint64(r & 63)
            free[r >> 6] &= ~(np.uint64(1) << np.uint64(r & 63))
            for q in range(W):
                NB[bside, q] |= adj[r, q]
            continue
        # shortest path of free vertices between branch sets bi and bj, given to the one with
        # fewer free neighbours: the path is its way out, the other keeps more room
        fi = 0
        fj = 0
        for q in range(W):
            fi += popcount(NB[bi, q] & free[q])
            fj += popcount(NB[bj, q] & free[q])
        if fj < fi:
            bi, bj = bj, bi
        head = 0
        tail = 0
        for q in range(W):
            x = NB[bi, q] & free[q]
            while x:
                r = q * 64 + ctz(x)
                x &= x - np.uint64(1)
                parent[r] = r
                queue[tail] = r
                tail += 1
        end = -1
        while head < tail and end < 0:
            u = queue[head]
            head += 1
            if (NB[bj, u >> 6] >> np.uint64(u & 63)) & np.uint64(1):
                end = u
                break
            for q in range(W):
                x = adj[u, q] & free[q]
                while x:
                    r = q * 64 + ctz(x)
                    x &= x - np.uint64(1)
                    if parent[r] < 0:
                        parent[r] = u
                        queue[tail] = r
                        tail += 1
        if end < 0:
            return False, owner
        u = end
        while True:
            B[bi, u >> 6] |= np.uint64(1) << np.uint64(u & 63)
            free[u >> 6] &= ~(np.uint64(1) << np.uint64(u & 63))
            for q in range(W):
                NB[bi, q] |= adj[u, q]
            if parent[u] == u:
                break
            u = parent[u]
        for t in range(tail):
            parent[queue[t]] = -1
    return False, owner
