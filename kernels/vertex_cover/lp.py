"""LP (Nemhauser-Trotter) reduction and bound, kept up to date from node to node.

The LP relaxation of vertex cover (``min sum x_v`` subject to ``x_u + x_v >= 1``) has a
half-integral optimum read off a minimum vertex cover of the bipartite double cover ``B``
(left copy ``v_L`` and right copy ``v_R`` of every vertex, an edge ``u_L v_R`` for every
edge ``uv``). Nemhauser and Trotter: some minimum cover contains every vertex at 1 and no
vertex at 0 of any optimal half-integral solution.

The engine keeps a maximum matching of ``B`` between nodes (``out``/``inn`` of the
instance) and repairs it after each change with augmenting paths from the free left
copies only (Hopcroft-Karp phases). Minimum cuts of the residual digraph ``D`` (left to
right along graph edges, right to left along matched edges) are its closed sets, and:

* if the matching is not perfect, the set reached from the free left copies gives an
  optimum in which some vertex is 0 (the LP value is below ``n / 2``): its 0s and 1s are
  fixed;
* if it is perfect, the strongly connected components of ``D`` are taken in topological
  order, and each one is added to a predecessor-closed set ``T`` unless it (or an earlier
  one) holds the other copy of one of its vertices. Right copies in ``T`` are at 0, left
  copies at 1 (Iwata, Oka and Yoshida). Repeating until nothing is fixed leaves a graph
  whose only LP optimum is all 1/2; its LP bound is ``ceil(n / 2)``, and the matching is
  a permutation whose cycles the cycle-cover bound reads.

References
----------
G. L. Nemhauser and L. E. Trotter, "Vertex packings: structural properties and
algorithms", Mathematical Programming 8 (1975) 232-248.

Y. Iwata, K. Oka and Y. Yoshida, "Linear-time FPT algorithms via network flow", Proc.
SODA 2014, 1749-1761.

T. Akiba and Y. Iwata, "Branch-and-reduce exponential/FPT algorithms in practice: a case
study of vertex cover", Theoretical Computer Science 609 (2016) 211-225.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .state import (C_STAT, ST_LP_CALLS, ST_LP_FIXED, AST, ALN, F_N, F_LPDIRTY, INN, OUT, POOL, S_ITR, S_LVL, S_MARK, S_QMASK, S_QUE,
                    S_TMP, S_TMP2, X, new_gen, set_vertex)


@njit(cache=True)
def _clean_matching(G, n):
    """Drop matched pairs whose ends are no longer both live and adjacent."""
    x = G[X]
    inn = G[INN]
    out = G[OUT]
    ast = G[AST]
    aln = G[ALN]
    pool = G[POOL]
    for v in range(n):
        inn[v] = -1
    for v in range(n):
        u = out[v]
        if u < 0:
            continue
        ok = x[v] < 0 and x[u] < 0
        if ok:
            ok = False
            b = ast[v]
            for p in range(b, b + aln[v]):
                if pool[p] == u:
                    ok = True
                    break
        if ok and inn[u] < 0:
            inn[u] = v
        else:
            out[v] = -1


@njit(cache=True)
def _augment(G, n, SC, ctl):
    """Hopcroft-Karp phases from the free left copies until the matching is maximum.
    Leaves in ``mark`` (generation returned) the nodes reached from the free left copies
    in the last (failing) search: left ``v`` as ``v``, right ``u`` as ``n + u``."""
    x = G[X]
    inn = G[INN]
    out = G[OUT]
    ast = G[AST]
    aln = G[ALN]
    pool = G[POOL]
    mark = SC[S_MARK]
    que = SC[S_QUE]
    lvl = SC[S_LVL]
    itr = SC[S_ITR]
    path = SC[S_TMP]
    while True:
        g = new_gen(ctl, SC)
        qt = 0
        for v in range(n):
            if x[v] < 0 and out[v] < 0:
                lvl[v] = 0
                mark[v] = g
                que[qt] = v
                qt += 1
        qs = 0
        found = False
        while qs < qt:
            v = que[qs]
            qs += 1
            b = ast[v]
            for p in range(b, b + aln[v]):
                u = pool[p]
                if x[u] >= 0 or mark[n + u] == g:
                    continue
                mark[n + u] = g
                w = inn[u]
                if w < 0:
                    found = True
                elif mark[w] != g:
                    mark[w] = g
                    lvl[w] = lvl[v] + 1
                    que[qt] = w
                    qt += 1
        if not found:
            return g
        # vertex-disjoint augmenting paths along the levels (iterative DFS)
        for j in range(qt):
            itr[que[j]] = ast[que[j]]
        for j in range(qt):
            s = que[j]
            if lvl[s] != 0 or out[s] >= 0:
                continue
            top = 0
            path[0] = s
            while top >= 0:
                v = path[top]
                moved = False
                end = ast[v] + aln[v]
                while itr[v] < end:
                    u = pool[itr[v]]
                    itr[v] += 1
                    if x[u] >= 0 or mark[n + u] != g:
                        continue
                    w = inn[u]
                    if w < 0:
                        mark[n + u] = 0  # entered once per phase
                        # augment along path[0..top] ending with v -> u
                        nu = u
                        for t in range(top, -1, -1):
                            a = path[t]
                            prev = out[a]
                            out[a] = nu
                            inn[nu] = a
                            nu = prev
                        top = -1
                        moved = True
                        break
                    if mark[w] == g and lvl[w] == lvl[v] + 1 and itr[w] < ast[w] + aln[w]:
                        mark[n + u] = 0
                        top += 1
                        path[top] = w
                        moved = True
                        break
                if not moved:
                    lvl[v] = -1  # dead end in this phase
                    top -= 1


@njit(cache=True)
def _scc_fix(G, n, SC, ctl, zeros, ones):
    """Perfect matching: Tarjan's SCCs of the residual digraph, then the greedy closed
    set in topological order. Writes the vertices at 0 and at 1; returns the counts."""
    x = G[X]
    inn = G[INN]
    ast = G[AST]
    aln = G[ALN]
    pool = G[POOL]
    N2 = 2 * n
    index = SC[S_LVL]   # DFS index per node (-1 unvisited)
    low = SC[S_ITR]
    stack = SC[S_QUE]   # Tarjan stack
    cstack = SC[S_TMP]  # call stack of nodes
    cpos = SC[S_TMP2]   # position in the node's successor list
    mark = SC[S_MARK]
    for a in range(N2):
        index[a] = -1
    # order of SCC emission (reverse topological): node lists in `order`, bounds in `cb`
    order = np.empty(N2, np.int32)
    cb = np.empty(N2 + 1, np.int32)
    nc = 0
    no = 0
    cb[0] = 0
    onstack = np.zeros(N2, np.bool_)
    counter = 0
    sp = 0
    for root in range(N2):
        r = root if root < n else root - n
        if x[r] >= 0 or index[root] >= 0:
            continue
        cs = 0
        cstack[0] = root
        cpos[0] = 0
        index[root] = counter
        low[root] = counter
        counter += 1
        stack[sp] = root
        sp += 1
        onstack[root] = True
        while cs >= 0:
            a = cstack[cs]
            # next successor of a
            nxt = -1
            if a < n:
                b = ast[a]
                while cpos[cs] < aln[a]:
                    u = pool[b + cpos[cs]]
                    cpos[cs] += 1
                    if x[u] < 0:
                        nxt = n + u
                        break
            else:
                if cpos[cs] == 0:
                    cpos[cs] = 1
                    w = inn[a - n]
                    if w >= 0 and x[w] < 0:
                        nxt = w
            if nxt >= 0:
                if index[nxt] < 0:
                    index[nxt] = counter
                    low[nxt] = counter
                    counter += 1
                    stack[sp] = nxt
                    sp += 1
                    onstack[nxt] = True
                    cs += 1
                    cstack[cs] = nxt
                    cpos[cs] = 0
                elif onstack[nxt]:
                    if index[nxt] < low[a]:
                        low[a] = index[nxt]
                continue
            # a is finished
            if low[a] == index[a]:
                while True:
                    sp -= 1
                    w = stack[sp]
                    onstack[w] = False
                    order[no] = w
                    no += 1
                    if w == a:
                        break
                nc += 1
                cb[nc] = no
            cs -= 1
            if cs >= 0:
                par = cstack[cs]
                if low[a] < low[par]:
                    low[par] = low[a]
    # topological order = reverse emission order
    g = new_gen(ctl, SC)
    nz = 0
    no1 = 0
    for c in range(nc - 1, -1, -1):
        for t in range(cb[c], cb[c + 1]):
            mark[order[t]] = g
        ok = True
        for t in range(cb[c], cb[c + 1]):
            a = order[t]
            tw = a + n if a < n else a - n
            if mark[tw] == g:
                ok = False
                break
        if ok:
            for t in range(cb[c], cb[c + 1]):
                a = order[t]
                if a >= n:
                    zeros[nz] = a - n
                    nz += 1
                else:
                    ones[no1] = a
                    no1 += 1
    return nz, no1


@njit(cache=True)
def lp_reduce(G, IS, i, ctl, SC, qarr):
    """Bring the matching up to date and fix the LP's integral vertices.

    Returns the number of vertices decided (0: the graph is LP-reduced, its matching is
    perfect and all-1/2 is its only LP optimum)."""
    n = IS[i, F_N]
    x = G[X]
    qmask = SC[S_QMASK]
    IS[i, F_LPDIRTY] = 0
    _clean_matching(G, n)
    g = _augment(G, n, SC, ctl)
    mark = SC[S_MARK]
    out = G[OUT]
    perfect = True
    for v in range(n):
        if x[v] < 0 and out[v] < 0:
            perfect = False
            break
    zeros = np.empty(n, np.int32)
    ones = np.empty(n, np.int32)
    nz = 0
    no1 = 0
    if not perfect:
        for v in range(n):
            if x[v] < 0:
                left_in = mark[v] == g
                right_in = mark[n + v] == g
                if left_in and not right_in:
                    zeros[nz] = v
                    nz += 1
                elif right_in and not left_in:
                    ones[no1] = v
                    no1 += 1
    else:
        nz, no1 = _scc_fix(G, n, SC, ctl, zeros, ones)
    done = 0
    for j in range(nz):
        v = zeros[j]
        if x[v] < 0:
            set_vertex(G, IS, i, ctl, qarr, qmask, v, 0)
            done += 1
    for j in range(no1):
        v = ones[j]
        if x[v] < 0:
            set_vertex(G, IS, i, ctl, qarr, qmask, v, 1)
            done += 1
    if done:
        IS[i, F_LPDIRTY] = 1
    ctl[C_STAT + ST_LP_CALLS] += 1
    ctl[C_STAT + ST_LP_FIXED] += done
    return done
