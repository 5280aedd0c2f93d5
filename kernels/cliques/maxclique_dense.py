"""Maximum clique of a small dense graph: one bit-parallel colouring branch and bound over
the whole graph (Numba), resumable.

:func:`kernels.cliques.maxclique_cpu.max_clique_cpu` splits the search into one
sub-problem per vertex (its later neighbours in the degeneracy order) and builds the
bitsets of each sub-problem's local graph: the right shape for large sparse graphs, whose
sub-problems are small. On a graph of a few hundred or thousand vertices where the clique
is a sizeable share of a vertex's neighbourhood (the complements of the vertex cover
kernels of dense graphs: the DIMACS family), those set-ups cost more than the search:
:class:`DenseCliqueSearch` instead keeps one bitset row per vertex of the whole graph,
numbered in the smallest-last order, and runs BBMC on it (every node: intersect the
candidate set with a row, colour it greedily in vertex order, branch on the vertices of
the largest colours first, keeping only those whose colour can beat the best clique).
The search is an explicit stack held by the object, so a caller with a time budget runs
it in slices and nothing is repeated.

References
----------
.. [1] P. San Segundo, D. Rodriguez-Losada and A. Jimenez, "An exact bit-parallel
   algorithm for the maximum clique problem", Computers & Operations Research 38(2),
   2011, 571-581 (BBMC).
.. [2] E. Tomita and T. Seki, "An Efficient Branch-and-Bound Algorithm for Finding a
   Maximum Clique", DMTCS 2003, LNCS 2731, Springer, 2003, 278-289 (the colouring bound).
.. [3] D. W. Matula and L. L. Beck, "Smallest-last ordering and clustering and graph
   coloring algorithms", Journal of the ACM 30(3), 1983, 417-427 (the order).
"""
from __future__ import annotations

import time

import numpy as np
from numba import njit, objmode

from .degeneracy import ONE, ZERO, ctz, popc

__all__ = ["DenseCliqueSearch", "bitset_rows"]

#: search states returned by the Numba loop
_DONE, _DEADLINE, _NODE_CAP, _REACHED = 0, 1, 2, 3


@njit(cache=True)
def bitset_rows(indptr, indices, complement):
    """``(n, ceil(n / 64))`` uint64 adjacency bitsets of a CSR graph, or of its complement
    (``complement=True``: every other vertex that is not a neighbour).

    Examples
    --------
    >>> import numpy as np
    >>> rows = bitset_rows(np.array([0, 1, 2, 2]), np.array([1, 0]), True)   # edge 0-1, vertex 2
    >>> [int(r[0]) for r in rows]   # the complement's edges 0-2 and 1-2
    [4, 4, 3]
    """
    n = len(indptr) - 1
    W = (n + 63) >> 6
    rows = np.zeros((n, max(W, 1)), np.uint64)
    for v in range(n):
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            rows[v, u >> 6] |= ONE << np.uint64(u & 63)
    if complement:
        for v in range(n):
            for w in range(W):
                rows[v, w] = ~rows[v, w]
            rows[v, v >> 6] &= ~(ONE << np.uint64(v & 63))
            if n & 63:
                rows[v, W - 1] &= (ONE << np.uint64(n & 63)) - ONE
    return rows


@njit(cache=True)
def _smallest_last(rows0):
    """Smallest-last order of a bitset graph: ``(order, core)`` with ``order[0]`` the
    vertex removed last (``core`` indexed by position: the degree at removal, maximised
    along the way, an upper bound on the clique through it minus one). The vertex removed
    is the lowest-numbered one of minimum degree, found in bitset buckets by degree."""
    n, W = rows0.shape
    deg = np.empty(n, np.int64)
    maxd = 0
    for v in range(n):
        c = 0
        for w in range(W):
            c += popc(rows0[v, w])
        deg[v] = c
        if c > maxd:
            maxd = c
    bucket = np.zeros((maxd + 1, W), np.uint64)
    for v in range(n):
        bucket[deg[v], v >> 6] |= ONE << np.uint64(v & 63)
    order = np.empty(n, np.int64)
    core = np.empty(n, np.int64)
    k = 0
    d = 0
    for p in range(n - 1, -1, -1):
        v = -1
        while v < 0:
            for w in range(W):
                x = bucket[d, w]
                if x != ZERO:
                    v = (w << 6) + ctz(x)
                    break
            if v < 0:
                d += 1
        bucket[d, v >> 6] &= ~(ONE << np.uint64(v & 63))
        deg[v] = -1  # removed
        if d > k:
            k = d
        order[p] = v
        core[p] = k
        for w in range(W):
            x = rows0[v, w]
            while x != ZERO:
                u = (w << 6) + ctz(x)
                x &= x - ONE
                du = deg[u]
                if du > 0:
                    bu = ONE << np.uint64(u & 63)
                    bucket[du, w] &= ~bu
                    bucket[du - 1, w] |= bu
                    deg[u] = du - 1
        if d > 0:
            d -= 1  # a neighbour may now have one less
    return order, core


@njit(cache=True)
def _renumber(rows0, order):
    """The rows with vertex ``order[i]`` renamed ``i``."""
    n, W = rows0.shape
    pos = np.empty(n, np.int64)
    for i in range(n):
        pos[order[i]] = i
    rows = np.zeros((n, W), np.uint64)
    for i in range(n):
        v = order[i]
        for w in range(W):
            x = rows0[v, w]
            while x != ZERO:
                b = ctz(x)
                x &= x - ONE
                j = pos[(w << 6) + b]
                rows[i, j >> 6] |= ONE << np.uint64(j & 63)
    return rows


#: word operations the greedy passes may spend on the choice of the best next vertex
GREEDY_WORK = 1 << 18
#: steps of the local search from the greedy clique (a fraction of a millisecond on the
#: Table I graphs; it finds p_hat300-3's maximum clique in under 100)
LOCAL_STEPS = 1000


@njit(cache=True)
def _greedy_clique(rows, target, out):
    """The largest clique of two greedy passes, written to ``out``; returns its size.
    The first starts from every vertex and always takes the first candidate in the order
    (high core first); the second starts from the first vertices in the order and takes
    the candidate with the most neighbours among the candidates, within
    ``GREEDY_WORK`` word operations. Both stop at a clique of ``target`` vertices."""
    n, W = rows.shape
    P = np.empty(W, np.uint64)
    cur = np.empty(n, np.int64)
    best = 0
    for v in range(n):
        if best >= target:
            return best
        for w in range(W):
            P[w] = rows[v, w]
        cur[0] = v
        size = 1
        w = 0
        while w < W:
            x = P[w]
            if x == ZERO:
                w += 1
                continue
            i = (w << 6) + ctz(x)
            cur[size] = i
            size += 1
            for t in range(w, W):
                P[t] &= rows[i, t]
        if size > best:
            best = size
            for t in range(size):
                out[t] = cur[t]
    work = 0
    for v in range(n):
        if work > GREEDY_WORK or best >= target:
            break
        for w in range(W):
            P[w] = rows[v, w]
        cur[0] = v
        size = 1
        while True:
            bi = -1
            bd = -1
            for w in range(W):
                x = P[w]
                while x != ZERO:
                    i = (w << 6) + ctz(x)
                    x &= x - ONE
                    c = 0
                    for t in range(W):
                        c += popc(rows[i, t] & P[t])
                    work += W
                    if c > bd:
                        bd = c
                        bi = i
            if bi < 0:
                break
            cur[size] = bi
            size += 1
            for t in range(W):
                P[t] &= rows[bi, t]
        if size > best:
            best = size
            for t in range(size):
                out[t] = cur[t]
    return best


@njit(cache=True)
def _clique_local_search(rows, init, size0, target, steps, seed, out):
    """A plateau search for a clique of ``target`` vertices from the clique ``init[:size0]``:
    add a vertex adjacent to the whole clique when there is one, else swap in a vertex
    adjacent to all but one member for that member (random among them; a member swapped
    out may not return for a few steps), restarting from the start clique when a long
    walk finds nothing larger. The candidates come from bit-sliced counts of
    non-adjacency over the members' rows. Writes the largest clique to ``out``; returns
    its size."""
    n, W = rows.shape
    K = np.zeros(W, np.uint64)
    mask = np.zeros(W, np.uint64)
    for v in range(n):
        mask[v >> 6] |= ONE << np.uint64(v & 63)
    members = np.empty(n, np.int64)
    tabu = np.zeros(n, np.int64)
    ones = np.empty(W, np.uint64)
    twos = np.empty(W, np.uint64)
    cand = np.empty(n, np.int64)
    best = size0
    for t in range(size0):
        out[t] = init[t]
    x = np.uint64(seed * 2654435761 + 88172645463325252)
    size = 0
    step = 0
    since = 0
    while step < steps and best < target:
        if size == 0 or since > 4 * n:
            for w in range(W):
                K[w] = ZERO
            for t in range(size0):
                v = init[t]
                members[t] = v
                K[v >> 6] |= ONE << np.uint64(v & 63)
            size = size0
            since = 0
        step += 1
        since += 1
        # non-members missed by no member (ones == 0) or by exactly one (ones & ~twos)
        for w in range(W):
            ones[w] = ZERO
            twos[w] = ZERO
        for t in range(size):
            r = rows[members[t]]
            for w in range(W):
                miss = ~r[w] & ~K[w] & mask[w]
                twos[w] |= ones[w] & miss
                ones[w] |= miss
        nadd = 0
        for w in range(W):
            a = ~ones[w] & ~K[w] & mask[w]
            while a != ZERO:
                cand[nadd] = (w << 6) + ctz(a)
                a &= a - ONE
                nadd += 1
        x ^= x << np.uint64(13)
        x ^= x >> np.uint64(7)
        x ^= x << np.uint64(17)
        if nadd > 0:
            u = cand[np.int64(x % np.uint64(nadd))]
            members[size] = u
            size += 1
            K[u >> 6] |= ONE << np.uint64(u & 63)
            if size > best:
                best = size
                for t in range(size):
                    out[t] = members[t]
                since = 0
            continue
        nswap = 0
        for w in range(W):
            a = ones[w] & ~twos[w]
            while a != ZERO:
                u = (w << 6) + ctz(a)
                a &= a - ONE
                if tabu[u] <= step:
                    cand[nswap] = u
                    nswap += 1
        if nswap == 0:
            size = 0  # stuck: restart
            continue
        u = cand[np.int64(x % np.uint64(nswap))]
        for t in range(size):
            v = members[t]
            if rows[v, u >> 6] & (ONE << np.uint64(u & 63)) == ZERO:
                K[v >> 6] &= ~(ONE << np.uint64(v & 63))
                K[u >> 6] |= ONE << np.uint64(u & 63)
                members[t] = u
                tabu[v] = step + 7
                break
    return best


@njit(cache=True)
def _colour(d, W, rows, SP, L, C, kmin, U, Q, CL):
    """Greedy sequential colouring of ``SP[d]`` in vertex order, class by class; the
    vertices whose colour is at least ``kmin`` go to ``L[d]`` (by colour), their colours
    to ``C[d]``. Returns their count.

    Such a vertex ``v`` is first offered to the classes below ``kmin`` (BBMCR's
    recolouring, MCS's Re-NUMBER): when it conflicts with exactly one vertex ``w`` of a
    class ``k1`` and ``w`` conflicts with no vertex of a later class ``k2 < kmin``, ``w``
    moves to ``k2`` and ``v`` to ``k1``, and ``v`` is not branched on. ``CL`` holds the
    classes below ``kmin`` as bitsets."""
    for w in range(W):
        U[w] = SP[d, w]
    cnt = 0
    col = 0
    first = 0
    while True:
        while first < W and U[first] == ZERO:
            first += 1
        if first == W:
            break
        col += 1
        for w in range(first, W):
            Q[w] = U[w]
        if col < kmin:
            for w in range(W):
                CL[col, w] = ZERO
        w = first
        while w < W:
            x = Q[w]
            if x == ZERO:
                w += 1
                continue
            b = ctz(x)
            bi = ONE << np.uint64(b)
            Q[w] &= ~bi
            U[w] &= ~bi
            i = (w << 6) + b
            row = rows[i]
            if col < kmin:
                CL[col, w] |= bi
            else:
                moved = False
                for k1 in range(1, kmin):
                    hit = -1
                    many = False
                    cl = CL[k1]
                    for t in range(W):
                        a = row[t] & cl[t]
                        if a != ZERO:
                            if hit >= 0 or (a & (a - ONE)) != ZERO:
                                many = True
                                break
                            hit = (t << 6) + ctz(a)
                    if many:
                        continue
                    if hit < 0:  # no conflict (cannot happen for k1 < col: first fit)
                        continue
                    hrow = rows[hit]
                    for k2 in range(k1 + 1, kmin):
                        free = True
                        cl = CL[k2]
                        for t in range(W):
                            if hrow[t] & cl[t] != ZERO:
                                free = False
                                break
                        if free:
                            hb = ONE << np.uint64(hit & 63)
                            CL[k1, hit >> 6] &= ~hb
                            CL[k2, hit >> 6] |= hb
                            CL[k1, w] |= bi
                            moved = True
                            break
                    if moved:
                        break
                if moved:
                    continue  # v left this class: its neighbours stay available here
                L[d, cnt] = i
                C[d, cnt] = col
                cnt += 1
            for t in range(w, W):
                Q[t] &= ~row[t]
    return cnt


@njit(cache=True)
def _root(rows, core, best, SP, L, C):
    """The root's candidates (every vertex whose core leaves room for a clique larger
    than ``best``) into ``SP[0]``, coloured; returns the count to branch on."""
    n, W = rows.shape
    for i in range(n):
        if core[i] + 1 > best:
            SP[0, i >> 6] |= ONE << np.uint64(i & 63)
    CL = np.empty((n + 1, W), np.uint64)
    return _colour(0, W, rows, SP, L, C, best + 1, np.empty(W, np.uint64), np.empty(W, np.uint64), CL)


def _clock():
    return time.perf_counter()


@njit(cache=True)
def _search(rows, SP, L, C, idx, clq, best_clq, st, upper, deadline, node_cap):
    """Run the branch and bound from the stack state ``st = [depth, best, nodes]`` until it
    is exhausted, ``best`` reaches ``upper``, ``clock() > deadline`` (0: none) or
    ``node_cap`` nodes (0: none) pass in this call. ``SP[d]`` holds the candidates of
    depth ``d`` (the clique so far is ``clq[:d]``), ``L[d][:idx[d]]`` those still to
    branch on. Returns the state (``_DONE``, ``_DEADLINE``, ``_NODE_CAP``, ``_REACHED``)."""
    n, W = rows.shape
    U = np.empty(W, np.uint64)
    Q = np.empty(W, np.uint64)
    CL = np.empty((n + 1, W), np.uint64)
    d = st[0]
    best = st[1]
    nodes0 = st[2]
    nodes = nodes0
    polled = nodes
    status = _DONE
    while d >= 0:
        if best >= upper:
            status = _REACHED
            break
        if nodes - polled >= 1024:
            polled = nodes
            if node_cap > 0 and nodes - nodes0 >= node_cap:
                status = _NODE_CAP
                break
            # a trip to Python every 1,024 nodes: the clock, and KeyboardInterrupt
            with objmode(now="float64"):
                now = _clock()
            if deadline > 0.0 and now > deadline:
                status = _DEADLINE
                break
        j = idx[d] - 1
        if j < 0 or d + C[d, j] <= best:
            # nothing left here that can beat the best clique
            idx[d] = 0
            d -= 1
            continue
        idx[d] = j
        i = L[d, j]
        SP[d, i >> 6] &= ~(ONE << np.uint64(i & 63))
        clq[d] = i
        nodes += 1
        pc = 0
        row = rows[i]
        sp = SP[d]
        nxt = SP[d + 1]
        for w in range(W):
            a = sp[w] & row[w]
            nxt[w] = a
            pc += popc(a)
        if pc == 0:
            if d + 1 > best:
                best = d + 1
                for t in range(d + 1):
                    best_clq[t] = clq[t]
            continue
        if d + 1 + pc <= best:
            continue
        kmin = best - d
        if kmin < 1:
            kmin = 1
        idx[d + 1] = _colour(d + 1, W, rows, SP, L, C, kmin, U, Q, CL)
        d += 1
    if d < 0:
        d = 0
        idx[0] = 0
    st[0] = d
    st[1] = best
    st[2] = nodes
    return status


class DenseCliqueSearch:
    """Maximum clique of a small dense graph (or of its complement) by bit-parallel
    colouring branch and bound over the whole graph, in resumable slices.

    Parameters
    ----------
    indptr, indices : array_like
        CSR of a simple undirected graph (rows need not be sorted).
    complement : bool
        Search the complement graph instead (a maximum independent set of the graph).
    lower : int
        Look only for cliques of more than ``lower`` vertices.
    initial : array_like of int, optional
        A known clique (of the searched graph): the search looks for larger ones.
    upper : int, optional
        Stop as soon as the best clique has ``upper`` vertices (a proven upper bound, or
        the size that answers a decision question).
    greedy : bool
        Start from the best clique of greedy passes and a short local search from it
        (``greedy_clique``, kept whether it is used or not).
    local_steps : int
        Steps of that local search.

    Attributes
    ----------
    best : ndarray of int64
        The largest clique found (sorted ids), empty when none beat ``lower``.
    size : int
        Its size, or ``lower`` / ``len(initial)`` until a larger one is found.
    nodes : int
        Search-tree nodes so far.
    finished : bool
        The search is over: ``best`` is a maximum clique (or none larger than ``lower``
        exists), or it reached ``upper``.

    Examples
    --------
    >>> import numpy as np
    >>> indptr = np.array([0, 2, 4, 6, 8, 10]); indices = np.array([1, 4, 0, 2, 1, 3, 2, 4, 0, 3])
    >>> s = DenseCliqueSearch(indptr, indices, complement=True)   # independent sets of the 5-cycle
    >>> s.solve(), s.size, len(s.best)
    (True, 2, 2)

    References
    ----------
    P. San Segundo, D. Rodriguez-Losada and A. Jimenez, "An exact bit-parallel algorithm
    for the maximum clique problem", Computers & Operations Research 38(2), 2011, 571-581.
    """

    def __init__(self, indptr, indices, complement=False, lower=0, initial=None, upper=None, greedy=True,
                 local_steps=LOCAL_STEPS):
        indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        indices = np.ascontiguousarray(indices, dtype=np.int64)
        self.n = n = len(indptr) - 1
        self.nodes = 0
        self.best = np.zeros(0, np.int64)
        init = np.zeros(0, np.int64) if initial is None else np.asarray(initial, dtype=np.int64)
        self.size = max(int(lower), len(init), 0)
        if initial is not None and len(init) >= int(lower):
            self.best = np.sort(init)
        self.upper = n if upper is None else int(upper)
        self.bound = n
        self.greedy_clique = self.best
        self.finished = n == 0 or self.size >= self.upper
        if self.finished:
            return
        rows0 = bitset_rows(indptr, indices, complement)
        order, core = _smallest_last(rows0)
        self._order = order
        self._rows = rows = _renumber(rows0, order)
        # the largest core bounds the clique from above (+1)
        self.bound = int(core.max()) + 1
        # a clique from the greedy passes and the local search from it: kept
        # (``greedy_clique``) even when not above ``lower``
        out = np.empty(n, np.int64)
        target = min(self.upper, self.bound)
        g = _greedy_clique(rows, target, out)
        if g < target and local_steps > 0:
            g = _clique_local_search(rows, out[:g].copy(), g, target, int(local_steps), 1, out)
        self.greedy_clique = np.sort(order[out[:g]])
        if greedy and g > self.size:
            self.size = g
            self.best = self.greedy_clique
        self.finished = self.size >= min(self.upper, self.bound)
        if self.finished:
            return
        W = rows.shape[1]
        D = min(int(core.max()) + 3, n + 1)
        self._SP = np.zeros((D + 1, W), np.uint64)
        self._L = np.empty((D + 1, n), np.int32)
        self._C = np.empty((D + 1, n), np.int32)
        self._idx = np.zeros(D + 1, np.int64)
        self._clq = np.zeros(D + 1, np.int64)
        self._best_clq = np.zeros(D + 1, np.int64)
        self._idx[0] = _root(rows, core, self.size, self._SP, self._L, self._C)
        self._st = np.array([0, self.size, 0], np.int64)

    def solve(self, deadline=None, node_cap=0):
        """Search until finished (True), until ``time.perf_counter()`` passes ``deadline``
        or after about ``node_cap`` more tree nodes (False: call again to go on)."""
        if self.finished:
            return True
        before = int(self._st[1])
        status = _search(self._rows, self._SP, self._L, self._C, self._idx, self._clq, self._best_clq, self._st,
                         self.upper, 0.0 if deadline is None else float(deadline), int(node_cap))
        self.nodes = int(self._st[2])
        best = int(self._st[1])
        if best > before:
            self.size = best
            self.best = np.sort(self._order[self._best_clq[:best]])
        self.finished = status in (_DONE, _REACHED)
        return self.finished

    def raise_lower(self, clique):
        """Use a larger clique found elsewhere as the best (prunes the rest of the search)."""
        clique = np.asarray(clique, dtype=np.int64)
        if len(clique) <= self.size:
            return False
        self.best = np.sort(clique)
        self.size = len(clique)
        if not self.finished:
            self._st[1] = self.size
            self.finished = self.size >= min(self.upper, self.bound)
        return True
