"""Vertex cover kernelization: exhaustive reductions before the branch-and-reduce search.

Beyond paper 000 (whose search keeps only degree-one, degree-two-triangle and high-degree
rules inside the tree), the root graph is shrunk by rules that change its structure and
so cannot live in a degree array:

* degree zero (drop), degree one (take the neighbour), degree two in a triangle (take
  both neighbours);
* **degree-two folding** (``v`` with non-adjacent neighbours ``a, b``: replace ``v, a, b``
  by one new vertex adjacent to ``N(a) | N(b)``; the cover grows by one; undone after the
  search: the new vertex in the cover means ``a, b``, otherwise ``v``);
* **domination** (``N[v]`` inside ``N[u]`` for a neighbour ``u``: some minimum cover
  takes ``u``), checked for vertices of degree at most ``DOMINATION_MAX_DEGREE``;
* the **LP (Nemhauser-Trotter) reduction**: a half-integral optimum of the LP relaxation
  from a maximum matching of the bipartite double cover and Koenig's theorem; vertices at
  1 are taken and vertices at 0 dropped, which some minimum cover agrees with.

The minimum cover of the graph is the forced count plus a minimum cover of the kernel,
and :meth:`Kernel.lift` turns any cover of the kernel into a cover of the graph of that
size plus the forced count (optimal stays optimal).
"""
from __future__ import annotations

from collections import deque

import numpy as np
from numba import njit

__all__ = ["Kernel", "kernelize", "bipartite_matching", "DOMINATION_MAX_DEGREE"]

#: Domination is tested for vertices of at most this degree (set inclusion per neighbour).
DOMINATION_MAX_DEGREE = 32


class Kernel:
    """The reduced graph and what is needed to lift its covers.

    Attributes
    ----------
    indptr, indices : ndarray of int64
        CSR of the kernel (vertices ``0..n-1``, no isolated vertex, sorted rows).
    n : int
        Kernel vertices.
    forced : int
        Cover vertices fixed by the reductions (taken vertices plus one per fold).
    folds, taken, lp_rounds : int
        Statistics.
    """

    def __init__(self, n, adj, alive, log, forced, folds, lp_rounds):
        ids = [v for v in range(len(adj)) if alive[v] and adj[v]]
        self._origin = np.array(ids, dtype=np.int64)
        kid = {v: i for i, v in enumerate(ids)}
        counts = np.array([len(adj[v]) for v in ids], dtype=np.int64)
        self.indptr = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(counts, out=self.indptr[1:])
        self.indices = np.fromiter((kid[u] for v in ids for u in sorted(adj[v])), dtype=np.int64,
                                   count=int(self.indptr[-1]))
        self._n = n
        self._log = log
        self.forced = int(forced)
        self.folds = int(folds)
        self.taken = int(forced - folds)
        self.lp_rounds = int(lp_rounds)

    @property
    def n(self) -> int:
        """Number of kernel vertices."""
        return len(self.indptr) - 1

    def lift(self, kernel_cover):
        """Cover of the original graph from a cover (kernel ids) of the kernel."""
        cover = set(self._origin[np.asarray(kernel_cover, dtype=np.int64)].tolist())
        for entry in reversed(self._log):
            if entry[0] == "take":
                cover.add(entry[1])
            else:  # ("fold", v, a, b, w)
                _, v, a, b, w = entry
                if w in cover:
                    cover.discard(w)
                    cover.add(a)
                    cover.add(b)
                else:
                    cover.add(v)
        out = np.array(sorted(cover), dtype=np.int64)
        if len(out) and out[-1] >= self._n:
            raise RuntimeError("unresolved folded vertex (internal error)")
        return out


@njit(cache=True)
def _hopcroft_karp(indptr, indices, n_right):
    n_left = len(indptr) - 1
    inf = n_left + 1
    match_l = np.full(n_left, -1, np.int64)
    match_r = np.full(n_right, -1, np.int64)
    dist = np.empty(n_left, np.int64)
    queue = np.empty(n_left, np.int64)
    path_u = np.empty(n_left + 1, np.int64)
    path_v = np.empty(n_left + 1, np.int64)
    nxt = np.empty(n_left, np.int64)
    while True:
        # layers of left vertices by alternating distance from the free ones
        tail = 0
        for u in range(n_left):
            if match_l[u] < 0:
                dist[u] = 0
                queue[tail] = u
                tail += 1
            else:
                dist[u] = inf
        head = 0
        free_reached = False
        while head < tail:
            u = queue[head]
            head += 1
            for e in range(indptr[u], indptr[u + 1]):
                w = match_r[indices[e]]
                if w < 0:
                    free_reached = True
                elif dist[w] == inf:
                    dist[w] = dist[u] + 1
                    queue[tail] = w
                    tail += 1
        if not free_reached:
            return match_l
        # vertex-disjoint shortest augmenting paths, depth first along the layers
        for u in range(n_left):
            nxt[u] = indptr[u]
        for s in range(n_left):
            if match_l[s] >= 0:
                continue
            top = 0
            path_u[0] = s
            while top >= 0:
                u = path_u[top]
                moved = False
                while nxt[u] < indptr[u + 1]:
                    v = indices[nxt[u]]
                    nxt[u] += 1
                    w = match_r[v]
                    if w < 0:
                        path_v[top] = v
                        for lvl in range(top + 1):
                            match_l[path_u[lvl]] = path_v[lvl]
                            match_r[path_v[lvl]] = path_u[lvl]
                        top = -1
                        moved = True
                        break
                    if dist[w] == dist[u] + 1:
                        path_v[top] = v
                        top += 1
                        path_u[top] = w
                        moved = True
                        break
                if not moved:
                    dist[u] = inf  # dead end for this phase
                    top -= 1


def bipartite_matching(indptr, indices, n_right):
    """Maximum matching of a bipartite graph given as the CSR of its left side (Hopcroft-Karp,
    Numba, O(E sqrt(V))); returns the right partner of each left vertex (-1: unmatched).

    Examples
    --------
    >>> import numpy as np
    >>> bipartite_matching(np.array([0, 2, 3]), np.array([0, 1, 0]), 2).tolist()
    [1, 0]
    """
    indptr = np.asarray(indptr, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    if len(indptr) == 0 or indptr[0] != 0 or indptr[-1] != len(indices) or np.any(np.diff(indptr) < 0):
        raise ValueError("indptr must start at 0, not decrease and end at len(indices)")
    if len(indices) and (indices.min() < 0 or indices.max() >= n_right):
        raise ValueError(f"right vertex ids must lie in 0..{int(n_right) - 1}")
    return _hopcroft_karp(indptr, indices, int(n_right))


def _lp_half_integral(adj, alive):
    """Vertices at 1 and at 0 in a half-integral LP optimum (Nemhauser-Trotter)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import breadth_first_order

    live = [v for v in range(len(adj)) if alive[v] and adj[v]]
    if not live:
        return [], []
    idx = {v: i for i, v in enumerate(live)}
    n = len(live)
    rows = np.fromiter((idx[v] for v in live for _ in adj[v]), dtype=np.int64)
    cols = np.fromiter((idx[u] for v in live for u in adj[v]), dtype=np.int64, count=len(rows))
    B = sp.csr_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(n, n))
    match = bipartite_matching(B.indptr, B.indices, n)  # left i -> right match[i]
    right_mate = np.full(n, -1, dtype=np.int64)
    ok = match >= 0
    right_mate[match[ok]] = np.flatnonzero(ok)
    # alternating reachability from the unmatched left vertices (Koenig): nodes 0..n-1 left,
    # n..2n-1 right, 2n a source; left -> right along non-matching edges, right -> left
    # along the matching
    non_matching = match[rows] != cols
    src = np.concatenate([rows[non_matching], n + np.flatnonzero(right_mate >= 0),
                          np.full(int((~ok).sum()), 2 * n)])
    dst = np.concatenate([n + cols[non_matching], right_mate[right_mate >= 0], np.flatnonzero(~ok)])
    D = sp.csr_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(2 * n + 1, 2 * n + 1))
    reached = np.zeros(2 * n + 1, dtype=bool)
    reached[breadth_first_order(D, 2 * n, directed=True, return_predecessors=False)] = True
    # minimum cover of the double cover: unreached left vertices and reached right ones
    x = (~reached[:n]).astype(np.int64) + reached[n:2 * n].astype(np.int64)
    ones = [live[i] for i in np.flatnonzero(x == 2)]
    zeros = [live[i] for i in np.flatnonzero(x == 0)]
    return ones, zeros


def kernelize(indptr, indices, *, fold=True, domination=True, lp=True) -> Kernel:
    """Apply the reductions of this module until none applies; returns a :class:`Kernel`.

    Examples
    --------
    >>> import numpy as np
    >>> # a path of 5 vertices reduces completely: minimum cover 2
    >>> k = kernelize(np.array([0, 1, 3, 5, 7, 8]), np.array([1, 0, 2, 1, 3, 2, 4, 3]))
    >>> k.n, k.forced, k.lift([]).tolist()
    (0, 2, [1, 3])
    """
    indptr = np.asarray(indptr, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    n = len(indptr) - 1
    adj = [set(indices[indptr[v]:indptr[v + 1]].tolist()) for v in range(n)]
    alive = [True] * n
    log = []
    forced = folds = 0
    queue = deque(range(n))
    queued = [True] * n

    def push(v):
        if not queued[v]:
            queued[v] = True
            queue.append(v)

    def remove(v):
        for u in adj[v]:
            adj[u].discard(v)
            push(u)
        adj[v] = set()
        alive[v] = False

    def take(v):
        nonlocal forced
        log.append(("take", v))
        forced += 1
        remove(v)

    lp_rounds = 0
    while True:
        while queue:
            v = queue.popleft()
            queued[v] = False
            if not alive[v]:
                continue
            d = len(adj[v])
            if d == 0:
                alive[v] = False
            elif d == 1:
                take(next(iter(adj[v])))
            elif d == 2:
                a, b = adj[v]
                if b in adj[a]:
                    take(a)
                    take(b)
                elif fold:
                    w = len(adj)
                    nw = (adj[a] | adj[b]) - {v}
                    for x in (v, a, b):
                        remove(x)
                    adj.append(nw)
                    alive.append(True)
                    queued.append(False)
                    for u in nw:
                        adj[u].add(w)
                        push(u)
                    push(w)
                    log.append(("fold", v, a, b, w))
                    forced += 1
                    folds += 1
            elif domination and d <= DOMINATION_MAX_DEGREE:
                for u in adj[v]:
                    if len(adj[u]) >= d and len(adj[v] - adj[u]) == 1:  # N[v] inside N[u]
                        take(u)
                        push(v)
                        break
        if not lp:
            break
        ones, zeros = _lp_half_integral(adj, alive)
        lp_rounds += 1
        if not ones and not zeros:
            break
        for v in ones:
            if alive[v]:
                take(v)
        for v in zeros:
            if alive[v]:
                remove(v)
    return Kernel(n, adj, alive, log, forced, folds, lp_rounds)
