"""Clique covers with MaxSAT absorption: the upper bound on independent sets of both searches.

An independent set takes at most one vertex of each clique of a clique cover, so ``k``
cliques covering a vertex set ``P`` bound its independent sets by ``k`` (the colouring
bound of maximum clique solvers, read in the complement). :func:`cover_and_absorb`
decides whether the independent sets of ``P`` are bounded by a given ``K``:

1. ``P`` is covered greedily by at most ``K`` cliques (first fit in the given order, with
   Tomita's re-numbering: a vertex that fits nowhere takes the place of the one member of
   a clique it is not adjacent to, if that member fits in another clique);
2. each vertex ``v`` left over is tested as a unit clause against the cliques (soft
   clauses "one of these vertices"): ``v`` in the set removes its neighbours, a clique
   left with one candidate forces it (unit propagation). If some clique is emptied,
   ``v`` and the cliques that took part in the conflict (the closure of the reasons of
   the removed candidates) form an inconsistent subset: ``v`` is *absorbed* as a clique
   of its own and a shared relaxation literal joins every clique of the subset, so they
   stay usable in later tests while the bound stays ``K`` (each relaxation literal can
   satisfy one clique only; MaxSAT reasoning of Li and Quan with the incremental
   relaxation of MoMC).

The vertices that could not be absorbed are returned: none means no independent set of
``P`` has more than ``K`` vertices. Everything walks adjacency lists of the (sparse)
graph itself; the complement is never built.

References
----------
E. Tomita, Y. Sutani, T. Higashi, S. Takahashi and M. Wakatsuki, "A simple and faster
branch-and-bound algorithm for finding a maximum clique", WALCOM 2010, LNCS 5942,
191-203.

C.-M. Li and Z. Quan, "An efficient branch-and-bound algorithm based on MaxSAT for the
maximum clique problem", Proc. AAAI 2010, 128-133.

C.-M. Li, H. Jiang and F. Manya, "On minimization of the number of branches in
branch-and-bound algorithms for the maximum clique problem", Computers & Operations
Research 84 (2017) 1-15.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["cover_and_absorb", "MaxsatWork"]

# literal states during a MaxSAT test
_ACTIVE, _FALSE, _TRUE = 0, 1, 2


# trail entry kinds of a MaxSAT test (undone in reverse)
_T_FALSE_DEC, _T_FALSE, _T_TRUE, _T_SAT, _T_OWN, _T_VDEC = 1, 2, 3, 4, 5, 6


@njit(cache=True)
def _set_false(y, reason, cls, st, rsn, csat, rcnt, vcnt, tk, tv, nt, queue, qt):
    """Literal ``y`` (ACTIVE, in a class) becomes false. Returns (trail length, queue
    length, conflict class or -1)."""
    st[y] = _FALSE
    rsn[y] = reason
    c = cls[y]
    if csat[c] == 0:
        rcnt[c] -= 1
        tk[nt] = _T_FALSE_DEC
        tv[nt] = y
        nt += 1
        k = rcnt[c] + vcnt[c]
        if k == 0:
            return nt, qt, c
        if k == 1:
            queue[qt] = c
            qt += 1
    else:
        tk[nt] = _T_FALSE
        tv[nt] = y
        nt += 1
    return nt, qt, -1


@njit(cache=True)
def _test(v, tested, ip, ix, cls, st, rsn, inA, stamp, chead, cnext, vhead, mnext, mrel, mcls, rhead, rnext,
          rcnt, vcnt, csat, vowner, tk, tv, queue, involved, inv_list):
    """MaxSAT test of ``v`` (a unit clause, class index ``tested``) against the cover:
    ``v`` in the set, then unit propagation. On a conflict returns the number of classes
    that took part (written to ``inv_list``), else 0. States are restored."""
    nt = 0
    qh = 0
    qt = 0
    conflict = -1
    for p in range(ip[v], ip[v + 1]):
        y = ix[p]
        if inA[y] == stamp and st[y] == _ACTIVE:
            nt, qt, conflict = _set_false(y, tested, cls, st, rsn, csat, rcnt, vcnt, tk, tv, nt, queue, qt)
            if conflict >= 0:
                break
    while conflict < 0 and qh < qt:
        c = queue[qh]
        qh += 1
        if csat[c] != 0 or rcnt[c] + vcnt[c] != 1:
            continue
        csat[c] = 1
        tk[nt] = _T_SAT
        tv[nt] = c
        nt += 1
        if rcnt[c] == 1:
            x = chead[c]
            while st[x] != _ACTIVE:
                x = cnext[x]
            st[x] = _TRUE
            rsn[x] = c
            tk[nt] = _T_TRUE
            tv[nt] = x
            nt += 1
            for p in range(ip[x], ip[x + 1]):
                y = ix[p]
                if inA[y] == stamp and st[y] == _ACTIVE:
                    nt, qt, conflict = _set_false(y, c, cls, st, rsn, csat, rcnt, vcnt, tk, tv, nt, queue, qt)
                    if conflict >= 0:
                        break
        else:
            # the one free relaxation literal of c satisfies it; the other classes that
            # hold it lose it
            e = vhead[c]
            r = -1
            while e >= 0:
                if vowner[mrel[e]] < 0:
                    r = mrel[e]
                    break
                e = mnext[e]
            vowner[r] = c
            tk[nt] = _T_OWN
            tv[nt] = r
            nt += 1
            e = rhead[r]
            while e >= 0:
                c2 = mcls[e]
                if c2 != c and csat[c2] == 0:
                    vcnt[c2] -= 1
                    tk[nt] = _T_VDEC
                    tv[nt] = c2
                    nt += 1
                    k = rcnt[c2] + vcnt[c2]
                    if k == 0:
                        conflict = c2
                        break
                    if k == 1:
                        queue[qt] = c2
                        qt += 1
                e = rnext[e]
    ninv = 0
    if conflict >= 0:
        # the classes that took part: closure over the reasons of the false literals
        involved[conflict] = 1
        inv_list[0] = conflict
        ninv = 1
        h = 0
        while h < ninv:
            c = inv_list[h]
            h += 1
            x = chead[c]
            while x >= 0:
                if st[x] == _FALSE:
                    rc = rsn[x]
                    if rc != tested and involved[rc] == 0:
                        involved[rc] = 1
                        inv_list[ninv] = rc
                        ninv += 1
                x = cnext[x]
            e = vhead[c]
            while e >= 0:
                o = vowner[mrel[e]]
                if o >= 0 and o != c and involved[o] == 0:
                    involved[o] = 1
                    inv_list[ninv] = o
                    ninv += 1
                e = mnext[e]
        for t in range(ninv):
            involved[inv_list[t]] = 0
    for t in range(nt - 1, -1, -1):
        kd = tk[t]
        a = tv[t]
        if kd == _T_FALSE_DEC:
            st[a] = _ACTIVE
            rcnt[cls[a]] += 1
        elif kd == _T_FALSE or kd == _T_TRUE:
            st[a] = _ACTIVE
        elif kd == _T_SAT:
            csat[a] = 0
        elif kd == _T_OWN:
            vowner[a] = -1
        else:
            vcnt[a] += 1
    return ninv


@njit(cache=True)
def cover_and_absorb(ip, ix, P, np_, K, cls, st, rsn, inA, stamp, chead, cnext, ctail, csize, vhead, mnext, mrel,
                      mcls, rhead, rnext, rcnt, vcnt, csat, vowner, tk, tv, queue, involved, inv_list, cnt, B,
                      maxsat):
    """Steps 1 and 2 at one node; writes the branching vertices to ``B`` and returns
    their number."""
    nc = 0
    rest = 0
    cap_m = len(mrel)
    cnt2 = involved  # zero outside _test
    # 1. first-fit clique cover with at most K cliques; leftovers to B, in order
    for t in range(np_):
        v = P[t]
        best_c = -1
        if K > 0:
            for p in range(ip[v], ip[v + 1]):
                y = ix[p]
                if inA[y] == stamp:
                    cnt[cls[y]] += 1
            for p in range(ip[v], ip[v + 1]):
                y = ix[p]
                if inA[y] == stamp:
                    c = cls[y]
                    if cnt[c] == csize[c] and (best_c < 0 or c < best_c):
                        best_c = c
            if best_c < 0 and nc >= K:
                # re-numbering: a class with all members but one (w) adjacent to v,
                # where w fits in another class
                for p in range(ip[v], ip[v + 1]):
                    y = ix[p]
                    if best_c >= 0:
                        break
                    if inA[y] != stamp:
                        continue
                    c = cls[y]
                    if cnt[c] != csize[c] - 1:
                        continue
                    # the member w of c not adjacent to v (members adjacent to v carry
                    # the mark of having been counted: find the one that is not)
                    w = chead[c]
                    while w >= 0:
                        adj = False
                        for q in range(ip[w], ip[w + 1]):
                            if ix[q] == v:
                                adj = True
                                break
                        if not adj:
                            break
                        w = cnext[w]
                    if w < 0:
                        continue
                    # a class c2 != c where w sees every member (counts in cnt2)
                    for q in range(ip[w], ip[w + 1]):
                        z = ix[q]
                        if inA[z] == stamp and cls[z] != c:
                            cnt2[cls[z]] += 1
                    c2 = -1
                    for q in range(ip[w], ip[w + 1]):
                        z = ix[q]
                        if inA[z] == stamp and cls[z] != c:
                            cz = cls[z]
                            if cnt2[cz] == csize[cz] and c2 < 0:
                                c2 = cz
                    for q in range(ip[w], ip[w + 1]):
                        z = ix[q]
                        if inA[z] == stamp:
                            cnt2[cls[z]] = 0
                    if c2 < 0:
                        continue
                    # move w from c to c2
                    prev = -1
                    x = chead[c]
                    while x != w:
                        prev = x
                        x = cnext[x]
                    if prev < 0:
                        chead[c] = cnext[w]
                    else:
                        cnext[prev] = cnext[w]
                    if ctail[c] == w:
                        ctail[c] = prev
                    csize[c] -= 1
                    cnext[w] = -1
                    cnext[ctail[c2]] = w
                    ctail[c2] = w
                    csize[c2] += 1
                    cls[w] = c2
                    best_c = c
            for p in range(ip[v], ip[v + 1]):
                y = ix[p]
                if inA[y] == stamp:
                    cnt[cls[y]] = 0
        if best_c >= 0:
            cls[v] = best_c
            cnext[v] = -1
            if chead[best_c] < 0:
                chead[best_c] = v
            else:
                cnext[ctail[best_c]] = v
            ctail[best_c] = v
            csize[best_c] += 1
            inA[v] = stamp
            st[v] = _ACTIVE
        elif nc < K:
            c = nc
            nc += 1
            chead[c] = v
            ctail[c] = v
            cnext[v] = -1
            csize[c] = 1
            vhead[c] = -1
            cls[v] = c
            inA[v] = stamp
            st[v] = _ACTIVE
        else:
            B[rest] = v
            rest += 1
    if not maxsat or nc == 0:
        return rest
    # 2. MaxSAT absorption of the leftovers, in order
    for c in range(nc):
        rcnt[c] = csize[c]
        vcnt[c] = 0
        csat[c] = 0
    nm = 0
    nrel = 0
    nb = 0
    for t in range(rest):
        v = B[t]
        ninv = _test(v, nc, ip, ix, cls, st, rsn, inA, stamp, chead, cnext, vhead, mnext, mrel, mcls, rhead, rnext,
                     rcnt, vcnt, csat, vowner, tk, tv, queue, involved, inv_list)
        if ninv == 0 or nm + ninv + 1 > cap_m:
            B[nb] = v
            nb += 1
            continue
        # absorbed: v becomes a class of its own; a new relaxation literal joins it and
        # the involved classes
        c = nc
        nc += 1
        chead[c] = v
        ctail[c] = v
        cnext[v] = -1
        csize[c] = 1
        vhead[c] = -1
        cls[v] = c
        inA[v] = stamp
        st[v] = _ACTIVE
        rcnt[c] = 1
        vcnt[c] = 0
        csat[c] = 0
        r = nrel
        nrel += 1
        vowner[r] = -1
        rhead[r] = -1
        inv_list[ninv] = c
        for j in range(ninv + 1):
            c2 = inv_list[j]
            e = nm
            nm += 1
            mrel[e] = r
            mcls[e] = c2
            mnext[e] = vhead[c2]
            vhead[c2] = e
            rnext[e] = rhead[r]
            rhead[r] = e
            vcnt[c2] += 1
    return nb




class MaxsatWork:
    """Scratch arrays of :func:`cover_and_absorb` for graphs of up to ``n`` vertices
    (``memberships``: room for relaxation-literal memberships per call). ``arrays`` is
    all of them as one tuple (``w1 + wm + wr + w2``) for the engine's search."""

    def __init__(self, n, memberships=None):
        m = max(int(n), 1)
        z = lambda k: np.zeros(k, np.int64)  # noqa: E731
        cap = max(32 * m, 4096) if memberships is None else int(memberships)
        # cls, st, rsn, inA, procd, chead, cnext, ctail, csize, vhead, rcnt, vcnt, csat
        self.w1 = tuple(z(m + 1) for _ in range(13))
        # mnext, mrel, mcls, rnext
        self.wm = tuple(z(cap) for _ in range(4))
        # rhead, vowner
        self.wr = (z(m + 1), z(m + 1))
        # trail kinds and values, queue, involved, inv_list, cnt, mark
        self.w2 = (z(cap + 4 * m + 8), z(cap + 4 * m + 8), z(m + 1), z(m + 1), z(m + 1), z(m + 1), z(m + 1))
        self.arrays = self.w1 + self.wm + self.wr + self.w2


@njit(cache=True)
def cover_and_absorb_t(ip, ix, P, np_, K, stamp, W, B, maxsat):
    """:func:`cover_and_absorb` with the scratch arrays as one tuple ``W``
    (:attr:`MaxsatWork.arrays`)."""
    return cover_and_absorb(ip, ix, P, np_, K, W[0], W[1], W[2], W[3], stamp, W[5], W[6], W[7], W[8], W[9], W[13],
                            W[14], W[15], W[17], W[16], W[10], W[11], W[12], W[18], W[19], W[20], W[21], W[22],
                            W[23], W[24], B, maxsat)


@njit(cache=True)
def first_fit_cover(indptr, indices, order, cls):
    """Greedy clique cover in ``order``: each vertex joins the lowest-numbered clique all of
    whose members are its neighbours, else opens a new one. Writes ``cls`` (the clique of
    each vertex) and returns the number of cliques."""
    n = len(order)
    size = np.zeros(n + 1, np.int64)
    cnt = np.zeros(n + 1, np.int64)
    for v in range(n):
        cls[v] = -1
    nc = 0
    for t in range(n):
        v = order[t]
        for p in range(indptr[v], indptr[v + 1]):
            c = cls[indices[p]]
            if c >= 0:
                cnt[c] += 1
        best = -1
        for p in range(indptr[v], indptr[v + 1]):
            c = cls[indices[p]]
            if c >= 0 and cnt[c] == size[c] and (best < 0 or c < best):
                best = c
        for p in range(indptr[v], indptr[v + 1]):
            c = cls[indices[p]]
            if c >= 0:
                cnt[c] = 0
        if best < 0:
            best = nc
            nc += 1
        cls[v] = best
        size[best] += 1
    return nc


@njit(cache=True)
def _grouped(cls, nc, order, largest_first):
    """Vertices grouped by clique (members in their order of ``order``), cliques by size
    (largest first) or in reverse index order."""
    n = len(order)
    size = np.zeros(nc, np.int64)
    for v in range(n):
        size[cls[v]] += 1
    if largest_first:
        key = np.empty(nc, np.int64)
        for c in range(nc):
            key[c] = -size[c] * (nc + 1) + c
        rank = np.argsort(key)
    else:
        rank = np.arange(nc - 1, -1, -1)
    pos = np.empty(nc, np.int64)
    start = 0
    for r in range(nc):
        c = rank[r]
        pos[c] = start
        start += size[c]
    out = np.empty(n, np.int64)
    for t in range(n):
        v = order[t]
        c = cls[v]
        out[pos[c]] = v
        pos[c] += 1
    return out


@njit(cache=True)
def improve_cover_order(indptr, indices, order, rounds):
    """Iterated greedy (Culberson): regroup the vertices clique by clique and cover again;
    grouping never needs more cliques, reversing the clique order often needs fewer.
    Returns ``(order, cliques)`` of the best cover found."""
    n = len(order)
    cls = np.empty(n, np.int64)
    best_order = order.copy()
    best = first_fit_cover(indptr, indices, best_order, cls)
    cur = best_order
    nc = best
    for r in range(rounds):
        cur = _grouped(cls, nc, cur, r % 3 == 0)
        nc = first_fit_cover(indptr, indices, cur, cls)
        if nc < best:
            best = nc
            best_order = cur.copy()
    return best_order, best
