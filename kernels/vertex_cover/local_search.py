"""Local search for small vertex covers (NuMVC with sampled removals), Numba.

The exact search prunes with the best cover it knows, so a near-optimal cover found in
milliseconds first pays off. This is NuMVC (Cai, Su, Luo and Sattar): edges carry
weights, ``dscore(v)`` is the weight of the edges whose coverage changes when ``v``
leaves or joins the cover; whenever the cover is complete it is recorded and its best
vertex removed; otherwise one step removes a cover vertex of highest ``dscore`` (among
``BMS_SAMPLES`` random cover vertices on large graphs, the best-from-multiple-selection
of FastVC, so a step costs no scan of the cover) and adds the endpoint of a random uncovered edge whose
neighbourhood changed since it left (configuration checking) and whose ``dscore`` is
higher (covers of at most ``EXACT_SELECTION`` vertices are scanned exactly, as in
NuMVC); uncovered edges gain weight, and all weights shrink to ``rho`` times when their
mean exceeds ``gamma``.

References
----------
S. Cai, K. Su, C. Luo and A. Sattar, "NuMVC: an efficient local search algorithm for
minimum vertex cover", Journal of Artificial Intelligence Research 46 (2013) 687-716.

S. Cai, "Balance between complexity and quality: local search for minimum vertex cover
in massive graphs", Proc. IJCAI 2015, 747-753.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["local_search_cover", "greedy_cover"]

BMS_SAMPLES = 50
#: covers of at most this many vertices are scanned for the best removal (NuMVC proper)
EXACT_SELECTION = 3000


@njit(cache=True)
def degree_buckets(indptr, n):
    """The vertices of a CSR graph in buckets by degree, for :func:`bucket_decrement`:
    ``(deg, maxd, head, nxt, prv)`` with ``head[d]`` the first vertex of degree ``d`` and
    ``nxt``/``prv`` the doubly linked lists."""
    deg = np.empty(n, np.int64)
    maxd = 0
    for v in range(n):
        deg[v] = indptr[v + 1] - indptr[v]
        maxd = max(maxd, deg[v])
    head = np.full(maxd + 1, -1, np.int64)
    nxt = np.full(n, -1, np.int64)
    prv = np.full(n, -1, np.int64)
    for v in range(n):
        d = deg[v]
        nxt[v] = head[d]
        if head[d] >= 0:
            prv[head[d]] = v
        head[d] = v
    return deg, maxd, head, nxt, prv


@njit(cache=True)
def bucket_decrement(u, deg, head, nxt, prv):
    """Move ``u`` from degree bucket ``deg[u]`` to the next lower one (buckets are doubly
    linked lists: ``head[d]`` first vertex of degree ``d``, ``nxt``/``prv`` links)."""
    d = deg[u]
    if prv[u] >= 0:
        nxt[prv[u]] = nxt[u]
    else:
        head[d] = nxt[u]
    if nxt[u] >= 0:
        prv[nxt[u]] = prv[u]
    deg[u] = d - 1
    nxt[u] = head[d - 1]
    prv[u] = -1
    if head[d - 1] >= 0:
        prv[head[d - 1]] = u
    head[d - 1] = u


@njit(cache=True)
def greedy_cover(indptr, indices):
    """Cover by repeatedly taking a vertex of maximum remaining degree (bucket queue),
    then dropping redundant vertices. Returns a boolean array."""
    n = len(indptr) - 1
    deg, maxd, head, nxt, prv = degree_buckets(indptr, n)
    inc = np.zeros(n, np.bool_)
    gone = np.zeros(n, np.bool_)
    cur = maxd
    while cur > 0:
        v = head[cur]
        if v < 0:
            cur -= 1
            continue
        # take v
        head[cur] = nxt[v]
        if nxt[v] >= 0:
            prv[nxt[v]] = -1
        inc[v] = True
        gone[v] = True
        for p in range(indptr[v], indptr[v + 1]):
            u = indices[p]
            if not gone[u]:
                bucket_decrement(u, deg, head, nxt, prv)
    # remove redundant vertices (all neighbours in the cover)
    for v in range(n):
        if inc[v]:
            red = True
            for p in range(indptr[v], indptr[v + 1]):
                if not inc[indices[p]]:
                    red = False
                    break
            if red:
                inc[v] = False
    return inc


@njit(cache=True)
def edge_ids(indptr, indices):
    """Id of the undirected edge of each CSR entry, and the endpoints of each id."""
    n = len(indptr) - 1
    eid = np.full(len(indices), -1, np.int64)
    m = 0
    for u in range(n):
        for p in range(indptr[u], indptr[u + 1]):
            if u < indices[p]:
                eid[p] = m
                m += 1
    ea = np.empty(m, np.int64)
    eb = np.empty(m, np.int64)
    # the mirror entry of (u, v) is found by scanning v's row (rows are sorted)
    for u in range(n):
        for p in range(indptr[u], indptr[u + 1]):
            v = indices[p]
            if u < v:
                e = eid[p]
                ea[e] = u
                eb[e] = v
                lo = indptr[v]
                hi = indptr[v + 1]
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if indices[mid] < u:
                        lo = mid + 1
                    else:
                        hi = mid
                eid[lo] = e
    return eid, ea, eb


@njit(cache=True)
def _numvc(indptr, indices, init, max_steps, seed, target):
    n = len(indptr) - 1
    np.random.seed(seed)
    eid, ea, eb = edge_ids(indptr, indices)
    m = len(ea)
    best = init.copy()
    if m == 0:
        return best
    inc = init.copy()
    w = np.ones(m, np.int64)
    dscore = np.zeros(n, np.int64)
    age = np.zeros(n, np.int64)
    conf = np.ones(n, np.bool_)
    # cover as a sparse set
    cset = np.empty(n, np.int64)
    cpos = np.full(n, -1, np.int64)
    csize = 0
    for v in range(n):
        if inc[v]:
            cpos[v] = csize
            cset[csize] = v
            csize += 1
    # uncovered edges as a sparse set
    uset = np.empty(m, np.int64)
    upos = np.full(m, -1, np.int64)
    usize = 0
    for e in range(m):
        a = ea[e]
        b = eb[e]
        if not inc[a] and not inc[b]:
            upos[e] = usize
            uset[usize] = e
            usize += 1
            dscore[a] += 1
            dscore[b] += 1
        elif inc[a] and not inc[b]:
            dscore[a] -= 1
        elif inc[b] and not inc[a]:
            dscore[b] -= 1
    best_size = n + 1
    if usize == 0:
        best_size = csize
    total_w = m
    gamma = max(n // 2, 2)
    rho = 0.3
    step = 0
    while step < max_steps:
        step += 1
        if usize == 0:
            if csize < best_size:
                best_size = csize
                best[:] = inc
                if best_size <= target:
                    return best
            # remove the cover vertex of highest dscore (sampled) and go on
            u = -1
            bu = -(1 << 62)
            if csize <= EXACT_SELECTION:
                for t in range(csize):
                    c = cset[t]
                    if dscore[c] > bu:
                        bu = dscore[c]
                        u = c
            else:
                for _ in range(BMS_SAMPLES):
                    c = cset[np.random.randint(csize)]
                    if dscore[c] > bu:
                        bu = dscore[c]
                        u = c
            if u < 0:
                break
            usize = _flip_out(u, indptr, indices, eid, ea, eb, w, inc, dscore, cset, cpos, uset, upos, csize, usize)
            csize -= 1
            conf[u] = False
            age[u] = step
            for p in range(indptr[u], indptr[u + 1]):
                conf[indices[p]] = True
            continue
        # remove: the cover vertex of highest dscore (ties: older); sampled on large covers
        u = -1
        bu = -(1 << 62)
        if csize <= EXACT_SELECTION:
            for t in range(csize):
                c = cset[t]
                if dscore[c] > bu or (dscore[c] == bu and age[c] < age[u]):
                    bu = dscore[c]
                    u = c
        else:
            for _ in range(BMS_SAMPLES):
                c = cset[np.random.randint(csize)]
                if dscore[c] > bu or (dscore[c] == bu and age[c] < age[u]):
                    bu = dscore[c]
                    u = c
        if u >= 0:
            usize = _flip_out(u, indptr, indices, eid, ea, eb, w, inc, dscore, cset, cpos, uset, upos, csize, usize)
            csize -= 1
            conf[u] = False
            age[u] = step
            for p in range(indptr[u], indptr[u + 1]):
                conf[indices[p]] = True
        # add: an endpoint of a random uncovered edge
        e = uset[np.random.randint(usize)]
        a = ea[e]
        b = eb[e]
        if not conf[a]:
            v = b
        elif not conf[b]:
            v = a
        elif dscore[a] > dscore[b] or (dscore[a] == dscore[b] and age[a] < age[b]):
            v = a
        else:
            v = b
        usize = _flip_in(v, indptr, indices, eid, ea, eb, w, inc, dscore, cset, cpos, uset, upos, csize, usize)
        csize += 1
        age[v] = step
        for p in range(indptr[v], indptr[v + 1]):
            conf[indices[p]] = True
        # weights of the uncovered edges grow
        for k in range(usize):
            e2 = uset[k]
            w[e2] += 1
            dscore[ea[e2]] += 1
            dscore[eb[e2]] += 1
        total_w += usize
        if total_w > gamma * m:
            total_w = 0
            for e2 in range(m):
                w[e2] = max(int(rho * w[e2]), 1)
                total_w += w[e2]
            dscore[:] = 0
            for e2 in range(m):
                a2 = ea[e2]
                b2 = eb[e2]
                if not inc[a2] and not inc[b2]:
                    dscore[a2] += w[e2]
                    dscore[b2] += w[e2]
                elif inc[a2] and not inc[b2]:
                    dscore[a2] -= w[e2]
                elif inc[b2] and not inc[a2]:
                    dscore[b2] -= w[e2]
    if usize == 0 and csize < best_size:
        best[:] = inc
    return best


@njit(cache=True)
def _flip_out(u, indptr, indices, eid, ea, eb, w, inc, dscore, cset, cpos, uset, upos, csize, usize):
    inc[u] = False
    dscore[u] = -dscore[u]
    # sparse-set removal from the cover
    last = cset[csize - 1]
    cset[cpos[u]] = last
    cpos[last] = cpos[u]
    cpos[u] = -1
    k = usize
    for p in range(indptr[u], indptr[u + 1]):
        z = indices[p]
        e = eid[p]
        if inc[z]:
            dscore[z] -= w[e]
        else:
            dscore[z] += w[e]
            upos[e] = k
            uset[k] = e
            k += 1
    return k


@njit(cache=True)
def _flip_in(v, indptr, indices, eid, ea, eb, w, inc, dscore, cset, cpos, uset, upos, csize, usize):
    inc[v] = True
    dscore[v] = -dscore[v]
    cpos[v] = csize
    cset[csize] = v
    k = usize
    for p in range(indptr[v], indptr[v + 1]):
        z = indices[p]
        e = eid[p]
        if inc[z]:
            dscore[z] += w[e]
        else:
            dscore[z] -= w[e]
            # e was uncovered: sparse-set removal
            last = uset[k - 1]
            uset[upos[e]] = last
            upos[last] = upos[e]
            upos[e] = -1
            k -= 1
    return k


def local_search_cover(indptr, indices, steps=100_000, seed=0, target=0, init=None):
    """A small vertex cover of a CSR graph: greedy, then NuMVC for ``steps`` steps.

    Parameters
    ----------
    indptr, indices : array_like
        CSR of a simple undirected graph with sorted rows.
    steps : int
        Local search steps (each costs about the degrees of two vertices).
    seed : int
        Random seed (results are deterministic for a seed).
    target : int
        Stop as soon as a cover of at most this size is found (e.g. a known lower bound).
    init : array_like of bool, optional
        Starting cover (default: greedy).

    Returns
    -------
    ndarray of int64
        Sorted vertex ids of the best cover found.

    Examples
    --------
    >>> import numpy as np
    >>> indptr = np.array([0, 2, 4, 6, 8, 10]); indices = np.array([1, 4, 0, 2, 1, 3, 2, 4, 0, 3])
    >>> len(local_search_cover(indptr, indices, steps=1000))   # the 5-cycle needs 3
    3
    """
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    indices = np.ascontiguousarray(indices, dtype=np.int64)
    rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    if len(indices) > 1 and np.any((np.diff(indices) < 0) & (rows[1:] == rows[:-1])):
        # the edge ids are found by binary search in the rows: sort them
        indices = indices[np.lexsort((indices, rows))]
    if init is None:
        init = greedy_cover(indptr, indices)
    else:
        init = np.ascontiguousarray(init, dtype=np.bool_)
    best = _numvc(indptr, indices, init, int(steps), int(seed), int(target))
    return np.flatnonzero(best).astype(np.int64)
