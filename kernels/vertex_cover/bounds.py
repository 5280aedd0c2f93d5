"""Lower bounds on the cover of an instance's live part (Akiba and Iwata).

All three are evaluated at every search node after the reductions; the node is pruned
when the decided cover vertices plus the best bound reach the best cover found.

LP bound
    After the LP reduction the only LP optimum is all 1/2, so ``ceil(rn / 2)`` (implied
    by the cycle-cover bound).
clique cover
    A partition of the live vertices into cliques: a clique of ``s`` vertices needs
    ``s - 1`` of them in any cover. Greedy: vertices by increasing degree, each joins the
    largest clique (so far) that it is adjacent to entirely.
cycle cover
    The perfect matching of the bipartite double cover left by the LP reduction is a
    permutation of the live vertices whose cycles are vertex-disjoint cycles (or edges)
    of the graph: a cycle of length ``l`` needs ``ceil(l / 2)`` (``l - 1`` when it spans a
    clique). An even cycle with two crossing chords ``s_j s_a`` and ``s_{j+1} s_{a+1}``
    splits into two odd cycles, which need one vertex more.

References
----------
T. Akiba and Y. Iwata, "Branch-and-reduce exponential/FPT algorithms in practice: a case
study of vertex cover", Theoretical Computer Science 609 (2016) 211-225.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .maxsat import cover_and_absorb_t
from .state import (AST, ALN, DEG, F_CRT, F_N, F_RN, OUT, POOL, S_CNT, S_LVL, S_MARK, S_POS, S_QUE, S_TMP,
                    S_TMP2, X, is_live_clique, new_gen)


@njit(cache=True)
def live_by_degree(x, deg, n, order):
    """Counting sort of the live vertices (``x[v] < 0``) by increasing degree, stable,
    into ``order``; returns how many there are."""
    maxd = 0
    for v in range(n):
        if x[v] < 0 and deg[v] > maxd:
            maxd = deg[v]
    bucket = np.zeros(maxd + 2, np.int64)
    for v in range(n):
        if x[v] < 0:
            bucket[deg[v] + 1] += 1
    for d in range(1, maxd + 2):
        bucket[d] += bucket[d - 1]
    for v in range(n):
        if x[v] < 0:
            order[bucket[deg[v]]] = v
            bucket[deg[v]] += 1
    return bucket[maxd]


@njit(cache=True)
def clique_cover_bound(G, IS, i, SC, ctl):
    """``live - cliques`` of a greedy clique partition of the live vertices."""
    n = IS[i, F_N]
    x = G[X]
    deg = G[DEG]
    pool = G[POOL]
    ast = G[AST]
    aln = G[ALN]
    rn = IS[i, F_RN]
    if rn == 0:
        return 0
    order = SC[S_QUE]
    cid = SC[S_LVL]
    csize = SC[S_TMP]
    hits = SC[S_TMP2]
    mark = SC[S_MARK]
    live_by_degree(x, deg, n, order)
    g = new_gen(ctl, SC)  # mark[v] == g: v already placed
    ncl = 0
    for t in range(rn):
        v = order[t]
        b = ast[v]
        for p in range(b, b + aln[v]):
            u = pool[p]
            if x[u] < 0 and mark[u] == g:
                hits[cid[u]] = 0
        best = -1
        bsize = 0
        for p in range(b, b + aln[v]):
            u = pool[p]
            if x[u] < 0 and mark[u] == g:
                c = cid[u]
                hits[c] += 1
                if hits[c] == csize[c] and csize[c] > bsize:
                    bsize = csize[c]
                    best = c
        if best >= 0:
            cid[v] = best
            csize[best] += 1
        else:
            cid[v] = ncl
            csize[ncl] = 1
            ncl += 1
        mark[v] = g
    return rn - ncl


@njit(cache=True)
def cycle_cover_bound(G, IS, i, SC, ctl):
    """Bound from the cycles of the matching permutation ``out`` (needs a perfect
    matching of the live vertices, as left by the LP reduction); -1 when it is not."""
    n = IS[i, F_N]
    x = G[X]
    out = G[OUT]
    pool = G[POOL]
    ast = G[AST]
    aln = G[ALN]
    for v in range(n):
        if x[v] < 0 and (out[v] < 0 or x[out[v]] >= 0):
            return -1
    cyc = SC[S_CNT]     # cycle id (first vertex) per vertex
    pos = SC[S_POS]     # position in its cycle
    S = SC[S_QUE]
    S2 = SC[S_TMP]
    mark = SC[S_MARK]
    for v in range(n):
        cyc[v] = -1
    lb = 0
    for s in range(n):
        if x[s] >= 0 or cyc[s] >= 0:
            continue
        size = 0
        v = s
        while True:
            cyc[v] = s
            pos[v] = size
            S[size] = v
            size += 1
            v = out[v]
            if v == s:
                break
        if size > 2 * n:  # not a permutation (cannot happen with a perfect matching)
            return -1
        if is_live_clique(G, S, size, cyc, s):
            lb += size - 1
            continue
        # split off odd cycles through pairs of crossing chords while it pays
        cur = S
        other = S2
        tag = s
        while size >= 5:
            best = size
            bs = 0
            bt = 0
            for j in range(size):
                g = new_gen(ctl, SC)
                v = cur[j]
                b = ast[v]
                for p in range(b, b + aln[v]):
                    u = pool[p]
                    if x[u] < 0 and cyc[u] == tag:
                        mark[u] = g
                w = cur[(j + 1) % size]
                b = ast[w]
                for p in range(b, b + aln[w]):
                    u = pool[p]
                    if x[u] < 0 and cyc[u] == tag:
                        nxt = cur[(pos[u] + 1) % size]
                        if mark[nxt] == g:
                            l1 = (pos[u] - j + size) % size
                            if l1 % 2 == 1 and 3 <= l1 < best and size - l1 >= 2:
                                best = l1
                                bs = (j + 1) % size
                                bt = (pos[u] + 1) % size
            if best == size:
                break
            # the odd cycle cur[bs .. bt) is closed by the chord cur[bt-1] cur[bs]; the rest
            # cur[bt .. bs) by the chord cur[bs-1] cur[bt]
            lb += (best + 1) // 2
            k = 0
            j = bt
            while j != bs:
                other[k] = cur[j]
                k += 1
                j = (j + 1) % size
            j = bs
            while j != bt:
                cyc[cur[j]] = n  # leaves this cycle (still counts as visited)
                j = (j + 1) % size
            size = k
            tmp = cur
            cur = other
            other = tmp
            for j in range(size):
                pos[cur[j]] = j
        lb += (size + 1) // 2
    return lb


@njit(cache=True)
def lower_bound(G, IS, i, SC, ctl, lp_reduced):
    """Decided cover vertices plus the best of the clique-cover and (when the LP
    reduction has run, ``lp_reduced``) the cycle-cover bound, which is at least the LP
    bound ``ceil(rn / 2)``."""
    best = clique_cover_bound(G, IS, i, SC, ctl)
    if lp_reduced:
        c = cycle_cover_bound(G, IS, i, SC, ctl)
        if c > best:
            best = c
    return IS[i, F_CRT] + best


@njit(cache=True)
def maxsat_bound(G, IS, i, SC, ctl, W, wst, opt):
    """Lower bound from a clique cover of the live part with MaxSAT absorption
    (:mod:`kernels.vertex_cover.maxsat`), asked whether the live part can beat ``opt``:
    returns ``opt`` when it cannot (the node is pruned), else ``opt`` minus the vertices
    that could not be absorbed (independent sets of the live part have at most ``K`` plus
    that many vertices, ``K = crt + rn - opt``)."""
    n = IS[i, F_N]
    rn = IS[i, F_RN]
    crt = IS[i, F_CRT]
    K = crt + rn - opt
    if K < 0 or rn == 0:
        return crt
    x = G[X]
    deg = G[DEG]
    pool = G[POOL]
    ast = G[AST]
    aln = G[ALN]
    order = SC[S_QUE]
    pos = SC[S_POS]
    # live vertices by increasing degree (the clique cover bound's order)
    m2 = 0
    for t in range(live_by_degree(x, deg, n, order)):
        pos[order[t]] = t
        m2 += deg[order[t]]
    ip = np.empty(rn + 1, np.int64)
    ix = np.empty(m2, np.int64)
    q = 0
    for t in range(rn):
        v = order[t]
        ip[t] = q
        b = ast[v]
        for p in range(b, b + aln[v]):
            u = pool[p]
            if x[u] < 0:
                ix[q] = pos[u]
                q += 1
    ip[rn] = q
    P = np.arange(rn).astype(np.int64)
    B = np.empty(rn, np.int64)
    wst[0] += 1
    nb = cover_and_absorb_t(ip, ix, P, rn, K, wst[0], W, B, True)
    return opt - nb
