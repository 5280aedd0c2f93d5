"""Packing constraints of Akiba and Iwata: branching decisions that rule out dominated covers.

A constraint is a vertex set ``P`` and a number ``need``: at least ``need`` vertices of
``P`` stay out of the cover. They are added where a cover that breaks them would have a
smaller or equal counterpart elsewhere in the search tree:

* taking ``v`` into the cover (branching or the unconfined rule): not all of ``N(v)`` may
  join it, else ``v`` could leave;
* keeping ``v`` out (so ``N(v)`` is in): for each ``u`` in ``N(v)``, not all of
  ``N(u) \\ N[v]`` may be in, else swapping ``u`` for ``v`` gives a cover of the same size
  that the other branch has already seen.

:func:`packing_reduce` prunes a node whose decisions break a constraint, keeps the free
vertices of a tight constraint out of the cover, and, when a constraint can afford only
some of its free vertices in the cover, puts in the cover any outside vertex whose
exclusion would push all its neighbours of the constraint in. Constraints are records
``[prev, len, need, v_1 .. v_len]`` in the instance's pool (a linked list through
``prev``, head in ``IS[i, F_PKH]``), given back on backtracking like everything else.
Vertices removed by folds (``x == 2``) count as neither free nor in the cover. Dropping
constraints is always safe (the search only sees more covers), which is what happens
when a component becomes an instance of its own.

References
----------
T. Akiba and Y. Iwata, "Branch-and-reduce exponential/FPT algorithms in practice: a case
study of vertex cover", Theoretical Computer Science 609 (2016) 211-225.
"""
from __future__ import annotations

from numba import njit

from .state import (AST, ALN, F_NEED, F_PKDIRTY, F_PKH, POOL, S_MARK, S_QMASK, S_TMP4, X, new_gen, pool_alloc,
                    set_vertex)


@njit(cache=True)
def add_constraint(G, IS, i, verts, k, need):
    """Record "at least ``need`` of ``verts[:k]`` stay out of the cover" (skipped when the
    pool is full: constraints are optional)."""
    if k < need:
        return
    p = pool_alloc(G, IS, i, 3 + k)
    if p < 0:
        IS[i, F_NEED] = 0  # not a need for space: constraints are optional
        return
    pool = G[POOL]
    pool[p] = IS[i, F_PKH]
    pool[p + 1] = k
    pool[p + 2] = need
    for j in range(k):
        pool[p + 3 + j] = verts[j]
    IS[i, F_PKH] = p


@njit(cache=True)
def add_neighbourhood_constraint(G, IS, i, SC, v, need):
    """Constraint on the live neighbours of ``v``."""
    x = G[X]
    pool = G[POOL]
    tmp = SC[S_TMP4]
    k = 0
    b = G[AST][v]
    for p in range(b, b + G[ALN][v]):
        u = pool[p]
        if x[u] < 0:
            tmp[k] = u
            k += 1
    add_constraint(G, IS, i, tmp, k, need)


@njit(cache=True)
def packing_reduce(G, IS, i, ctl, SC, qarr):
    """Check and apply every constraint: -1 (a constraint is broken: prune), else the
    number of vertices decided."""
    x = G[X]
    ast = G[AST]
    aln = G[ALN]
    mark = SC[S_MARK]
    qmask = SC[S_QMASK]
    IS[i, F_PKDIRTY] = 0
    done = 0
    p = IS[i, F_PKH]
    while p >= 0:
        pool = G[POOL]
        k = pool[p + 1]
        need = pool[p + 2]
        maxin = k - need
        s1 = 0
        free = 0
        first = -1
        for j in range(k):
            v = pool[p + 3 + j]
            if x[v] == 1:
                s1 += 1
            elif x[v] < 0:
                free += 1
                if first < 0:
                    first = v
        if s1 > maxin:
            return -1
        if free > 0 and s1 == maxin:
            # every free member stays out: two adjacent free members are a contradiction
            g = new_gen(ctl, SC)
            for j in range(k):
                v = pool[p + 3 + j]
                if x[v] < 0:
                    mark[v] = g
            for j in range(k):
                v = pool[p + 3 + j]
                if x[v] < 0:
                    b = ast[v]
                    for q in range(b, b + aln[v]):
                        if mark[pool[q]] == g and x[pool[q]] < 0:
                            return -1
            for j in range(k):
                v = pool[p + 3 + j]
                if x[v] < 0:
                    set_vertex(G, IS, i, ctl, qarr, qmask, v, 0)
                    done += 1
        elif free > 0 and s1 + free > maxin:
            # an outside neighbour w of `first` with more than maxin - s1 free members
            # as neighbours must be in the cover
            g = new_gen(ctl, SC)
            for j in range(k):
                v = pool[p + 3 + j]
                if x[v] < 0:
                    mark[v] = g
            b = ast[first]
            for q in range(b, b + aln[first]):
                w = pool[q]
                if x[w] >= 0 or mark[w] == g:
                    continue
                c = 0
                bw = ast[w]
                for t in range(bw, bw + aln[w]):
                    z = pool[t]
                    if x[z] < 0 and mark[z] == g:
                        c += 1
                if s1 + c > maxin:
                    set_vertex(G, IS, i, ctl, qarr, qmask, w, 1)
                    done += 1
                    break
        p = G[POOL][p]
    return done
