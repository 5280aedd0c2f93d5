"""The branch-and-reduce search: an explicit stack of frames, resumable in chunks.

At every node the reductions of :mod:`kernels.vertex_cover.reductions` run where the
graph changed, then the lower bounds of :mod:`kernels.vertex_cover.bounds` prune, then
the live graph is split into connected components:

* every component of at most half the instance's vertices (all of them once the live
  part has shrunk to half, as Akiba and Iwata do) becomes an instance of its own, a
  compact copy solved to optimality below a bound (the best cover minus what is decided
  and the LP bounds of the other components); its optimum is written back as decisions;
* the one larger component, if any, stays in place and is branched on
  (:mod:`kernels.vertex_cover.branching`).

Nested instances are at most half their parent's size, so at most ``log2 n`` exist at a
time. The whole state lives in arrays (``insts``: a typed list of instance tuples,
``IS`` their scalars, ``F`` the frame stack, ``ctl``, scratch), so :func:`run` stops after
a budget of work and the next call continues: the Python caller checks the clock and
``KeyboardInterrupt`` between calls.

Frames (rows of ``F``):

``NODE``
    reduce, bound, split or choose the branching vertex (it then turns into a ``BRANCH``
    or ``DECOMP`` frame in place).
``BRANCH``
    stage 0 takes ``v`` and its mirrors, stage 1 keeps ``v`` out, stage 2 undoes.
``DECOMP``
    solves the components listed in the pool one by one (an ``INST`` frame each), then
    branches on what is left in place.
``INST``
    the root node of a nested instance; on completion its optimum goes back to the
    parent (or the parent node is pruned when no cover below the bound exists).

References
----------
T. Akiba and Y. Iwata, "Branch-and-reduce exponential/FPT algorithms in practice: a case
study of vertex cover", Theoretical Computer Science 609 (2016) 211-225.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types

from .bounds import lower_bound, maxsat_bound
from .branching import choose_vertex, mirrors
from .packing import add_constraint, add_neighbourhood_constraint
from .reductions import INFEASIBLE, NEED_SPACE, R_EXHAUSTIVE, R_LP, R_PACKING, reduce
from .state import (C_STAT, ST_INST, ST_LB_PRUNE, ST_LEAF, ST_MAXSAT_PRUNE, AST, ALN, C_NODES, C_QBASE, C_WORK, DEG, F_CRT, F_FOUND, F_LPDIRTY, F_MODH, F_N, F_NEED, F_OPT,
                    F_PKH, F_PTOP, F_RN, F_ROOTLB, F_TOP, MP, NQ, OUT,
                    POOL, S_ITR, S_MARK, S_POS, S_QMASK, S_QUE, S_TMP4, X, Y, assign_vertex, new_gen, q_clear,
                    restore, reverse_mods, set_vertex, touch_all)

T_NODE, T_BRANCH, T_DECOMP, T_INST = 1, 2, 3, 4
(FR_TYPE, FR_INST, FR_STAGE, FR_TOP, FR_CRT, FR_PTOP, FR_MODH, FR_PKH, FR_V, FR_AUX, FR_NAUX, FR_LB, FR_K,
 FR_REST) = range(14)
N_FR = 16

# extra control scalars
C_FSP = C_QBASE + 2 * NQ
C_STATUS = C_FSP + 1
C_IMPROVED = C_FSP + 2
C_STOP_FOUND = C_FSP + 3
C_MAXDEPTH = C_FSP + 4

# statuses returned by run
DONE, RUNNING, FOUND_STOP = 0, 1, 2

#: instances smaller than this are never copied just because they shrank
SHRINK_MIN = 100

INSTANCE_TYPE = types.UniTuple(types.int32[::1], 10)


# --------------------------------------------------------------------------- instances
@njit(cache=True)
def _grow_pool(insts, IS, i, need):
    G = insts[i]
    old = G[POOL]
    size = max(2 * len(old), IS[i, F_PTOP] + need + 1024)
    new = np.empty(size, np.int32)
    new[:IS[i, F_PTOP]] = old[:IS[i, F_PTOP]]
    insts[i] = (G[0], G[1], G[2], G[3], G[4], G[5], G[6], G[7], G[8], new)
    IS[i, F_NEED] = 0


@njit(cache=True)
def new_instance(indptr, indices, n):
    """Instance tuple of a CSR graph (0-based, no self loops, symmetric)."""
    m2 = indptr[n]
    x = np.full(n, -1, np.int32)
    y = np.ones(n, np.int32)
    deg = np.empty(n, np.int32)
    ast = np.empty(n, np.int32)
    aln = np.empty(n, np.int32)
    stk = np.empty(max(n, 1), np.int32)
    inn = np.full(n, -1, np.int32)
    out = np.full(n, -1, np.int32)
    mp = np.arange(n).astype(np.int32)
    pool = np.empty(max(2 * m2 + 4 * n, 1024), np.int32)
    for v in range(n):
        ast[v] = indptr[v]
        aln[v] = indptr[v + 1] - indptr[v]
        deg[v] = aln[v]
    for p in range(m2):
        pool[p] = indices[p]
    return (x, y, deg, ast, aln, stk, inn, out, mp, pool)


@njit(cache=True)
def init_scalars(IS, i, n, m2, opt, found):
    IS[i, :] = 0
    IS[i, F_N] = n
    IS[i, F_RN] = n
    IS[i, F_OPT] = opt
    IS[i, F_FOUND] = found
    IS[i, F_PTOP] = m2
    IS[i, F_MODH] = -1
    IS[i, F_PKH] = -1
    IS[i, F_LPDIRTY] = 1
    IS[i, F_ROOTLB] = -1


@njit(cache=True)
def _child_instance(insts, IS, i, comp_off, size, bound, SC):
    """Compact copy of the component ``pool[comp_off: comp_off + size]`` of instance ``i``
    as instance ``i + 1``, searching for covers below ``bound``."""
    G = insts[i]
    x = G[X]
    pool = G[POOL]
    ast = G[AST]
    aln = G[ALN]
    pos = SC[S_POS]
    out_p = G[OUT]
    for j in range(size):
        pos[pool[comp_off + j]] = j
    m2 = 0
    for j in range(size):
        m2 += G[DEG][pool[comp_off + j]]
    cx = np.full(size, -1, np.int32)
    cy = np.ones(size, np.int32)
    cdeg = np.empty(size, np.int32)
    cast = np.empty(size, np.int32)
    caln = np.empty(size, np.int32)
    cstk = np.empty(max(size, 1), np.int32)
    cinn = np.full(size, -1, np.int32)
    cout = np.full(size, -1, np.int32)
    cmp_ = np.empty(size, np.int32)
    cpool = np.empty(max(2 * m2 + 4 * size, 256), np.int32)
    q = 0
    for j in range(size):
        v = pool[comp_off + j]
        cmp_[j] = v
        cast[j] = q
        b = ast[v]
        for p in range(b, b + aln[v]):
            u = pool[p]
            if x[u] < 0:
                cpool[q] = pos[u]
                q += 1
        caln[j] = q - cast[j]
        cdeg[j] = caln[j]
    for j in range(size):
        v = cmp_[j]
        o = out_p[v]
        if o >= 0 and x[o] < 0:
            cout[j] = pos[o]
            cinn[pos[o]] = j
    c = i + 1
    if len(insts) > c:
        insts[c] = (cx, cy, cdeg, cast, caln, cstk, cinn, cout, cmp_, cpool)
    else:
        insts.append((cx, cy, cdeg, cast, caln, cstk, cinn, cout, cmp_, cpool))
    init_scalars(IS, c, size, q, bound, 0)
    return c


@njit(cache=True)
def _record(insts, IS, i, ctl):
    """A leaf: keep the current solution of instance ``i`` if it is better."""
    if IS[i, F_CRT] >= IS[i, F_OPT]:
        return
    G = insts[i]
    y = G[Y]
    y[:] = G[X]
    reverse_mods(G, IS, i, y)
    IS[i, F_OPT] = IS[i, F_CRT]
    IS[i, F_FOUND] = 1
    if i == 0:
        ctl[C_IMPROVED] = 1


# --------------------------------------------------------------------------- frames
@njit(cache=True)
def _push(F, ctl, typ, i):
    f = ctl[C_FSP]
    if f >= F.shape[0]:
        return -1
    F[f, :] = 0
    F[f, FR_TYPE] = typ
    F[f, FR_INST] = i
    ctl[C_FSP] = f + 1
    if f + 1 > ctl[C_MAXDEPTH]:
        ctl[C_MAXDEPTH] = f + 1
    return f


@njit(cache=True)
def _snapshot(F, f, IS, i):
    F[f, FR_TOP] = IS[i, F_TOP]
    F[f, FR_CRT] = IS[i, F_CRT]
    F[f, FR_PTOP] = IS[i, F_PTOP]
    F[f, FR_MODH] = IS[i, F_MODH]
    F[f, FR_PKH] = IS[i, F_PKH]


@njit(cache=True)
def _rollback(G, F, f, IS, i, ctl, SC, qarr):
    restore(G, IS, i, F[f, FR_TOP])
    IS[i, F_CRT] = F[f, FR_CRT]
    IS[i, F_PTOP] = F[f, FR_PTOP]
    IS[i, F_MODH] = F[f, FR_MODH]
    IS[i, F_PKH] = F[f, FR_PKH]
    q_clear(ctl, qarr, SC[S_QMASK])


@njit(cache=True)
def _components(G, IS, i, SC, ctl, off):
    """Connected components of the live part, written to the pool at ``off``: the vertex
    lists one after another, sorted by increasing size. Returns their number; sizes go to
    ``SC[S_ITR]`` and list starts to ``SC[S_TMP4]``."""
    n = IS[i, F_N]
    x = G[X]
    pool = G[POOL]
    ast = G[AST]
    aln = G[ALN]
    mark = SC[S_MARK]
    que = SC[S_QUE]
    comp = SC[S_POS]
    sizes = SC[S_ITR]
    starts = SC[S_TMP4]
    g = new_gen(ctl, SC)
    nc = 0
    qt = 0
    for s in range(n):
        if x[s] >= 0 or mark[s] == g:
            continue
        start = qt
        mark[s] = g
        que[qt] = s
        qt += 1
        qs = start
        while qs < qt:
            v = que[qs]
            qs += 1
            comp[v] = nc
            b = ast[v]
            for p in range(b, b + aln[v]):
                u = pool[p]
                if x[u] < 0 and mark[u] != g:
                    mark[u] = g
                    que[qt] = u
                    qt += 1
        sizes[nc] = qt - start
        starts[nc] = start
        nc += 1
    if nc <= 1:
        if nc == 1:
            for j in range(qt):
                pool[off + j] = que[j]
            starts[0] = 0
        return nc
    order = np.argsort(sizes[:nc], kind="mergesort")
    q = off
    ns = np.empty(nc, np.int32)
    nsz = np.empty(nc, np.int32)
    for r in range(nc):
        c = order[r]
        ns[r] = q - off
        nsz[r] = sizes[c]
        for j in range(starts[c], starts[c] + sizes[c]):
            pool[q] = que[j]
            q += 1
    for r in range(nc):
        starts[r] = ns[r]
        sizes[r] = nsz[r]
    return nc


@njit(cache=True)
def _to_branch(insts, F, f, IS, i, ctl, SC, lb):
    """Choose the branching vertex and mirrors of instance ``i`` and turn frame ``f``
    into a BRANCH frame (mirrors stored in the pool). Returns False when the pool is
    full (nothing changed)."""
    G = insts[i]
    v = choose_vertex(G, IS, i, SC, ctl)
    buf = SC[S_ITR]
    k = mirrors(G, IS, i, SC, ctl, v, buf)
    p = IS[i, F_PTOP]
    if p + k > len(G[POOL]):
        IS[i, F_NEED] = k
        return False
    pool = G[POOL]
    for j in range(k):
        pool[p + j] = buf[j]
    IS[i, F_PTOP] = p + k
    F[f, FR_TYPE] = T_BRANCH
    F[f, FR_STAGE] = 0
    F[f, FR_V] = v
    F[f, FR_AUX] = p
    F[f, FR_NAUX] = k
    F[f, FR_LB] = lb
    return True


@njit(cache=True)
def _component_bound(size, lp_reduced):
    """Lower bound on the cover of a connected component: its LP bound ``ceil(size / 2)``
    once the LP reduction has run (every vertex at 1/2), else 1 for an edge or more."""
    if lp_reduced:
        return (size + 1) // 2
    return 1 if size >= 2 else 0


@njit(cache=True)
def run(insts, IS, F, ctl, SC, qarr, rules, work_budget, W, wst, maxsat_gap):
    """Advance the search until it is finished or ``work_budget`` (vertex visits, about)
    is spent. Returns ``DONE``, ``RUNNING`` or ``FOUND_STOP`` (a cover below the root
    bound was found and ``ctl[C_STOP_FOUND]`` asked to stop there). ``W``, ``wst``:
    scratch of the MaxSAT bound, which runs at nodes whose cheap bounds fall short of the
    best cover by at most ``maxsat_gap`` (negative: never)."""
    qmask = SC[S_QMASK]
    lp_on = (rules & R_LP) != 0
    pk_on = (rules & R_PACKING) != 0
    work0 = ctl[C_WORK]
    while ctl[C_FSP] > 0:
        if ctl[C_WORK] - work0 >= work_budget:
            return RUNNING
        if ctl[C_STOP_FOUND] and IS[0, F_FOUND]:
            return FOUND_STOP
        f = ctl[C_FSP] - 1
        typ = F[f, FR_TYPE]
        i = F[f, FR_INST]
        n = IS[i, F_N]
        if typ == T_NODE:
            G = insts[i]
            if len(G[POOL]) - IS[i, F_PTOP] < 4 * n + 64:
                _grow_pool(insts, IS, i, 4 * n + 64)
                G = insts[i]
            if F[f, FR_STAGE] == 0:
                ctl[C_NODES] += 1
                F[f, FR_STAGE] = 1
                if rules & R_EXHAUSTIVE:
                    touch_all(G, ctl, qarr, qmask, n)
            r = reduce(G, IS, i, ctl, SC, qarr, rules)
            ctl[C_WORK] += n + 16
            if r == NEED_SPACE:
                _grow_pool(insts, IS, i, IS[i, F_NEED] + 64)
                continue
            if r == INFEASIBLE:
                q_clear(ctl, qarr, qmask)
                ctl[C_FSP] -= 1
                continue
            if len(G[POOL]) - IS[i, F_PTOP] < 3 * n + 64:
                _grow_pool(insts, IS, i, 3 * n + 64)
                G = insts[i]
            lb = lower_bound(G, IS, i, SC, ctl, lp_on)
            if lb < IS[i, F_OPT] and IS[i, F_OPT] - lb <= maxsat_gap:
                lb2 = maxsat_bound(G, IS, i, SC, ctl, W, wst, IS[i, F_OPT])
                ctl[C_WORK] += 4 * n
                if lb2 > lb:
                    if lb2 >= IS[i, F_OPT]:
                        ctl[C_STAT + ST_MAXSAT_PRUNE] += 1
                    lb = lb2
            if i == 0 and IS[0, F_ROOTLB] < 0:
                IS[0, F_ROOTLB] = lb
            if lb >= IS[i, F_OPT]:
                ctl[C_STAT + ST_LB_PRUNE] += 1
                ctl[C_FSP] -= 1
                continue
            if IS[i, F_RN] == 0:
                ctl[C_STAT + ST_LEAF] += 1
                _record(insts, IS, i, ctl)
                ctl[C_FSP] -= 1
                continue
            # components (the pool has room for the lists: 4n free)
            off = IS[i, F_PTOP]
            nc = _components(G, IS, i, SC, ctl, off)
            sizes = SC[S_ITR]
            starts = SC[S_TMP4]
            rn = IS[i, F_RN]
            shrink = n > SHRINK_MIN and 2 * rn <= n
            if nc > 1 or shrink:
                # children: all components when shrinking or when the largest is at most
                # half the instance, else all but the largest
                nchild = nc
                rest = 0
                if not shrink and 2 * sizes[nc - 1] > n:
                    nchild = nc - 1
                    rest = _component_bound(sizes[nc - 1], lp_on)
                # component table after the lists: (start, size) pairs
                tab = off + rn
                pool = G[POOL]
                for c in range(nchild):
                    pool[tab + 2 * c] = off + starts[c]
                    pool[tab + 2 * c + 1] = sizes[c]
                IS[i, F_PTOP] = tab + 2 * nchild
                F[f, FR_TYPE] = T_DECOMP
                F[f, FR_STAGE] = 0
                F[f, FR_AUX] = tab
                F[f, FR_NAUX] = nchild
                F[f, FR_K] = 0
                F[f, FR_REST] = rest
                F[f, FR_LB] = lb
                continue
            if not _to_branch(insts, F, f, IS, i, ctl, SC, lb):
                _grow_pool(insts, IS, i, IS[i, F_NEED] + 64)
                continue
            continue
        if typ == T_BRANCH:
            G = insts[i]
            st = F[f, FR_STAGE]
            v = F[f, FR_V]
            if st == 0:
                _snapshot(F, f, IS, i)
                if pk_on:
                    add_neighbourhood_constraint(G, IS, i, SC, v, 1)
                    G = insts[i]
                set_vertex(G, IS, i, ctl, qarr, qmask, v, 1)
                pool = G[POOL]
                for j in range(F[f, FR_NAUX]):
                    w = pool[F[f, FR_AUX] + j]
                    if G[X][w] < 0:
                        set_vertex(G, IS, i, ctl, qarr, qmask, w, 1)
                F[f, FR_STAGE] = 1
                if _push(F, ctl, T_NODE, i) < 0:
                    ctl[C_STATUS] = -1
                    return DONE
                continue
            if st == 1:
                _rollback(G, F, f, IS, i, ctl, SC, qarr)
                if F[f, FR_LB] >= IS[i, F_OPT]:
                    ctl[C_FSP] -= 1
                    continue
                if pk_on:
                    # for u in N(v): not all of N(u) \ N[v] in the cover
                    x = G[X]
                    mark = SC[S_MARK]
                    g = new_gen(ctl, SC)
                    pool = G[POOL]
                    b = G[AST][v]
                    mark[v] = g
                    for p in range(b, b + G[ALN][v]):
                        mark[pool[p]] = g
                    tmp = SC[S_QUE]
                    for p in range(b, b + G[ALN][v]):
                        u = G[POOL][p]
                        if x[u] >= 0:
                            continue
                        k = 0
                        bu = G[AST][u]
                        for q in range(bu, bu + G[ALN][u]):
                            w = G[POOL][q]
                            if x[w] < 0 and mark[w] != g:
                                tmp[k] = w
                                k += 1
                        add_constraint(G, IS, i, tmp, k, 1)
                set_vertex(G, IS, i, ctl, qarr, qmask, v, 0)
                F[f, FR_STAGE] = 2
                if _push(F, ctl, T_NODE, i) < 0:
                    ctl[C_STATUS] = -1
                    return DONE
                continue
            _rollback(G, F, f, IS, i, ctl, SC, qarr)
            ctl[C_FSP] -= 1
            continue
        if typ == T_DECOMP:
            G = insts[i]
            k = F[f, FR_K]
            nchild = F[f, FR_NAUX]
            tab = F[f, FR_AUX]
            if k == nchild:
                if IS[i, F_RN] == 0:
                    _record(insts, IS, i, ctl)
                    ctl[C_FSP] -= 1
                    continue
                lb = lower_bound(G, IS, i, SC, ctl, lp_on)
                if lb >= IS[i, F_OPT]:
                    ctl[C_FSP] -= 1
                    continue
                if not _to_branch(insts, F, f, IS, i, ctl, SC, lb):
                    _grow_pool(insts, IS, i, IS[i, F_NEED] + 64)
                continue
            pool = G[POOL]
            # bound for component k: opt - decided - LP bounds of the components after it
            rest = F[f, FR_REST]
            for c in range(k + 1, nchild):
                rest += _component_bound(pool[tab + 2 * c + 1], lp_on)
            size = pool[tab + 2 * k + 1]
            bound = IS[i, F_OPT] - IS[i, F_CRT] - rest
            if bound <= _component_bound(size, lp_on):
                ctl[C_FSP] -= 1
                continue
            if bound > size + 1:
                bound = size + 1
            c = _child_instance(insts, IS, i, pool[tab + 2 * k], size, bound, SC)
            ctl[C_STAT + ST_INST] += 1
            q_clear(ctl, qarr, qmask)
            fc = _push(F, ctl, T_INST, c)
            if fc < 0:
                ctl[C_STATUS] = -1
                return DONE
            continue
        if typ == T_INST:
            G = insts[i]
            if F[f, FR_STAGE] == 0:
                F[f, FR_STAGE] = 1
                q_clear(ctl, qarr, qmask)
                touch_all(G, ctl, qarr, qmask, n)
                if _push(F, ctl, T_NODE, i) < 0:
                    ctl[C_STATUS] = -1
                    return DONE
                continue
            # the instance is solved
            ctl[C_FSP] -= 1
            q_clear(ctl, qarr, qmask)
            if i == 0:
                continue
            pf = f - 1
            p = F[pf, FR_INST]
            GP = insts[p]
            if IS[i, F_FOUND]:
                y = G[Y]
                mp = G[MP]
                for j in range(n):
                    assign_vertex(GP, IS, p, ctl, qarr, qmask, mp[j], y[j])
                q_clear(ctl, qarr, qmask)
                F[pf, FR_K] += 1
            else:
                ctl[C_FSP] -= 1  # no cover below the bound: prune the parent node
            continue
    return DONE
