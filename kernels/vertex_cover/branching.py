"""Branching of the vertex cover engine: a maximum-degree vertex and its mirrors.

The search branches on a vertex ``v`` of maximum degree (ties: fewest edges among its
neighbours, as Akiba and Iwata do). One child takes ``v`` into the cover, the other keeps
it out (so all of ``N(v)`` goes in). A *mirror* of ``v`` is a vertex ``w`` at distance two
such that ``N(v) \\ N(w)`` is a clique: if some minimum cover leaves a mirror out, one
leaves ``v`` out as well (Fomin, Grandoni and Kratsch), so the child that takes ``v``
may take all its mirrors too.

References
----------
F. V. Fomin, F. Grandoni and D. Kratsch, "A measure & conquer approach for the analysis of
exact algorithms", Journal of the ACM 56 (2009) 25:1-25:32.

T. Akiba and Y. Iwata, "Branch-and-reduce exponential/FPT algorithms in practice: a case
study of vertex cover", Theoretical Computer Science 609 (2016) 211-225.
"""
from __future__ import annotations

from numba import njit

from .state import AST, ALN, DEG, F_N, POOL, S_MARK, S_MARK2, S_TMP2, S_TMP3, S_TMP4, X, is_live_clique, new_gen


@njit(cache=True)
def choose_vertex(G, IS, i, SC, ctl):
    """A live vertex of maximum degree with the fewest edges among its neighbours."""
    n = IS[i, F_N]
    x = G[X]
    deg = G[DEG]
    pool = G[POOL]
    ast = G[AST]
    aln = G[ALN]
    mark = SC[S_MARK]
    dmax = -1
    for v in range(n):
        if x[v] < 0 and deg[v] > dmax:
            dmax = deg[v]
    best = -1
    best_e = -1
    for v in range(n):
        if x[v] < 0 and deg[v] == dmax:
            g = new_gen(ctl, SC)
            b = ast[v]
            for p in range(b, b + aln[v]):
                mark[pool[p]] = g
            e = 0
            for p in range(b, b + aln[v]):
                u = pool[p]
                if x[u] < 0:
                    bu = ast[u]
                    for q in range(bu, bu + aln[u]):
                        w = pool[q]
                        if x[w] < 0 and mark[w] == g:
                            e += 1
            if best < 0 or e < best_e:
                best = v
                best_e = e
                if e == 0:
                    break
    return best


@njit(cache=True)
def mirrors(G, IS, i, SC, ctl, v, out):
    """Mirrors of ``v`` into ``out``; returns their number."""
    x = G[X]
    pool = G[POOL]
    ast = G[AST]
    aln = G[ALN]
    mark = SC[S_MARK]
    mark2 = SC[S_MARK2]
    nv = SC[S_TMP2]
    mlist = SC[S_TMP3]
    dist2 = SC[S_TMP4]
    gv = new_gen(ctl, SC)  # N[v] in mark2
    d = 0
    b = ast[v]
    mark2[v] = gv
    for p in range(b, b + aln[v]):
        u = pool[p]
        if x[u] < 0:
            mark2[u] = gv
            nv[d] = u
            d += 1
    g2 = new_gen(ctl, SC)
    nd = 0
    for a in range(d):
        u = nv[a]
        bu = ast[u]
        for q in range(bu, bu + aln[u]):
            w = pool[q]
            if x[w] < 0 and mark2[w] != gv and mark[w] != g2:
                mark[w] = g2
                dist2[nd] = w
                nd += 1
    k = 0
    for a in range(nd):
        w = dist2[a]
        # M = N(v) \ N(w) must be a clique
        gw = new_gen(ctl, SC)
        bw = ast[w]
        for t in range(bw, bw + aln[w]):
            z = pool[t]
            if x[z] < 0 and mark2[z] == gv:
                mark[z] = gw
        m = 0
        for c in range(d):
            if mark[nv[c]] != gw:
                mlist[m] = nv[c]
                m += 1
        ok = True
        if m > 1:
            gm = new_gen(ctl, SC)
            for c in range(m):
                mark[mlist[c]] = gm
            ok = is_live_clique(G, mlist, m, mark, gm)
        if ok:
            out[k] = w
            k += 1
    return k
