"""Reduction rules of the branch-and-reduce vertex cover engine, applied where things changed.

Every rule below is *safe*: the instance it leaves, together with what it decided,
folded or replaced, has a minimum cover of the same size as before, and
:func:`kernels.vertex_cover.state.reverse_mods` turns a minimum cover of the reduced
instance into one of the original. Rules in the order :func:`reduce` tries them:

degree <= 2 (``R_DEG``)
    A vertex of degree 0 or 1 stays out of the cover (its neighbour goes in). A vertex of
    degree 2 in a triangle stays out (both neighbours go in); otherwise it is *folded*
    with its two neighbours into one vertex (Chen, Kanj and Jia).
unconfined (``R_UNCONFINED``)
    Xiao and Nagamochi: grow an independent set ``S`` from ``{v}`` by adding, for a
    neighbour ``u`` of ``S`` with exactly one neighbour in ``S``, the single neighbour of
    ``u`` outside ``N[S]``; if some such ``u`` has no neighbour outside ``N[S]``, ``v``
    is unconfined and some minimum cover contains it. Covers domination (``N[u]`` inside
    ``N[v]`` puts ``v`` in the cover).
LP (``R_LP``)
    Nemhauser-Trotter / crown reduction, see :mod:`kernels.vertex_cover.lp`.
twin (``R_TWIN``)
    Two vertices of degree 3 with the same neighbours: if the neighbours span an edge they
    all go into the cover, otherwise the five vertices fold into one (Xiao and Nagamochi).
funnel (``R_FUNNEL``)
    ``v`` with a neighbour ``u`` such that ``N(v) \\ {u}`` is a clique: the alternative of
    ``{v}`` and ``{u}``; a simplicial ``v`` (``N(v)`` a clique) stays out of the cover.
desk (``R_DESK``)
    A chordless 4-cycle ``v u1 w u2`` of vertices of degree 3 or 4 whose sides
    ``{v, w}`` and ``{u1, u2}`` have at most two neighbours outside the cycle each: the
    alternative of the two sides.

References
----------
J. Chen, I. A. Kanj and W. Jia, "Vertex cover: further observations and further
improvements", Journal of Algorithms 41 (2001) 280-301.

M. Xiao and H. Nagamochi, "Confining sets and avoiding bottleneck cases: a simple maximum
independent set algorithm in degree-3 graphs", Theoretical Computer Science 469 (2013)
92-104.

T. Akiba and Y. Iwata, "Branch-and-reduce exponential/FPT algorithms in practice: a case
study of vertex cover", Theoretical Computer Science 609 (2016) 211-225.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .lp import lp_reduce
from .packing import packing_reduce
from .state import (C_STAT, ST_DEG01, ST_DESK, ST_FOLD, ST_FUN, ST_PK_FIX, ST_PK_PRUNE, ST_SIMPL, ST_TRI, ST_TWIN, ST_UNC, AST, ALN, DEG, F_LPDIRTY, F_PKDIRTY, POOL, Q_DEG, Q_DESK, Q_FUN, Q_TWIN, Q_UNC, S_CNT, S_MARK,
                    S_MARK2, S_QMASK, S_TMP, S_TMP2, X, adjacent, alternative, fold, new_gen, q_pop, q_push,
                    set_vertex)

# rule switches (bits of ``rules``)
R_DEG, R_UNCONFINED, R_LP, R_TWIN, R_FUNNEL, R_DESK, R_PACKING, R_FOLD = 1, 2, 4, 8, 16, 32, 64, 128
R_ALL = 255
#: not a rule: try every rule on every vertex at every node (for measuring what the
#: incremental queues miss)
R_EXHAUSTIVE = 256

# return codes of reduce
OK, INFEASIBLE, NEED_SPACE = 0, 1, 2


@njit(cache=True)
def _neighbours(G, v, out):
    """Live neighbours of ``v`` into ``out``; returns their number."""
    x = G[X]
    pool = G[POOL]
    b = G[AST][v]
    k = 0
    for p in range(b, b + G[ALN][v]):
        u = pool[p]
        if x[u] < 0:
            out[k] = u
            k += 1
    return k


@njit(cache=True)
def degree_rule(G, IS, i, ctl, SC, qarr, v, rules):
    """Degree 0/1 (out of the cover), degree 2 (triangle or fold). Returns 1 when it
    changed something, 0 when not, -1 when the pool is full."""
    d = G[DEG][v]
    qmask = SC[S_QMASK]
    if d <= 1:
        set_vertex(G, IS, i, ctl, qarr, qmask, v, 0)
        ctl[C_STAT + ST_DEG01] += 1
        return 1
    if d == 2:
        nb = np.empty(2, np.int32)
        _neighbours(G, v, nb)
        if nb[1] < nb[0]:  # the smaller id becomes the merged vertex (deterministic kernels)
            t = nb[0]
            nb[0] = nb[1]
            nb[1] = t
        if adjacent(G, nb[0], nb[1]):
            set_vertex(G, IS, i, ctl, qarr, qmask, v, 0)
            ctl[C_STAT + ST_TRI] += 1
            return 1
        if rules & R_FOLD:
            S = np.empty(1, np.int32)
            S[0] = v
            if not fold(G, IS, i, ctl, SC, qarr, S, 1, nb, 2):
                return -1
            ctl[C_STAT + ST_FOLD] += 1
            return 1
    return 0


@njit(cache=True)
def unconfined_rule(G, IS, i, ctl, SC, qarr, v):
    """Put ``v`` in the cover when it is unconfined; returns 1 when it did."""
    x = G[X]
    pool = G[POOL]
    ast = G[AST]
    aln = G[ALN]
    mark = SC[S_MARK]
    cnt = SC[S_CNT]
    ns = SC[S_TMP2]
    g = new_gen(ctl, SC)
    mark[v] = g
    size = 0
    b = ast[v]
    for p in range(b, b + aln[v]):
        u = pool[p]
        if x[u] < 0:
            mark[u] = g
            ns[size] = u
            size += 1
            cnt[u] = 1
    grown = True
    while grown:
        grown = False
        k = 0
        while k < size:
            u = ns[k]
            k += 1
            if cnt[u] != 1:
                continue
            z = -1
            bu = ast[u]
            for p in range(bu, bu + aln[u]):
                w = pool[p]
                if x[w] < 0 and mark[w] != g:
                    if z >= 0:
                        z = -2
                        break
                    z = w
            if z == -1:
                set_vertex(G, IS, i, ctl, qarr, SC[S_QMASK], v, 1)
                ctl[C_STAT + ST_UNC] += 1
                return 1
            if z >= 0:
                # S grows by z (not adjacent to S, so S stays independent)
                grown = True
                mark[z] = g
                bz = ast[z]
                for p in range(bz, bz + aln[z]):
                    w = pool[p]
                    if x[w] < 0:
                        if mark[w] != g:
                            mark[w] = g
                            ns[size] = w
                            size += 1
                            cnt[w] = 1
                        else:
                            cnt[w] += 1
    return 0


@njit(cache=True)
def twin_rule(G, IS, i, ctl, SC, qarr, v):
    """Degree-3 twins; returns 1 (changed), 0 or -1 (pool full)."""
    x = G[X]
    deg = G[DEG]
    pool = G[POOL]
    ast = G[AST]
    aln = G[ALN]
    mark = SC[S_MARK]
    qmask = SC[S_QMASK]
    if deg[v] != 3:
        return 0
    nb = np.empty(3, np.int32)
    _neighbours(G, v, nb)
    nb.sort()
    g = new_gen(ctl, SC)
    for j in range(3):
        mark[nb[j]] = g
    # a twin is a degree-3 neighbour of nb[0] (other than v) whose neighbours are all marked
    a = nb[0]
    for j in range(3):
        if aln[nb[j]] < aln[a]:
            a = nb[j]
    b = ast[a]
    for p in range(b, b + aln[a]):
        w = pool[p]
        if w == v or x[w] >= 0 or deg[w] != 3:
            continue
        ok = True
        bw = ast[w]
        for q in range(bw, bw + aln[w]):
            z = pool[q]
            if x[z] < 0 and mark[z] != g:
                ok = False
                break
        if not ok:
            continue
        # N(w) == N(v)
        edge = adjacent(G, nb[0], nb[1]) or adjacent(G, nb[0], nb[2]) or adjacent(G, nb[1], nb[2])
        ctl[C_STAT + ST_TWIN] += 1
        if edge:
            set_vertex(G, IS, i, ctl, qarr, qmask, v, 0)
            set_vertex(G, IS, i, ctl, qarr, qmask, w, 0)
            return 1
        S = np.empty(2, np.int32)
        S[0] = v
        S[1] = w
        if not fold(G, IS, i, ctl, SC, qarr, S, 2, nb, 3):
            ctl[C_STAT + ST_TWIN] -= 1
            return -1
        return 1
    return 0


@njit(cache=True)
def funnel_rule(G, IS, i, ctl, SC, qarr, v):
    """Simplicial vertex or funnel; returns 1 (changed), 0 or -1 (pool full)."""
    x = G[X]
    deg = G[DEG]
    pool = G[POOL]
    ast = G[AST]
    aln = G[ALN]
    mark = SC[S_MARK]
    qmask = SC[S_QMASK]
    p_ = deg[v]
    if p_ < 3:
        return 0
    nb = SC[S_TMP][:p_]
    _neighbours(G, v, nb)
    g = new_gen(ctl, SC)
    for j in range(p_):
        mark[nb[j]] = g
    u1 = -1
    for j in range(p_):
        t = nb[j]
        d = 0
        b = ast[t]
        for q in range(b, b + aln[t]):
            if mark[pool[q]] == g and x[pool[q]] < 0:
                d += 1
        if d + 1 < p_:
            u1 = t
            break
    if u1 < 0:  # N[v] is a clique: v stays out of the cover
        set_vertex(G, IS, i, ctl, qarr, qmask, v, 0)
        ctl[C_STAT + ST_SIMPL] += 1
        return 1
    # u2: a neighbour of v not adjacent to u1
    gm = new_gen(ctl, SC)
    b = ast[u1]
    for q in range(b, b + aln[u1]):
        mark[pool[q]] = gm
    u2 = -1
    for j in range(p_):
        t = nb[j]
        if t != u1 and mark[t] != gm:
            u2 = t
            break
    if u2 < 0:
        return 0
    # C = N(v) \ {u1, u2}
    g = new_gen(ctl, SC)
    for j in range(p_):
        if nb[j] != u1 and nb[j] != u2:
            mark[nb[j]] = g
    d1 = 0
    b = ast[u1]
    for q in range(b, b + aln[u1]):
        w = pool[q]
        if x[w] < 0 and mark[w] == g:
            d1 += 1
    d2 = 0
    b = ast[u2]
    for q in range(b, b + aln[u2]):
        w = pool[q]
        if x[w] < 0 and mark[w] == g:
            d2 += 1
    if d1 < p_ - 2 and d2 < p_ - 2:
        return 0
    for j in range(p_):
        t = nb[j]
        if t == u1 or t == u2:
            continue
        d = 0
        b = ast[t]
        for q in range(b, b + aln[t]):
            w = pool[q]
            if x[w] < 0 and mark[w] == g:
                d += 1
        if d < p_ - 3:
            return 0
    u = u2 if d1 == p_ - 2 else u1
    A = np.empty(1, np.int32)
    B = np.empty(1, np.int32)
    A[0] = v
    B[0] = u
    if not alternative(G, IS, i, ctl, SC, qarr, A, 1, B, 1):
        return -1
    ctl[C_STAT + ST_FUN] += 1
    return 1


@njit(cache=True)
def desk_rule(G, IS, i, ctl, SC, qarr, v):
    """Desk (chordless 4-cycle of degree-3/4 vertices); returns 1, 0 or -1 (pool full)."""
    x = G[X]
    deg = G[DEG]
    pool = G[POOL]
    ast = G[AST]
    aln = G[ALN]
    mark = SC[S_MARK]
    d = deg[v]
    if d != 3 and d != 4:
        return 0
    nb = np.empty(4, np.int32)
    _neighbours(G, v, nb)
    cand = np.empty(4, np.int32)
    nc = 0
    for j in range(d):
        dj = deg[nb[j]]
        if dj == 3 or dj == 4:
            cand[nc] = nb[j]
            nc += 1
    if nc < 2:
        return 0
    nvmark = SC[S_MARK2]  # N[v], in the second marker array
    gv = new_gen(ctl, SC)
    for j in range(d):
        nvmark[nb[j]] = gv
    nvmark[v] = gv
    for a in range(nc):
        u1 = cand[a]
        g = new_gen(ctl, SC)
        sb1 = 0
        b = ast[u1]
        for q in range(b, b + aln[u1]):
            w = pool[q]
            if x[w] < 0 and w != v:
                mark[w] = g
                sb1 += 1
        for c in range(a + 1, nc):
            u2 = cand[c]
            if mark[u2] == g:
                continue  # u1 and u2 adjacent
            sb2 = 0
            b2 = ast[u2]
            for q in range(b2, b2 + aln[u2]):
                w = pool[q]
                if x[w] < 0 and w != v and mark[w] != g:
                    sb2 += 1
            if sb1 + sb2 > 3:
                continue
            for q in range(b2, b2 + aln[u2]):
                w = pool[q]
                if x[w] < 0 and mark[w] == g and nvmark[w] != gv:
                    dw = deg[w]
                    if dw != 3 and dw != 4:
                        continue
                    sa = d - 2
                    bw = ast[w]
                    for t in range(bw, bw + aln[w]):
                        z = pool[t]
                        if x[z] < 0 and z != u1 and z != u2 and nvmark[z] != gv:
                            sa += 1
                    if sa <= 2:
                        A = np.empty(2, np.int32)
                        B = np.empty(2, np.int32)
                        A[0] = v
                        A[1] = w
                        B[0] = u1
                        B[1] = u2
                        if not alternative(G, IS, i, ctl, SC, qarr, A, 2, B, 2):
                            return -1
                        ctl[C_STAT + ST_DESK] += 1
                        return 1
    return 0


@njit(cache=True)
def reduce(G, IS, i, ctl, SC, qarr, rules):
    """Apply the rules until none applies, looking only at queued (changed) vertices;
    LP and packing run when the local rules are exhausted and the graph changed since
    their last run.

    Returns ``OK``, ``INFEASIBLE`` (a packing constraint cannot be met) or ``NEED_SPACE``
    (the instance's pool must grow; calling again continues where it stopped)."""
    x = G[X]
    qmask = SC[S_QMASK]
    while True:
        v = q_pop(ctl, qarr, qmask, Q_DEG)
        if v >= 0:
            if x[v] < 0 and rules & R_DEG:
                r = degree_rule(G, IS, i, ctl, SC, qarr, v, rules)
                if r < 0:
                    q_push(ctl, qarr, qmask, Q_DEG, v)
                    return NEED_SPACE
            continue
        v = q_pop(ctl, qarr, qmask, Q_UNC)
        if v >= 0:
            if rules & R_UNCONFINED and x[v] < 0:
                unconfined_rule(G, IS, i, ctl, SC, qarr, v)
            continue
        v = q_pop(ctl, qarr, qmask, Q_TWIN)
        if v >= 0:
            if rules & R_TWIN and x[v] < 0:
                if twin_rule(G, IS, i, ctl, SC, qarr, v) < 0:
                    q_push(ctl, qarr, qmask, Q_TWIN, v)
                    return NEED_SPACE
            continue
        v = q_pop(ctl, qarr, qmask, Q_FUN)
        if v >= 0:
            if rules & R_FUNNEL and x[v] < 0:
                if funnel_rule(G, IS, i, ctl, SC, qarr, v) < 0:
                    q_push(ctl, qarr, qmask, Q_FUN, v)
                    return NEED_SPACE
            continue
        v = q_pop(ctl, qarr, qmask, Q_DESK)
        if v >= 0:
            if rules & R_DESK and x[v] < 0:
                if desk_rule(G, IS, i, ctl, SC, qarr, v) < 0:
                    q_push(ctl, qarr, qmask, Q_DESK, v)
                    return NEED_SPACE
            continue
        # the global rules last: an LP pass costs O(n + m) however little changed, so it
        # waits until the local rules are exhausted (run after every funnel, it dominated
        # the root of large sparse instances while fixing nothing)
        if rules & R_LP and IS[i, F_LPDIRTY]:
            lp_reduce(G, IS, i, ctl, SC, qarr)
            continue
        if rules & R_PACKING and IS[i, F_PKDIRTY]:
            r = packing_reduce(G, IS, i, ctl, SC, qarr)
            if r < 0:
                ctl[C_STAT + ST_PK_PRUNE] += 1
                return INFEASIBLE
            ctl[C_STAT + ST_PK_FIX] += r
            continue
        return OK
