"""Local search for small vertex covers (NuMVC), Numba.

The exact search prunes with the best cover it knows, so a near-optimal cover found in
milliseconds first pays off. This is NuMVC (Cai, Su, Luo and Sattar): edges carry
weights, ``dscore(v)`` is the weight of the edges whose coverage changes when ``v``
leaves or joins the cover; whenever the cover is complete it is recorded and its best
vertex removed; otherwise one step removes the cover vertex of highest ``dscore``
(ties: the older; never the vertex added in the step before) and adds the endpoint of
a random uncovered edge whose neighbourhood changed since it left (configuration
checking) and whose ``dscore`` is higher; uncovered edges gain weight, and all weights
shrink to ``rho`` times when their mean exceeds ``gamma``.

The removal choice reads one key per vertex, ``dscore`` in the high bits and the age
below, kept up to date by the flips: on graphs of at most ``EXACT_SELECTION`` vertices
a step scans these keys in one contiguous pass (NuMVC's exact choice); on larger ones
it takes the best of ``BMS_SAMPLES`` random cover vertices (the best-from-multiple-
selection of FastVC). :class:`NuMVC` keeps its whole state (weights, ages, its own
random generator) between calls, so a caller can run it in slices between other work
without restarting it.

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

__all__ = ["local_search_cover", "greedy_cover", "NuMVC"]

BMS_SAMPLES = 50
#: graphs of at most this many vertices get the exact removal choice (NuMVC proper)
EXACT_SELECTION = 5000


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


# a cover vertex's removal key: dscore in the high bits, then age (older first) below
_AGE_BITS = 34
_AGE_MAX = (1 << _AGE_BITS) - 1
_NO_KEY = -(1 << 62)
# status words of a run (int64 array ``st``)
_STEP, _CSIZE, _USIZE, _BEST, _TOTAL_W, _TABU, _RNG = range(7)


@njit(cache=True)
def _rand(st, bound):
    """Uniform-ish integer in ``[0, bound)`` from the xorshift state in ``st[_RNG]``
    (each search carries its own generator: runs interleaved with others stay
    reproducible)."""
    x = st[_RNG]
    x ^= (x << 13) & 0xFFFFFFFF
    x ^= x >> 17
    x ^= (x << 5) & 0xFFFFFFFF
    st[_RNG] = x
    return x % bound


@njit(cache=True)
def _key(dscore_v, age_v):
    return (dscore_v << _AGE_BITS) + (_AGE_MAX - min(age_v, _AGE_MAX))


@njit(cache=True)
def _numvc_init(indptr, indices, eid, ea, eb, inc, best, w, dscore, ckey, cset, cpos, uset, upos, st):
    """Scores, uncovered edges and cover set of the cover ``inc`` (all weights 1)."""
    n = len(indptr) - 1
    m = len(ea)
    csize = 0
    for v in range(n):
        if inc[v]:
            cpos[v] = csize
            cset[csize] = v
            csize += 1
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
    for v in range(n):
        ckey[v] = _key(dscore[v], 0) if inc[v] else _NO_KEY
    st[_CSIZE] = csize
    st[_USIZE] = usize
    st[_BEST] = csize
    st[_TOTAL_W] = m
    st[_TABU] = -1


@njit(cache=True)
def _select_removal(ckey, cset, st, exact):
    """The cover vertex of highest key (dscore, then oldest) other than the tabu one:
    a scan of all keys (contiguous, cheap) when ``exact``, else the best of
    ``BMS_SAMPLES`` random cover vertices."""
    tabu = st[_TABU]
    saved = _NO_KEY
    if tabu >= 0:
        saved = ckey[tabu]
        ckey[tabu] = _NO_KEY
    u = -1
    if exact:
        top = _NO_KEY
        for v in range(len(ckey)):
            if ckey[v] > top:
                top = ckey[v]
        if top > _NO_KEY:
            u = 0
            while ckey[u] != top:
                u += 1
    elif st[_CSIZE] > 0:
        top = _NO_KEY
        csize = st[_CSIZE]
        for _ in range(BMS_SAMPLES):
            c = cset[_rand(st, csize)]
            if ckey[c] > top:
                top = ckey[c]
                u = c
    if tabu >= 0:
        ckey[tabu] = saved
    return u


@njit(cache=True)
def _numvc_run(indptr, indices, eid, ea, eb, inc, best, w, dscore, age, conf, ckey, cset, cpos, uset, upos, st,
               max_steps, target, exact):
    """Continue NuMVC for at most ``max_steps`` steps or until a cover of at most
    ``target`` vertices is recorded in ``best``. Returns the steps taken."""
    n = len(indptr) - 1
    m = len(ea)
    gamma = max(n // 2, 2)
    taken = 0
    while taken < max_steps:
        taken += 1
        st[_STEP] += 1
        step = st[_STEP]
        if st[_USIZE] == 0:
            if st[_CSIZE] < st[_BEST]:
                st[_BEST] = st[_CSIZE]
                best[:] = inc
                if st[_BEST] <= target:
                    break
            # a cover: drop its best vertex and go on with one vertex less
            st[_TABU] = -1
            u = _select_removal(ckey, cset, st, exact)
            if u < 0:
                break
            _flip_out(u, indptr, indices, eid, w, inc, dscore, ckey, age, conf, cset, cpos, uset, upos, st)
            age[u] = step
            continue
        # remove: the cover vertex of highest dscore (ties: older), not the one just added
        u = _select_removal(ckey, cset, st, exact)
        if u >= 0:
            _flip_out(u, indptr, indices, eid, w, inc, dscore, ckey, age, conf, cset, cpos, uset, upos, st)
            age[u] = step
        # add: an endpoint of a random uncovered edge whose configuration changed
        e = uset[_rand(st, st[_USIZE])]
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
        _flip_in(v, indptr, indices, eid, w, inc, dscore, ckey, conf, cset, cpos, uset, upos, st)
        age[v] = step
        ckey[v] = _key(dscore[v], step)
        st[_TABU] = v
        # weights of the uncovered edges grow (their endpoints are outside the cover)
        usize = st[_USIZE]
        for k in range(usize):
            e2 = uset[k]
            w[e2] += 1
            dscore[ea[e2]] += 1
            dscore[eb[e2]] += 1
        st[_TOTAL_W] += usize
        if st[_TOTAL_W] > gamma * m:
            _forget(ea, eb, inc, w, dscore, age, ckey, st)
    return taken


@njit(cache=True)
def _forget(ea, eb, inc, w, dscore, age, ckey, st):
    """All weights shrink to ``rho = 0.3`` times (at least 1); scores recomputed."""
    total = 0
    for e in range(len(ea)):
        w[e] = max(np.int32(0.3 * w[e]), np.int32(1))
        total += w[e]
    st[_TOTAL_W] = total
    dscore[:] = 0
    for e in range(len(ea)):
        a = ea[e]
        b = eb[e]
        if not inc[a] and not inc[b]:
            dscore[a] += w[e]
            dscore[b] += w[e]
        elif inc[a] and not inc[b]:
            dscore[a] -= w[e]
        elif inc[b] and not inc[a]:
            dscore[b] -= w[e]
    for v in range(len(inc)):
        ckey[v] = _key(dscore[v], age[v]) if inc[v] else _NO_KEY


@njit(cache=True)
def _flip_out(u, indptr, indices, eid, w, inc, dscore, ckey, age, conf, cset, cpos, uset, upos, st):
    inc[u] = False
    # a cover vertex's dscore lives in its key only
    dscore[u] = -((ckey[u] - (_AGE_MAX - min(age[u], _AGE_MAX))) >> _AGE_BITS)
    ckey[u] = _NO_KEY
    # sparse-set removal from the cover
    csize = st[_CSIZE]
    last = cset[csize - 1]
    cset[cpos[u]] = last
    cpos[last] = cpos[u]
    cpos[u] = -1
    st[_CSIZE] = csize - 1
    k = st[_USIZE]
    for p in range(indptr[u], indptr[u + 1]):
        z = indices[p]
        e = eid[p]
        conf[z] = True
        if inc[z]:
            ckey[z] -= np.int64(w[e]) << _AGE_BITS
        else:
            dscore[z] += w[e]
            upos[e] = k
            uset[k] = e
            k += 1
    conf[u] = False
    st[_USIZE] = k


@njit(cache=True)
def _flip_in(v, indptr, indices, eid, w, inc, dscore, ckey, conf, cset, cpos, uset, upos, st):
    inc[v] = True
    dscore[v] = -dscore[v]
    csize = st[_CSIZE]
    cpos[v] = csize
    cset[csize] = v
    st[_CSIZE] = csize + 1
    k = st[_USIZE]
    for p in range(indptr[v], indptr[v + 1]):
        z = indices[p]
        e = eid[p]
        conf[z] = True
        if inc[z]:
            ckey[z] += np.int64(w[e]) << _AGE_BITS
        else:
            dscore[z] -= w[e]
            # e was uncovered: sparse-set removal
            last = uset[k - 1]
            uset[upos[e]] = last
            upos[last] = upos[e]
            upos[e] = -1
            k -= 1
    st[_USIZE] = k


def _sorted_rows(indptr, indices):
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    indices = np.ascontiguousarray(indices, dtype=np.int64)
    rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    if len(indices) > 1 and np.any((np.diff(indices) < 0) & (rows[1:] == rows[:-1])):
        # the edge ids are found by binary search in the rows: sort them
        indices = indices[np.lexsort((indices, rows))]
    return indptr, indices


class NuMVC:
    """A resumable NuMVC search: :meth:`run` continues where the last call stopped,
    with the edge weights, ages and configuration learnt so far.

    Parameters
    ----------
    indptr, indices : array_like
        CSR of a simple undirected graph (rows in any order).
    init : array_like of bool, optional
        Starting cover (default: :func:`greedy_cover`); a set that is no cover is
        completed by one end of every edge it leaves uncovered.
    seed : int
        Seed of the search's own random generator (results are deterministic for a
        seed and a sequence of calls).

    Examples
    --------
    >>> import numpy as np
    >>> indptr = np.array([0, 2, 4, 6, 8, 10]); indices = np.array([1, 4, 0, 2, 1, 3, 2, 4, 0, 3])
    >>> ls = NuMVC(indptr, indices)   # the 5-cycle
    >>> ls.run(1000, target=3), len(ls.cover())
    (3, 3)
    """

    def __init__(self, indptr, indices, init=None, seed=0):
        indptr, indices = _sorted_rows(indptr, indices)
        n = len(indptr) - 1
        eid, ea, eb = edge_ids(indptr, indices)
        self.indptr = indptr
        self.indices = indices.astype(np.int32)
        self.eid = eid.astype(np.int32)
        self.ea = ea.astype(np.int32)
        self.eb = eb.astype(np.int32)
        m = len(ea)
        if init is None:
            init = greedy_cover(indptr, indices)
        self.inc = np.array(init, dtype=np.bool_)
        # NuMVC keeps the cover's size between improvements: start from a cover
        open_edges = ~(self.inc[ea] | self.inc[eb])
        self.inc[ea[open_edges]] = True
        self.best = self.inc.copy()
        self.w = np.ones(m, np.int32)
        self.dscore = np.zeros(n, np.int64)
        self.age = np.zeros(n, np.int64)
        self.conf = np.ones(n, np.bool_)
        self.ckey = np.zeros(n, np.int64)
        self.cset = np.zeros(n, np.int32)
        self.cpos = np.full(n, -1, np.int32)
        self.uset = np.zeros(m, np.int32)
        self.upos = np.full(m, -1, np.int32)
        self.st = np.zeros(7, np.int64)
        # xorshift state: any non-zero 32-bit value
        self.st[_RNG] = (int(seed) * 2654435761 + 12345) % 0xFFFFFFFF + 1
        self.exact = n <= EXACT_SELECTION
        _numvc_init(indptr, self.indices, self.eid, self.ea, self.eb, self.inc, self.best, self.w, self.dscore,
                    self.ckey, self.cset, self.cpos, self.uset, self.upos, self.st)

    def run(self, steps, target=0):
        """At most ``steps`` more steps, stopping at a cover of at most ``target``
        vertices. Returns the size of the best cover found so far."""
        if len(self.ea) and self.st[_BEST] > target:
            _numvc_run(self.indptr, self.indices, self.eid, self.ea, self.eb, self.inc, self.best, self.w,
                       self.dscore, self.age, self.conf, self.ckey, self.cset, self.cpos, self.uset, self.upos,
                       self.st, int(steps), int(target), self.exact)
        return self.best_size

    @property
    def best_size(self) -> int:
        """Size of the best cover found (the start cover counts)."""
        return int(self.st[_BEST])

    @property
    def steps(self) -> int:
        return int(self.st[_STEP])

    def cover(self):
        """Sorted vertex ids of the best cover found."""
        return np.flatnonzero(self.best).astype(np.int64)


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
    ls = NuMVC(indptr, indices, init=init, seed=seed)
    ls.run(steps, target)
    return ls.cover()
