"""Maximum independent set by branch and bound with clique covers and MaxSAT reasoning.

The maximum independent sets of ``G`` are the maximum cliques of its complement, and
this is a maximum clique search in the complement (MCS / MoMC family) written for a
*sparse* ``G``: it never builds the complement and every step walks adjacency lists of
``G``. It is the exact search that pays on small kernels whose reductions have run out
(random sparse graphs, dense cores of PACE instances), where branch-and-reduce needs too
many nodes.

At a node with independent set ``I`` (``d`` vertices) and candidates ``P`` (vertices
adjacent to no vertex of ``I``, in a fixed order), ``K = best - d`` is what ``P`` must
beat. :func:`kernels.vertex_cover.maxsat.cover_and_absorb` covers ``P`` by at most ``K``
cliques and absorbs leftovers by MaxSAT reasoning; the vertices it cannot absorb
(``B``) are branched on, last first, each with the candidates that are not its
neighbours, minus the branching vertices already done. ``B`` empty prunes the node.

The vertex order is smallest-last in the complement (repeatedly remove a vertex of
largest degree in ``G`` and put it last). The search runs from an explicit stack in
arrays and stops after a budget of work; the next call continues.

References
----------
E. Tomita, Y. Sutani, T. Higashi, S. Takahashi and M. Wakatsuki, "A simple and faster
branch-and-bound algorithm for finding a maximum clique", WALCOM 2010, LNCS 5942,
191-203.

C.-M. Li, H. Jiang and F. Manya, "On minimization of the number of branches in
branch-and-bound algorithms for the maximum clique problem", Computers & Operations
Research 84 (2017) 1-15.
"""
from __future__ import annotations

import time

import numpy as np
from numba import njit

from .local_search import bucket_decrement, degree_buckets
from .maxsat import MaxsatWork, cover_and_absorb, first_fit_cover, improve_cover_order

__all__ = ["MisBranchAndBound"]

@njit(cache=True)
def _smallest_last_order(indptr, indices, n):
    """Repeatedly remove a vertex of maximum remaining degree in G and put it last."""
    deg, maxd, head, nxt, prv = degree_buckets(indptr, n)
    gone = np.zeros(n, np.bool_)
    order = np.empty(n, np.int64)
    pos = n - 1
    cur = maxd
    while pos >= 0:
        while cur > 0 and head[cur] < 0:
            cur -= 1
        v = head[cur]
        head[cur] = nxt[v]
        if nxt[v] >= 0:
            prv[nxt[v]] = -1
        gone[v] = True
        order[pos] = v
        pos -= 1
        for p in range(indptr[v], indptr[v + 1]):
            u = indices[p]
            if not gone[u]:
                bucket_decrement(u, deg, head, nxt, prv)
    return order


@njit(cache=True)
def _relabel(indptr, indices, order):
    """CSR of G with vertex ``order[i]`` renamed ``i`` (rows sorted)."""
    n = len(order)
    rank = np.empty(n, np.int64)
    for i in range(n):
        rank[order[i]] = i
    ip = np.zeros(n + 1, np.int64)
    for i in range(n):
        v = order[i]
        ip[i + 1] = ip[i] + indptr[v + 1] - indptr[v]
    ix = np.empty(ip[n], np.int64)
    for i in range(n):
        v = order[i]
        q = ip[i]
        for p in range(indptr[v], indptr[v + 1]):
            ix[q] = rank[indices[p]]
            q += 1
        ix[ip[i]:ip[i + 1]].sort()
    return ip, ix


@njit(cache=True)
def run_bnb(ip, ix, n, Pbuf, Pst, Pln, Bbuf, Bst, Bln, Bix, clique, stampd, best_set, st_, work_budget, maxsat,
            cls, stv, rsn, inA, procd, chead, cnext, ctail, csize, vhead, mnext, mrel, mcls, rhead, rnext, rcnt,
            vcnt, csat, vowner, tk, tv, queue, involved, inv_list, cnt, mark):
    """Advance the search by about ``work_budget`` adjacency visits. ``st_``: 0 depth,
    1 best size, 2 nodes, 3 done, 4 work, 5 node stamp counter, 6 need room, 7 mark counter. Returns True when
    finished."""
    work0 = st_[4]
    while True:
        if st_[3]:
            return True
        if st_[4] - work0 > work_budget:
            return False
        d = st_[0]
        if d < 0:
            st_[3] = 1
            return True
        best = st_[1]
        if Bix[d] == -2:
            np_ = Pln[d]
            if Bst[d] + np_ + 1 > len(Bbuf) or Pst[d] + 2 * np_ + 1 > len(Pbuf):
                st_[6] = 1
                return False
            st_[2] += 1
            st_[5] += 1
            stamp = st_[5]
            stampd[d] = stamp
            K = best - d
            P = Pbuf[Pst[d]:Pst[d] + np_]
            B = Bbuf[Bst[d]:Bst[d] + np_]
            nb = cover_and_absorb(ip, ix, P, np_, K, cls, stv, rsn, inA, stamp, chead, cnext, ctail, csize, vhead,
                                   mnext, mrel, mcls, rhead, rnext, rcnt, vcnt, csat, vowner, tk, tv, queue,
                                   involved, inv_list, cnt, B, maxsat)
            st_[4] += np_ * 4 + 16
            Bln[d] = nb
            Bix[d] = nb - 1
            if nb == 0:
                Bix[d] = -2
                st_[0] = d - 1
                continue
        j = Bix[d]
        if j < 0:
            Bix[d] = -2
            st_[0] = d - 1
            continue
        v = Bbuf[Bst[d] + j]
        Bix[d] = j - 1
        stamp = stampd[d]
        st_[7] += 1
        gm = st_[7]  # a fresh mark per child (siblings must not see each other's marks)
        mark[v] = gm
        for p in range(ip[v], ip[v + 1]):
            mark[ix[p]] = gm
        q = Pst[d] + Pln[d]
        k = 0
        for t in range(Pst[d], Pst[d] + Pln[d]):
            u = Pbuf[t]
            if mark[u] != gm and procd[u] != stamp:
                Pbuf[q + k] = u
                k += 1
        procd[v] = stamp
        st_[4] += Pln[d] + ip[v + 1] - ip[v]
        clique[d] = v
        if k == 0:
            if d + 1 > best:
                st_[1] = d + 1
                best_set[:] = False
                for t in range(d + 1):
                    best_set[clique[t]] = True
            continue
        if d + 1 + k <= best:
            continue
        Pst[d + 1] = q
        Pln[d + 1] = k
        Bst[d + 1] = Bst[d] + Bln[d]
        Bix[d + 1] = -2
        st_[0] = d + 1


#: iterated-greedy rounds that polish the root clique cover
ORDER_ROUNDS = 12


def root_clique_cover(indptr, indices, n):
    """Fewest cliques found covering the graph: greedy covers from the smallest-last,
    input and increasing-degree orders, each polished by iterated greedy (planted or
    structural clique partitions are often aligned with the input numbering and lost by
    degree orders). Returns ``(cls, k)``: the clique of each vertex and their number."""
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    indices = np.ascontiguousarray(indices, dtype=np.int64)
    deg = np.diff(indptr)
    best, best_order = n + 1, None
    for order in (_smallest_last_order(indptr, indices, n), np.arange(n, dtype=np.int64),
                  np.argsort(deg, kind="stable").astype(np.int64)):
        o, k = improve_cover_order(indptr, indices, order, ORDER_ROUNDS)
        if k < best:
            best, best_order = k, o
    cls = np.empty(n, np.int64)
    if n:
        first_fit_cover(indptr, indices, best_order, cls)
    return cls, min(best, n)


def root_cover_bound(indptr, indices, n):
    """Size of :func:`root_clique_cover`: every independent set has at most that many
    vertices."""
    return root_clique_cover(indptr, indices, n)[1]


class MisBranchAndBound:
    """Maximum independent set by colouring and MaxSAT branch and bound (see module).

    Parameters
    ----------
    indptr, indices : array_like
        CSR of a simple undirected graph.
    initial : array_like of int, optional
        A known independent set (the search then looks for larger ones only).
    maxsat : bool
        Use MaxSAT absorption (default); False leaves the clique-cover bound alone.
    larger_than : int, optional
        Look only for independent sets of more than this many vertices (decision
        version; ``initial`` must then be omitted).
    upper : int, optional
        A proven upper bound on the independent sets of the graph (default: the best
        root clique cover, :func:`root_cover_bound`). The search is over as soon as the
        best set found reaches it.

    Examples
    --------
    >>> import numpy as np
    >>> indptr = np.array([0, 2, 4, 6, 8, 10]); indices = np.array([1, 4, 0, 2, 1, 3, 2, 4, 0, 3])
    >>> b = MisBranchAndBound(indptr, indices)   # the 5-cycle
    >>> b.solve(), b.size
    (True, 2)
    """

    def __init__(self, indptr, indices, initial=None, maxsat=True, larger_than=None, upper=None):
        indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        indices = np.ascontiguousarray(indices, dtype=np.int64)
        n = len(indptr) - 1
        self.n = n
        self.order = _smallest_last_order(indptr, indices, n) if n else np.zeros(0, np.int64)
        self.ip, self.ix = _relabel(indptr, indices, self.order)
        depth = n + 2
        self.Pbuf = np.zeros(max(4 * n, 64), np.int64)
        self.Pbuf[:n] = np.arange(n)
        self.Pst = np.zeros(depth + 1, np.int64)
        self.Pln = np.zeros(depth + 1, np.int64)
        self.Pln[0] = n
        self.Bbuf = np.zeros(max(4 * n, 64), np.int64)
        self.Bst = np.zeros(depth + 1, np.int64)
        self.Bln = np.zeros(depth + 1, np.int64)
        self.Bix = np.full(depth + 1, -2, np.int64)
        self.clique = np.zeros(depth + 1, np.int64)
        self.stampd = np.zeros(depth + 1, np.int64)
        self.best_set = np.zeros(max(n, 1), np.bool_)
        self.st = np.zeros(8, np.int64)
        self.maxsat = bool(maxsat)
        self._work = MaxsatWork(n)
        if initial is not None:
            rank = np.empty(n, np.int64)
            rank[self.order] = np.arange(n)
            init = np.asarray(initial, dtype=np.int64)
            self.best_set[rank[init]] = True
            self.st[1] = len(init)
        elif larger_than is not None:
            self.st[1] = int(larger_than)
        self._initial_size = int(self.st[1])
        # the root's bound from the best clique cover found: a known set that large is optimal
        self.upper = int(upper if upper is not None else (root_cover_bound(indptr, indices, n) if n else 0))
        self.finished = n == 0 or self.st[1] >= self.upper
        self._budget = 100_000

    def _grow(self):
        top = int(max(self.Pst[: self.st[0] + 1].max() + 2 * self.Pln[: self.st[0] + 1].max(),
                      self.Bst[: self.st[0] + 1].max() + 2 * self.n)) + 2 * self.n + 8
        for name in ("Pbuf", "Bbuf"):
            old = getattr(self, name)
            if len(old) < top:
                new = np.zeros(max(2 * len(old), top), np.int64)
                new[: len(old)] = old
                setattr(self, name, new)
        self.st[6] = 0

    def step(self, work):
        if self.finished:
            return True
        if self.st[6]:
            self._grow()
        cls, st, rsn, inA, procd, chead, cnext, ctail, csize, vhead, rcnt, vcnt, csat = self._work.w1
        mnext, mrel, mcls, rnext = self._work.wm
        rhead, vowner = self._work.wr
        tk, tv, queue, involved, inv_list, cnt, mark = self._work.w2
        self.finished = bool(run_bnb(self.ip, self.ix, self.n, self.Pbuf, self.Pst, self.Pln, self.Bbuf, self.Bst,
                                     self.Bln, self.Bix, self.clique, self.stampd, self.best_set, self.st, int(work),
                                     self.maxsat, cls, st, rsn, inA, procd, chead, cnext, ctail, csize, vhead, mnext,
                                     mrel, mcls, rhead, rnext, rcnt, vcnt, csat, vowner, tk, tv, queue, involved,
                                     inv_list, cnt, mark))
        return self.finished

    def solve(self, deadline=None, clock=time.perf_counter):
        """Run until finished (True) or until ``clock()`` passes ``deadline`` (False)."""
        while not self.finished:
            if deadline is not None and clock() >= deadline:
                return False
            t0 = time.perf_counter()
            self.step(self._budget)
            dt = time.perf_counter() - t0
            if dt < 0.025:
                self._budget = min(self._budget * 2, 1 << 40)
            elif dt > 0.1:
                self._budget = max(self._budget // 2, 10_000)
        return True

    def raise_bound(self, independent_set):
        """Use a larger independent set (input numbering) found elsewhere as the best."""
        iset = np.asarray(independent_set, dtype=np.int64)
        if len(iset) <= self.st[1]:
            return False
        rank = np.empty(self.n, np.int64)
        rank[self.order] = np.arange(self.n)
        self.best_set[:] = False
        self.best_set[rank[iset]] = True
        self.st[1] = len(iset)
        self._initial_size = max(self._initial_size, len(iset))
        self.finished = self.finished or self.st[1] >= self.upper
        return True

    @property
    def size(self) -> int:
        return int(self.st[1])

    @property
    def nodes(self) -> int:
        return int(self.st[2])

    @property
    def improved(self) -> bool:
        """Whether the search found a set larger than the initial one (or bound)."""
        return int(self.st[1]) > self._initial_size

    def independent_set(self):
        """Vertex ids (input numbering) of the best independent set found."""
        return np.sort(self.order[np.flatnonzero(self.best_set[: self.n])])
