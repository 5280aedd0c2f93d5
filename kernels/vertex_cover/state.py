"""Search state of the branch-and-reduce vertex cover engine: instances, undo, folds.

An *instance* is a graph on vertices ``0..n-1`` together with everything the search
changes in it. It is a tuple of ten ``int32`` arrays (indices ``X`` .. ``POOL`` below)
plus one row of scalars in the engine's ``int64`` table ``IS``:

``x``
    ``-1`` undecided (the vertex is *live*), ``0`` outside the cover, ``1`` in the cover,
    ``2`` removed by a fold or an alternative (its value is lifted from the vertices that
    replaced it, see :func:`reverse_mods`).
``y``
    The best cover found in this instance (valid when the ``FOUND`` scalar is set).
``deg``
    Live degree of each live vertex (stale for removed vertices, which nobody reads).
``ast, aln``
    Start and length of each vertex's adjacency list inside ``pool``. Lists keep the
    entries of removed vertices (everything that walks a list skips ``x >= 0``), which
    is what makes removal and its undo O(degree).
``stk``
    Undo stack: a vertex id for every vertex decided by :func:`set_vertex`, ``-(p + 1)``
    for a modification record at ``pool[p]`` (a fold or an alternative).
``inn, out``
    The maximum matching of the bipartite double cover that the LP reduction keeps from
    node to node (``out[v]``: right partner of the left copy of ``v``; ``inn[u]``: left
    partner of the right copy of ``u``).
``mp``
    For an instance that is a component of another one: its vertex ids in the parent.
``pool``
    A LIFO arena holding the adjacency lists, modification records and packing
    constraints; the search snapshots its top and gives everything above back on
    backtracking. Only the active (innermost) instance ever allocates, so the pool can be
    grown (replaced by a larger copy) between search steps.

Folds follow Akiba and Iwata: folding an independent set ``S`` with ``|N(S)| = |S| + 1``
keeps the first vertex ``s`` of ``N(S)`` as the merged vertex (new list ``N(N(S)) \\ (S
| N(S))``), removes ``S`` and the rest of ``N(S)`` (``x = 2``) and adds ``|S|`` to the
cover; neighbours of the removed part that were not adjacent to ``s`` get ``s`` written
over one of their entries in place (recorded, undone on backtracking). The *alternative*
of two sets ``A, B`` (funnel and desk rules) removes ``A | B`` and joins ``N(A) \\ B`` to
``N(B) \\ A`` completely.

Every change pushes the neighbourhood of what changed onto the rules' work queues
(:func:`touch`), so the reductions inside the search only look where something changed.

References
----------
T. Akiba and Y. Iwata, "Branch-and-reduce exponential/FPT algorithms in practice: a case
study of vertex cover", Theoretical Computer Science 609 (2016) 211-225.
"""
from __future__ import annotations

import numpy as np
from numba import njit

# -- per-instance arrays (positions in the instance tuple)
X, Y, DEG, AST, ALN, STK, INN, OUT, MP, POOL = range(10)
N_INSTANCE_ARRAYS = 10

# -- per-instance scalars (columns of IS)
(F_N, F_RN, F_TOP, F_CRT, F_OPT, F_FOUND, F_PTOP, F_MODH, F_PKH, F_LPDIRTY, F_PKDIRTY, F_ROOTLB,
 F_NEED) = range(13)
N_FIELDS = 16

# -- scratch arrays (positions in the scratch tuple); sized from the root instance
S_MARK, S_QUE, S_LVL, S_ITR, S_TMP, S_TMP2, S_POS, S_CNT, S_QMASK, S_TMP3, S_TMP4, S_MARK2 = range(12)
N_SCRATCH = 12

# -- control scalars (int64 array ``ctl``)
C_GEN, C_NODES, C_WORK, C_QBASE = 0, 1, 2, 8
NQ = 5
Q_DEG, Q_UNC, Q_TWIN, Q_FUN, Q_DESK = range(NQ)
# statistics (counters in ctl[C_STAT + k])
C_STAT = 32
STAT_NAMES = ("lp_calls", "lp_fixed", "degree01", "triangle", "fold2", "unconfined", "twin", "funnel",
              "simplicial", "desk", "packing_fixed", "packing_pruned", "bound_pruned", "instances", "leaves",
              "maxsat_pruned")
(ST_LP_CALLS, ST_LP_FIXED, ST_DEG01, ST_TRI, ST_FOLD, ST_UNC, ST_TWIN, ST_FUN, ST_SIMPL, ST_DESK, ST_PK_FIX,
 ST_PK_PRUNE, ST_LB_PRUNE, ST_INST, ST_LEAF, ST_MAXSAT_PRUNE) = range(len(STAT_NAMES))
N_CTL = C_STAT + len(STAT_NAMES) + 1

# -- modification records in the pool
MOD_FOLD, MOD_ALT = 1, 2
M_PREV, M_TYPE, M_ADD, M_NREM, M_NVS, M_K, M_NEDIT, M_HEAD = range(8)

UNDECIDED = -1
FOLDED = 2


# --------------------------------------------------------------------------- markers
@njit(cache=True)
def new_gen(ctl, SC):
    """Start a new marker generation: ``mark[i] == gen`` means ``i`` is in the set.

    The two marker arrays ``S_MARK`` and ``S_MARK2`` share the counter, so a value in
    either is never mistaken for a later generation."""
    g = ctl[C_GEN] + 1
    if g >= 2_000_000_000:
        SC[S_MARK][:] = 0
        SC[S_MARK2][:] = 0
        g = 1
    ctl[C_GEN] = g
    return np.int32(g)


# --------------------------------------------------------------------------- queues
@njit(cache=True)
def q_push(ctl, qarr, qmask, q, v):
    if (qmask[v] >> q) & 1:
        return
    qmask[v] |= np.int32(1 << q)
    cap = qarr.shape[1]
    t = ctl[C_QBASE + 2 * q + 1]
    qarr[q, t] = v
    t += 1
    if t == cap:
        t = 0
    ctl[C_QBASE + 2 * q + 1] = t


@njit(cache=True)
def q_pop(ctl, qarr, qmask, q):
    """Next vertex of queue ``q`` or -1 when empty."""
    h = ctl[C_QBASE + 2 * q]
    if h == ctl[C_QBASE + 2 * q + 1]:
        return -1
    v = qarr[q, h]
    h += 1
    if h == qarr.shape[1]:
        h = 0
    ctl[C_QBASE + 2 * q] = h
    qmask[v] &= np.int32(~(1 << q))
    return v


@njit(cache=True)
def q_empty(ctl, q):
    return ctl[C_QBASE + 2 * q] == ctl[C_QBASE + 2 * q + 1]


@njit(cache=True)
def q_clear(ctl, qarr, qmask):
    for q in range(NQ):
        while q_pop(ctl, qarr, qmask, q) >= 0:
            pass


@njit(cache=True)
def touch(ctl, qarr, qmask, v):
    """Queue ``v`` for every local rule (its neighbourhood changed)."""
    for q in range(NQ):
        q_push(ctl, qarr, qmask, q, v)


@njit(cache=True)
def touch_all(G, ctl, qarr, qmask, n):
    x = G[X]
    for v in range(n):
        if x[v] < 0:
            touch(ctl, qarr, qmask, v)


# --------------------------------------------------------------------------- adjacency
@njit(cache=True)
def live_degree(G, v):
    x = G[X]
    pool = G[POOL]
    d = 0
    s = G[AST][v]
    for p in range(s, s + G[ALN][v]):
        if x[pool[p]] < 0:
            d += 1
    return d


@njit(cache=True)
def live_csr(G):
    """CSR of the live graph (vertices with ``x < 0``), renumbered ``0..k-1`` in id
    order, rows sorted: ``(indptr, indices, ids)`` with ``ids`` the input ids."""
    x = G[X]
    ast = G[AST]
    aln = G[ALN]
    pool = G[POOL]
    n = len(x)
    pos = np.full(n, -1, np.int64)
    k = 0
    for v in range(n):
        if x[v] < 0:
            pos[v] = k
            k += 1
    ids = np.empty(k, np.int64)
    indptr = np.zeros(k + 1, np.int64)
    for v in range(n):
        if x[v] < 0:
            d = 0
            for p in range(ast[v], ast[v] + aln[v]):
                if x[pool[p]] < 0:
                    d += 1
            ids[pos[v]] = v
            indptr[pos[v] + 1] = d
    for i in range(k):
        indptr[i + 1] += indptr[i]
    indices = np.empty(indptr[k], np.int64)
    for v in range(n):
        if x[v] < 0:
            i = pos[v]
            q = indptr[i]
            for p in range(ast[v], ast[v] + aln[v]):
                u = pool[p]
                if x[u] < 0:
                    indices[q] = pos[u]
                    q += 1
            # folds append to lists, so a row may be out of order
            indices[indptr[i]:indptr[i + 1]].sort()
    return indptr, indices, ids


@njit(cache=True)
def adjacent(G, a, b):
    """True when the live vertices ``a`` and ``b`` are adjacent (scans the shorter list)."""
    ast = G[AST]
    aln = G[ALN]
    if aln[b] < aln[a]:
        a, b = b, a
    pool = G[POOL]
    s = ast[a]
    for p in range(s, s + aln[a]):
        if pool[p] == b:
            return True
    return False


@njit(cache=True)
def is_live_clique(G, S, size, label, tag):
    """True when the ``size`` live vertices ``S[:size]``, exactly those live vertices
    with ``label[v] == tag``, are pairwise adjacent (each sees the other ``size - 1``)."""
    x = G[X]
    pool = G[POOL]
    ast = G[AST]
    aln = G[ALN]
    for j in range(size):
        v = S[j]
        c = 0
        for p in range(ast[v], ast[v] + aln[v]):
            u = pool[p]
            if x[u] < 0 and label[u] == tag:
                c += 1
        if c != size - 1:
            return False
    return True


# --------------------------------------------------------------------------- decisions
@njit(cache=True)
def _remove(G, IS, i, ctl, qarr, qmask, v, a):
    """Decide the live vertex ``v`` (``a`` in {0, 1}) and update its neighbours' degrees."""
    x = G[X]
    deg = G[DEG]
    pool = G[POOL]
    x[v] = a
    top = IS[i, F_TOP]
    G[STK][top] = v
    IS[i, F_TOP] = top + 1
    IS[i, F_RN] -= 1
    IS[i, F_CRT] += a
    s = G[AST][v]
    for p in range(s, s + G[ALN][v]):
        u = pool[p]
        if x[u] < 0:
            deg[u] -= 1
            touch(ctl, qarr, qmask, u)
    IS[i, F_LPDIRTY] = 1
    IS[i, F_PKDIRTY] = 1


@njit(cache=True)
def set_vertex(G, IS, i, ctl, qarr, qmask, v, a):
    """``a = 1``: put ``v`` in the cover. ``a = 0``: keep ``v`` out, so its live
    neighbours go into the cover."""
    _remove(G, IS, i, ctl, qarr, qmask, v, a)
    if a == 0:
        x = G[X]
        pool = G[POOL]
        s = G[AST][v]
        for p in range(s, s + G[ALN][v]):
            u = pool[p]
            if x[u] < 0:
                _remove(G, IS, i, ctl, qarr, qmask, u, 1)


@njit(cache=True)
def assign_vertex(G, IS, i, ctl, qarr, qmask, v, a):
    """Decide ``v`` as ``a`` without forcing its neighbours (component results)."""
    _remove(G, IS, i, ctl, qarr, qmask, v, a)


@njit(cache=True)
def _recompute_degree(G, v):
    G[DEG][v] = live_degree(G, v)


@njit(cache=True)
def restore(G, IS, i, target_top):
    """Undo decisions and modifications down to stack height ``target_top``."""
    x = G[X]
    deg = G[DEG]
    stk = G[STK]
    ast = G[AST]
    aln = G[ALN]
    top = IS[i, F_TOP]
    while top > target_top:
        top -= 1
        e = stk[top]
        pool = G[POOL]
        if e >= 0:
            v = e
            IS[i, F_CRT] -= x[v]
            x[v] = -1
            IS[i, F_RN] += 1
            s = ast[v]
            for p in range(s, s + aln[v]):
                u = pool[p]
                if x[u] < 0:
                    deg[u] += 1
        else:
            p = -e - 1
            nrem = pool[p + M_NREM]
            nvs = pool[p + M_NVS]
            nedit = pool[p + M_NEDIT]
            rem0 = p + M_HEAD
            vs0 = rem0 + nrem
            oa0 = vs0 + nvs
            ol0 = oa0 + nvs
            ed0 = ol0 + nvs
            for j in range(nedit - 1, -1, -1):
                pool[pool[ed0 + 2 * j]] = pool[ed0 + 2 * j + 1]
            for j in range(nvs):
                w = pool[vs0 + j]
                ast[w] = pool[oa0 + j]
                aln[w] = pool[ol0 + j]
            for j in range(nrem):
                x[pool[rem0 + j]] = -1
            IS[i, F_RN] += nrem
            IS[i, F_CRT] -= pool[p + M_ADD]
            for j in range(nvs):
                _recompute_degree(G, pool[vs0 + j])
            IS[i, F_MODH] = pool[p + M_PREV]
    IS[i, F_TOP] = top
    IS[i, F_LPDIRTY] = 1
    IS[i, F_PKDIRTY] = 1


# --------------------------------------------------------------------------- pool
@njit(cache=True)
def pool_free(G, IS, i):
    return len(G[POOL]) - IS[i, F_PTOP]


@njit(cache=True)
def pool_alloc(G, IS, i, size):
    """Offset of ``size`` new pool entries, or -1 (and the need recorded) when full."""
    p = IS[i, F_PTOP]
    if p + size > len(G[POOL]):
        IS[i, F_NEED] = max(IS[i, F_NEED], size)
        return -1
    IS[i, F_PTOP] = p + size
    return p


@njit(cache=True)
def _new_mod(G, IS, i, typ, add, nrem, nvs, k, nedit):
    size = M_HEAD + nrem + 3 * nvs + 2 * nedit
    p = pool_alloc(G, IS, i, size)
    if p < 0:
        return -1
    pool = G[POOL]
    pool[p + M_PREV] = IS[i, F_MODH]
    pool[p + M_TYPE] = typ
    pool[p + M_ADD] = add
    pool[p + M_NREM] = nrem
    pool[p + M_NVS] = nvs
    pool[p + M_K] = k
    pool[p + M_NEDIT] = nedit
    return p


@njit(cache=True)
def _commit_mod(G, IS, i, ctl, qarr, qmask, p):
    """Push the filled record ``p``: mark its removed vertices, count its cover vertices,
    recompute and touch its changed vertices."""
    pool = G[POOL]
    x = G[X]
    nrem = pool[p + M_NREM]
    nvs = pool[p + M_NVS]
    rem0 = p + M_HEAD
    vs0 = rem0 + nrem
    for j in range(nrem):
        x[pool[rem0 + j]] = FOLDED
    IS[i, F_RN] -= nrem
    IS[i, F_CRT] += pool[p + M_ADD]
    top = IS[i, F_TOP]
    G[STK][top] = -(p + 1)
    IS[i, F_TOP] = top + 1
    IS[i, F_MODH] = p
    for j in range(nvs):
        w = pool[vs0 + j]
        _recompute_degree(G, w)
        touch(ctl, qarr, qmask, w)
    IS[i, F_LPDIRTY] = 1
    IS[i, F_PKDIRTY] = 1


@njit(cache=True)
def fold(G, IS, i, ctl, SC, qarr, S, ns, NS, nn):
    """Fold the independent set ``S[:ns]`` with ``N(S) = NS[:nn]`` (``nn == ns + 1``, ``NS``
    independent): ``NS[0]`` becomes the merged vertex. Returns False (nothing changed)
    when the pool is full."""
    x = G[X]
    ast = G[AST]
    aln = G[ALN]
    mark = SC[S_MARK]
    tmp = SC[S_TMP3]
    qmask = SC[S_QMASK]
    pool = G[POOL]
    s = NS[0]
    # new neighbourhood of s: live neighbours of N(S) outside S | N(S)
    g = new_gen(ctl, SC)
    for j in range(ns):
        mark[S[j]] = g
    for j in range(nn):
        mark[NS[j]] = g
    cnt = 0
    nedit = 0
    for j in range(nn):
        v = NS[j]
        b = ast[v]
        for p in range(b, b + aln[v]):
            u = pool[p]
            if x[u] < 0 and mark[u] != g:
                mark[u] = g
                tmp[cnt] = u
                cnt += 1
    # vertices that were not adjacent to s need s written over one entry
    g2 = new_gen(ctl, SC)
    b = ast[s]
    for p in range(b, b + aln[s]):
        mark[pool[p]] = g2
    for j in range(cnt):
        if mark[tmp[j]] != g2:
            nedit += 1
    nrem = ns + nn - 1
    nvs = 1 + cnt
    p = _new_mod(G, IS, i, MOD_FOLD, ns, nrem, nvs, 0, nedit)
    if p < 0:
        return False
    lst = pool_alloc(G, IS, i, cnt)
    if lst < 0:
        IS[i, F_PTOP] = p  # give the record back
        return False
    pool = G[POOL]
    rem0 = p + M_HEAD
    vs0 = rem0 + nrem
    oa0 = vs0 + nvs
    ol0 = oa0 + nvs
    ed0 = ol0 + nvs
    for j in range(ns):
        pool[rem0 + j] = S[j]
    for j in range(1, nn):
        pool[rem0 + ns + j - 1] = NS[j]
    pool[vs0] = s
    for j in range(cnt):
        pool[vs0 + 1 + j] = tmp[j]
    for j in range(nvs):
        w = pool[vs0 + j]
        pool[oa0 + j] = ast[w]
        pool[ol0 + j] = aln[w]
    # in-place edits: overwrite one entry from NS[1:] with s
    g3 = new_gen(ctl, SC)
    for j in range(1, nn):
        mark[NS[j]] = g3
    e = 0
    for j in range(cnt):
        z = tmp[j]
        if mark[z] == g2:
            continue
        bz = ast[z]
        for q in range(bz, bz + aln[z]):
            if mark[pool[q]] == g3:
                pool[ed0 + 2 * e] = q
                pool[ed0 + 2 * e + 1] = pool[q]
                pool[q] = s
                e += 1
                break
    for j in range(cnt):
        pool[lst + j] = tmp[j]
    ast[s] = lst
    aln[s] = cnt
    _commit_mod(G, IS, i, ctl, qarr, qmask, p)
    return True


@njit(cache=True)
def alternative(G, IS, i, ctl, SC, qarr, A, na, B, nb):
    """The alternative reduction for sets ``A`` and ``B`` (``|A| == |B|``, some minimum
    cover contains all of one and none of the other): common neighbours go into the
    cover, ``A | B`` is removed and ``N(A) \\ B`` joined completely to ``N(B) \\ A``.
    Returns False (nothing changed) when the pool is full."""
    x = G[X]
    ast = G[AST]
    aln = G[ALN]
    mark = SC[S_MARK]
    qmask = SC[S_QMASK]
    tmp = SC[S_TMP3]
    cnt = SC[S_CNT]
    pool = G[POOL]
    # sizes first (to know the pool need before changing anything)
    g = new_gen(ctl, SC)
    for j in range(na):
        mark[A[j]] = g
    for j in range(nb):
        mark[B[j]] = g
    gA = new_gen(ctl, SC)  # marks N(A) \ (A | B) with gA, N(B) ... with gA + 1 below
    # collect N(A) and N(B) outside A | B; cnt[u] bit 1: in N(A), bit 2: in N(B)
    nt = 0
    for j in range(na + nb):
        v = A[j] if j < na else B[j - na]
        bit = 1 if j < na else 2
        b = ast[v]
        for p in range(b, b + aln[v]):
            u = pool[p]
            if x[u] < 0 and mark[u] != g:
                if mark[u] != gA:
                    mark[u] = gA
                    cnt[u] = 0
                    tmp[nt] = u
                    nt += 1
                cnt[u] |= bit
    # common neighbours go into the cover
    for j in range(nt):
        u = tmp[j]
        if cnt[u] == 3 and x[u] < 0:
            set_vertex(G, IS, i, ctl, qarr, qmask, u, 1)
    na2 = 0
    nb2 = 0
    for j in range(nt):
        u = tmp[j]
        if cnt[u] == 1:
            na2 += 1
    nb2 = 0
    for j in range(nt):
        if cnt[tmp[j]] == 2:
            nb2 += 1
    # order: A2 then B2
    A2 = SC[S_TMP4]
    k1 = 0
    k2 = na2
    for j in range(nt):
        u = tmp[j]
        if cnt[u] == 1:
            A2[k1] = u
            k1 += 1
        elif cnt[u] == 2:
            A2[k2] = u
            k2 += 1
    nvs = na2 + nb2
    total = 0
    for j in range(nvs):
        total += G[DEG][A2[j]] + (nb2 if j < na2 else na2)
    nrem = na + nb
    p = _new_mod(G, IS, i, MOD_ALT, na, nrem, nvs, na2, 0)
    if p < 0:
        return False
    lst = pool_alloc(G, IS, i, total)
    if lst < 0:
        IS[i, F_PTOP] = p
        return False
    pool = G[POOL]
    rem0 = p + M_HEAD
    vs0 = rem0 + nrem
    oa0 = vs0 + nvs
    ol0 = oa0 + nvs
    for j in range(na):
        pool[rem0 + j] = A[j]
    for j in range(nb):
        pool[rem0 + na + j] = B[j]
    for j in range(nvs):
        w = A2[j]
        pool[vs0 + j] = w
        pool[oa0 + j] = ast[w]
        pool[ol0 + j] = aln[w]
    # new lists: live neighbours outside A | B, then the other side
    q = lst
    for j in range(nvs):
        w = A2[j]
        start = q
        b = ast[w]
        for t in range(b, b + aln[w]):
            u = pool[t]
            if x[u] < 0 and mark[u] != g:
                pool[q] = u
                q += 1
        # the other side (skipping those already adjacent)
        g4 = new_gen(ctl, SC)
        for t in range(start, q):
            mark[pool[t]] = g4
        lo = na2 if j < na2 else 0
        hi = nvs if j < na2 else na2
        for t in range(lo, hi):
            u = A2[t]
            if mark[u] != g4:
                pool[q] = u
                q += 1
        # restore the A | B marks (the generation changed)
        g = new_gen(ctl, SC)
        for t in range(na):
            mark[A[t]] = g
        for t in range(nb):
            mark[B[t]] = g
        ast[w] = start
        aln[w] = q - start
    IS[i, F_PTOP] = q
    _commit_mod(G, IS, i, ctl, qarr, qmask, p)
    return True


@njit(cache=True)
def reverse_mods(G, IS, i, y):
    """Lift ``y`` (values of the live vertices and the decided ones) through the
    instance's modifications, newest first: afterwards every vertex is 0 or 1."""
    reverse_mods_from(G, IS[i, F_MODH], y)


@njit(cache=True)
def reverse_mods_from(G, head, y):
    """:func:`reverse_mods` from the modification record at ``head`` down."""
    pool = G[POOL]
    p = head
    while p >= 0:
        typ = pool[p + M_TYPE]
        nrem = pool[p + M_NREM]
        nvs = pool[p + M_NVS]
        rem0 = p + M_HEAD
        vs0 = rem0 + nrem
        if typ == MOD_FOLD:
            k = nrem // 2
            # removed = S (k vertices) then NS[1:] (k vertices); vs[0] = merged vertex
            if y[pool[vs0]] == 0:
                for j in range(k):
                    y[pool[rem0 + j]] = 1
                for j in range(k):
                    y[pool[rem0 + k + j]] = 0
            else:
                for j in range(k):
                    y[pool[rem0 + j]] = 0
                for j in range(k):
                    y[pool[rem0 + k + j]] = 1
        else:
            k = pool[p + M_K]
            half = nrem // 2
            # the join of N(A) and N(B) puts all of one side in the cover
            a1 = True
            for j in range(k):
                if y[pool[vs0 + j]] != 1:
                    a1 = False
            b0 = False
            for j in range(k, nvs):
                if y[pool[vs0 + j]] == 0:
                    b0 = True
            if a1 or b0:  # N(A) all in the cover (or N(B) not): A out, B in
                for j in range(half):
                    y[pool[rem0 + j]] = 0
                for j in range(half, nrem):
                    y[pool[rem0 + j]] = 1
            else:
                for j in range(half):
                    y[pool[rem0 + j]] = 1
                for j in range(half, nrem):
                    y[pool[rem0 + j]] = 0
        p = pool[p + M_PREV]
