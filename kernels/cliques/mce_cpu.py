"""Maximal clique enumeration on the CPU: Bron-Kerbosch with pivoting (Numba).

The top level is split by a degeneracy ordering: vertex ``v`` starts its own sub-problem
with ``candidate = P`` (neighbours later in the order, at most the degeneracy ``D``) and
``not = X`` (earlier neighbours). A sub-problem is a small local graph: every local vertex
(``P`` and the ``X`` vertices with at least one neighbour in ``P``; the others can never
block a clique below the root) holds a bitset row over ``P``, and every ``P`` vertex a
bitset column over ``X``. The search is the paper's Procedure 1/2 with an explicit stack:
the pivot ``fixv`` maximizes ``|P & N(u)|`` over ``P | X`` (fewest branches), the branch
vertices are ``P \\ N(fixv)``, and ``filter`` is a bitwise AND.

The enumeration is resumable: all state lives in arrays owned by the caller
(:class:`MceState`), and a run returns as soon as the output buffer is full, so the
cliques stream out in chunks of bounded size (the CPU twin of the paper's output
buffering), none lost and none duplicated. A run also returns after a budget of search
nodes (:data:`NODE_BUDGET`, a fraction of a second), so that the Python loop around it
sees Ctrl-C and can report progress, however long the whole enumeration takes.

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

from .degeneracy import ONE, ZERO, build_row, ctz, later_count, popc, ranked_degeneracy

__all__ = ["MceState", "mce_chunks_cpu", "mce_count_cpu"]


@njit(cache=True)
def _setup(indptr, indices, v, rank, pmark, Pv, Xv, rows, cols, keep_x):
    """Local graph of the sub-problem of ``v``; returns ``(k, r)``."""
    k = 0
    rv = rank[v]
    for e in range(indptr[v], indptr[v + 1]):
        u = indices[e]
        if rank[u] > rv:
            Pv[k] = u
            pmark[u] = k
            k += 1
    W = (k + 63) >> 6
    for i in range(k):
        build_row(indptr, indices, Pv[i], pmark, Pv, k, rows[i], W)
    r = 0
    if keep_x and k > 0:
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if rank[u] < rv:
                if build_row(indptr, indices, u, pmark, Pv, k, rows[k + r], W):
                    Xv[r] = u
                    r += 1
        WX = (r + 63) >> 6
        for i in range(k):
            for w in range(WX):
                cols[i, w] = ZERO
        for j in range(r):
            row = rows[k + j]
            bj = ONE << np.uint64(j & 63)
            wj = j >> 6
            for w in range(W):
                x = row[w]
                while x != ZERO:
                    i = (w << 6) + ctz(x)
                    x &= x - ONE
                    cols[i, wj] |= bj
    for i in range(k):
        pmark[Pv[i]] = -1
    return k, r


@njit(cache=True)
def _pivot_branches(d, k, r, W, WX, rows, SP, SXP, SXX, SB):
    """Choose ``fixv`` (max ``|P & N(u)|`` over ``P | X``) and set ``SB[d] = P \\ N(fixv)``;
    returns the number of branches."""
    P = SP[d]
    pc = 0
    for w in range(W):
        pc += popc(P[w])
    best = -1
    bu = -1
    found = False
    for w in range(W):
        x = P[w] | SXP[d, w]
        while x != ZERO:
            u = (w << 6) + ctz(x)
            x &= x - ONE
            row = rows[u]
            c = 0
            for t in range(W):
                c += popc(P[t] & row[t])
            if c > best:
                best = c
                bu = u
                inP = (P[u >> 6] >> np.uint64(u & 63)) & ONE
                if c == pc - np.int64(inP):
                    found = True
                    break
        if found:
            break
    if not found:
        for w in range(WX):
            x = SXX[d, w]
            while x != ZERO:
                j = (w << 6) + ctz(x)
                x &= x - ONE
                row = rows[k + j]
                c = 0
                for t in range(W):
                    c += popc(P[t] & row[t])
                if c > best:
                    best = c
                    bu = k + j
                    if c == pc:
                        found = True
                        break
            if found:
                break
    row = rows[bu]
    nb = 0
    for w in range(W):
        b = P[w] & ~row[w]
        SB[d, w] = b
        nb += popc(b)
    return nb


@njit(cache=True)
def _emit(v, d, clq, Pv, out_v, out_off, st, count_only, hist):
    """Write the clique of frame ``d`` (sorted); False when the buffer has no room."""
    if count_only:
        hist[d] += 1
        return True
    nw = st[8]
    nc = st[9]
    if nw + d > len(out_v) or nc + 1 >= len(out_off):
        return False
    out_v[nw] = v
    for t in range(2, d + 1):
        x = Pv[clq[t]]
        q = nw + t - 1
        while q > nw and out_v[q - 1] > x:
            out_v[q] = out_v[q - 1]
            q -= 1
        out_v[q] = x
    nw += d
    nc += 1
    out_off[nc] = nw
    st[8] = nw
    st[9] = nc
    return True


# state slots
_POS, _DEPTH, _K, _R, _W, _WX, _PENDING, _V, _NW, _NC, _NODES = range(11)
_DONE, _FULL, _PAUSED = 1, 0, 2  # what a run returns

#: Search nodes per run before it returns to Python (a node costs tens to hundreds of
#: nanoseconds: a run lasts well under a second).
NODE_BUDGET = 1 << 21


@njit(cache=True, inline="always")
def _save(st, pending, depth, k, r, W, WX, v, nodes):
    """The search's locals into ``st``, for the next run to resume from."""
    st[_PENDING] = pending
    st[_DEPTH] = depth
    st[_K] = k
    st[_R] = r
    st[_W] = W
    st[_WX] = WX
    st[_V] = v
    st[_NODES] = nodes


@njit(cache=True)
def _mce_run(indptr, indices, order, rank, min_size, count_only, st, pmark, Pv, Xv, rows, cols,
             SP, SXP, SXX, SB, clq, out_v, out_off, hist, node_budget):
    """Resumable Bron-Kerbosch over the sub-problems ``order[st[POS]:]``.

    Returns 1 when every sub-problem is done, 0 when the output buffer is full, 2 after
    ``node_budget`` search nodes (0: no budget); the state in ``st`` and the stacks lets
    the next call continue exactly where this one stopped.
    """
    n = len(order)
    st[_NW] = 0
    st[_NC] = 0
    out_off[0] = 0
    depth = st[_DEPTH]
    k = st[_K]
    r = st[_R]
    W = st[_W]
    WX = st[_WX]
    v = st[_V]
    nodes = st[_NODES]
    stop = nodes + node_budget if node_budget > 0 else -1
    if st[_PENDING] != 0:
        # a maximal clique found before the last flush: emit it now, then pop it
        _emit(v, depth, clq, Pv, out_v, out_off, st, count_only, hist)
        st[_PENDING] = 0
        depth -= 1
    while True:
        if nodes == stop:  # every local is saved; the arrays hold the rest
            _save(st, 0, depth, k, r, W, WX, v, nodes)
            return _PAUSED
        if depth == 0:
            p = st[_POS]
            if p >= n:
                st[_DEPTH] = 0
                st[_NODES] = nodes
                return _DONE
            v = order[p]
            dv = indptr[v + 1] - indptr[v]
            if dv == 0:
                if min_size <= 1:
                    if not _emit(v, 1, clq, Pv, out_v, out_off, st, count_only, hist):
                        st[_DEPTH] = 0
                        st[_NODES] = nodes
                        return _FULL
                st[_POS] = p + 1
                continue
            st[_POS] = p + 1
            # cheap exits before building the local graph
            kk = later_count(indptr, indices, rank, v)
            if kk == 0 or 1 + kk < min_size:
                continue  # no P: v's cliques belong to earlier sub-problems ({v} alone is not maximal)
            k, r = _setup(indptr, indices, v, rank, pmark, Pv, Xv, rows, cols, True)
            W = (k + 63) >> 6
            WX = (r + 63) >> 6
            for w in range(W):
                SP[1, w] = ZERO
                SXP[1, w] = ZERO
            for i in range(k):
                SP[1, i >> 6] |= ONE << np.uint64(i & 63)
            for w in range(WX):
                SXX[1, w] = ZERO
            for j in range(r):
                SXX[1, j >> 6] |= ONE << np.uint64(j & 63)
            nodes += 1
            if _pivot_branches(1, k, r, W, WX, rows, SP, SXP, SXX, SB) > 0:
                depth = 1
            continue
        d = depth
        # next branch vertex: lowest bit of SB[d]
        w0 = -1
        for w in range(W):
            if SB[d, w] != ZERO:
                w0 = w
                break
        if w0 < 0:
            depth -= 1
            continue
        x = SB[d, w0]
        i = (w0 << 6) + ctz(x)
        bi = ONE << np.uint64(i & 63)
        SB[d, w0] = x & ~bi
        row = rows[i]
        pc = 0
        xe = True
        for w in range(W):
            a = SP[d, w] & row[w]
            SP[d + 1, w] = a
            pc += popc(a)
            b = SXP[d, w] & row[w]
            SXP[d + 1, w] = b
            if b != ZERO:
                xe = False
        col = cols[i]
        for w in range(WX):
            c = SXX[d, w] & col[w]
            SXX[d + 1, w] = c
            if c != ZERO:
                xe = False
        # move i from candidate to not
        SP[d, w0] &= ~bi
        SXP[d, w0] |= bi
        clq[d + 1] = i
        nodes += 1
        if pc == 0:
            if xe and d + 1 >= min_size:
                if not _emit(v, d + 1, clq, Pv, out_v, out_off, st, count_only, hist):
                    _save(st, 1, d + 1, k, r, W, WX, v, nodes)
                    return _FULL
            continue
        if d + 1 + pc < min_size:
            continue
        if _pivot_branches(d + 1, k, r, W, WX, rows, SP, SXP, SXX, SB) > 0:
            depth = d + 1


class MceState:
    """Arrays of one resumable CPU enumeration (sized by degeneracy and max degree)."""

    def __init__(self, indptr, indices, min_size=1, count_only=False, chunk_cliques=1 << 16):
        self.indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        self.indices = np.ascontiguousarray(indices, dtype=np.int64)
        n = len(self.indptr) - 1
        self.order, core, self.rank = ranked_degeneracy(self.indptr, self.indices)
        self.degeneracy = int(core.max()) if n else 0
        maxdeg = int(np.diff(self.indptr).max()) if n else 0
        D = self.degeneracy
        Wm = max(1, (D + 63) // 64)
        WXm = max(1, (maxdeg + 63) // 64)
        self.min_size = int(min_size)
        self.count_only = bool(count_only)
        self.st = np.zeros(11, np.int64)
        self.pmark = np.full(n, -1, np.int64)
        self.Pv = np.zeros(D + 1, np.int64)
        self.Xv = np.zeros(maxdeg + 1, np.int64)
        self.rows = np.zeros((maxdeg + 1, Wm), np.uint64)
        self.cols = np.zeros((D + 1, WXm), np.uint64)
        self.SP = np.zeros((D + 3, Wm), np.uint64)
        self.SXP = np.zeros((D + 3, Wm), np.uint64)
        self.SXX = np.zeros((D + 3, WXm), np.uint64)
        self.SB = np.zeros((D + 3, Wm), np.uint64)
        self.clq = np.zeros(D + 3, np.int64)
        self.hist = np.zeros(D + 3, np.int64)
        if count_only:
            self.out_v = np.zeros(1, np.int64)
            self.out_off = np.zeros(2, np.int64)
        else:
            cap_c = max(1, int(chunk_cliques))
            # room for at least one largest clique so that a pending clique always fits
            self.out_v = np.zeros(max(cap_c * 4, D + 2), np.int64)
            self.out_off = np.zeros(cap_c + 1, np.int64)

    def restart(self, vertices):
        """Point the search at the sub-problems of ``vertices`` (any subset, in any order;
        each keeps its neighbours later in the degeneracy order, :attr:`rank`, as candidates)
        and start from the first; the histogram and the node count keep accumulating. Splits
        the enumeration over processes (``graphkit.distributed_cliques``)."""
        nodes = self.st[_NODES]
        self.order = np.ascontiguousarray(vertices, dtype=np.int64)
        self.st[:] = 0
        self.st[_NODES] = nodes

    def run(self, node_budget=0):
        """One call: returns ``(done, flat, offsets)`` of the cliques written (views); it
        stops when done, when the output buffer is full or after ``node_budget`` search
        nodes (0: no budget; :data:`NODE_BUDGET` keeps a run under a second)."""
        status = _mce_run(self.indptr, self.indices, self.order, self.rank, self.min_size, self.count_only,
                          self.st, self.pmark, self.Pv, self.Xv, self.rows, self.cols, self.SP, self.SXP,
                          self.SXX, self.SB, self.clq, self.out_v, self.out_off, self.hist, int(node_budget))
        nw, nc = int(self.st[_NW]), int(self.st[_NC])
        return status == _DONE, self.out_v[:nw], self.out_off[:nc + 1]

    @property
    def nodes(self) -> int:
        return int(self.st[_NODES])

    @property
    def position(self) -> int:
        """Sub-problems (top-level vertices) started so far, out of ``len(order)``."""
        return int(self.st[_POS])


def mce_chunks_cpu(indptr, indices, min_size=1, chunk_cliques=1 << 16, progress=None):
    """Yield ``(flat, offsets)`` chunks of maximal cliques (copies, at most ``chunk_cliques``
    each); ``progress(done, total)``, if given, is called after each run with the
    sub-problems started."""
    state = MceState(indptr, indices, min_size, False, chunk_cliques)
    while True:
        done, flat, off = state.run(NODE_BUDGET)
        if progress is not None:
            progress(state.position, len(state.order))
        if len(off) > 1:
            yield flat.copy(), off.copy()
        if done:
            return


def mce_count_cpu(indptr, indices, min_size=1, progress=None):
    """Histogram of maximal clique sizes (index = size) and search nodes; ``progress`` as
    in :func:`mce_chunks_cpu`. Runs of :data:`NODE_BUDGET` nodes: Ctrl-C stops it between
    two."""
    state = MceState(indptr, indices, min_size, True)
    while not state.run(NODE_BUDGET)[0]:
        if progress is not None:
            progress(state.position, len(state.order))
    return state.hist.copy(), state.nodes
