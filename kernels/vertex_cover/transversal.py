"""Local search for an independent set that meets the clique-cover bound.

A cover of the graph by ``k`` cliques bounds its independent sets by ``k``; an
independent set of exactly ``k`` vertices takes one vertex of every clique (an
independent *transversal*). When the bound is tight, finding such a set proves the
complementary vertex cover optimal at once. On graphs built from a hidden partition
(the model RB / BHOSLIB instances, planted solutions) the cover found at the root
usually *is* that partition, and the search becomes a constraint satisfaction problem
with one variable per clique whose values are the clique's vertices: two chosen
vertices may not be adjacent.

:func:`transversal_search` solves it by min-conflicts with breakout weights: every edge
carries a weight (1 at first), ``score(v)`` is the total weight of the edges from ``v``
to the vertices chosen in the other cliques. A step takes a random clique whose chosen
vertex is in conflict and moves its choice to the member of lowest score (not one left
in the last few steps); when no member improves, the weights of the chosen vertex's
conflict edges grow by one instead (Morris's breakout), which reshapes the landscape
until it can move. A step costs the degrees of the two vertices that change.

References
----------
S. Minton, M. D. Johnston, A. B. Philips and P. Laird, "Minimizing conflicts: a
heuristic repair method for constraint satisfaction and scheduling problems",
Artificial Intelligence 58 (1992) 161-205.

P. Morris, "The breakout method for escaping from local minima", Proc. AAAI 1993, 40-45.

K. Xu, F. Boussemart, F. Hemery and C. Lecoutre, "Random constraint satisfaction: easy
generation of hard (satisfiable) instances", Artificial Intelligence 171 (2007) 514-534.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .local_search import edge_ids

__all__ = ["transversal_search"]

#: steps a vertex stays forbidden after its clique's choice left it
TABU_TENURE = 7


@njit(cache=True)
def _choose(y, c, indptr, indices, cls, eid, w, score, bad, chosen, is_chosen, conf, cpos, nconf):
    """Vertex ``y`` becomes clique ``c``'s choice: its neighbours in other cliques gain
    its edge weights; cliques whose choice gets its first conflict join ``conf``.
    Returns the new size of ``conf``."""
    chosen[c] = y
    is_chosen[y] = True
    for p in range(indptr[y], indptr[y + 1]):
        z = indices[p]
        cz = cls[z]
        if cz == c:
            continue
        score[z] += w[eid[p]]
        bad[z] += 1
        if is_chosen[z] and bad[z] == 1:
            cpos[cz] = nconf
            conf[nconf] = cz
            nconf += 1
    if bad[y] > 0 and cpos[c] < 0:
        cpos[c] = nconf
        conf[nconf] = c
        nconf += 1
    return nconf


@njit(cache=True)
def _drop_conflict(c, conf, cpos, nconf):
    """Remove clique ``c`` from the sparse set ``conf``; returns its new size."""
    i = cpos[c]
    last = conf[nconf - 1]
    conf[i] = last
    cpos[last] = i
    cpos[c] = -1
    return nconf - 1


@njit(cache=True)
def _unchoose(x, c, indptr, indices, cls, eid, w, score, bad, is_chosen, conf, cpos, nconf):
    """Clique ``c`` gives up its choice ``x`` (inverse of :func:`_choose`)."""
    is_chosen[x] = False
    if cpos[c] >= 0:
        nconf = _drop_conflict(c, conf, cpos, nconf)
    for p in range(indptr[x], indptr[x + 1]):
        z = indices[p]
        cz = cls[z]
        if cz == c:
            continue
        score[z] -= w[eid[p]]
        bad[z] -= 1
        if is_chosen[z] and bad[z] == 0:
            nconf = _drop_conflict(cz, conf, cpos, nconf)
    return nconf


@njit(cache=True)
def _least(mem, lo, hi, key, skip, tabu, step, bad):
    """The member ``mem[lo:hi]`` of smallest ``key`` (random among ties) other than
    ``skip``; a tabu member (``tabu[v] > step``) only when it has no conflict. -1 if
    none."""
    best = -1
    ties = 0
    for t in range(lo, hi):
        v = mem[t]
        if v == skip or (tabu[v] > step and bad[v] > 0):
            continue
        if best < 0 or key[v] < key[best]:
            best = v
            ties = 1
        elif key[v] == key[best]:
            ties += 1
            if np.random.randint(ties) == 0:
                best = v
    return best


@njit(cache=True)
def _transversal(indptr, indices, cls, k, max_steps, seed, chosen):
    n = len(indptr) - 1
    np.random.seed(seed)
    eid, ea, _ = edge_ids(indptr, indices)
    w = np.ones(len(ea), np.int64)
    # members of each clique
    start = np.zeros(k + 1, np.int64)
    for v in range(n):
        start[cls[v] + 1] += 1
    for c in range(k):
        start[c + 1] += start[c]
    mem = np.empty(n, np.int64)
    fill = start[:k].copy()
    for v in range(n):
        mem[fill[cls[v]]] = v
        fill[cls[v]] += 1
    score = np.zeros(n, np.int64)
    bad = np.zeros(n, np.int64)
    is_chosen = np.zeros(n, np.bool_)
    conf = np.empty(k, np.int64)
    cpos = np.full(k, -1, np.int64)
    tabu = np.zeros(n, np.int64)
    nconf = 0
    # greedy start: each clique in turn takes a member with the fewest conflicts so far
    for c in range(k):
        best = _least(mem, start[c], start[c + 1], bad, -1, tabu, 0, bad)
        nconf = _choose(best, c, indptr, indices, cls, eid, w, score, bad, chosen, is_chosen, conf, cpos, nconf)
    for step in range(1, max_steps + 1):
        if nconf == 0:
            return step
        c = conf[np.random.randint(nconf)]
        x = chosen[c]
        best = _least(mem, start[c], start[c + 1], score, x, tabu, step, bad)
        if best >= 0 and score[best] < score[x]:
            nconf = _unchoose(x, c, indptr, indices, cls, eid, w, score, bad, is_chosen, conf, cpos, nconf)
            nconf = _choose(best, c, indptr, indices, cls, eid, w, score, bad, chosen, is_chosen, conf, cpos, nconf)
            tabu[x] = step + TABU_TENURE
        else:
            # local minimum for this clique: the edges of its conflicts weigh more
            for p in range(indptr[x], indptr[x + 1]):
                z = indices[p]
                if is_chosen[z] and cls[z] != c:
                    w[eid[p]] += 1
                    score[x] += 1
                    score[z] += 1
    return -1 if nconf > 0 else max_steps


def transversal_search(indptr, indices, cls, steps=1_000_000, seed=0):
    """An independent set with one vertex in each clique of a clique cover, if found.

    Parameters
    ----------
    indptr, indices : array_like
        CSR of a simple undirected graph with sorted rows.
    cls : array_like of int
        Clique of each vertex, ``0 .. k-1`` (every vertex in one clique, each clique a
        clique of the graph; e.g. from :func:`kernels.vertex_cover.mis_bnb.root_clique_cover`).
    steps : int
        Most moves to try.
    seed : int
        Random seed (deterministic for a seed).

    Returns
    -------
    ndarray of int64 or None
        Sorted vertex ids of an independent set of ``k`` vertices (a maximum one: no
        independent set has more), or None when none was found within ``steps``.

    Examples
    --------
    >>> import numpy as np
    >>> # two triangles {0,1,2}, {3,4,5} and the edges 0-3, 1-4
    >>> indptr = np.array([0, 3, 6, 8, 11, 14, 16])
    >>> indices = np.array([1, 2, 3, 0, 2, 4, 0, 1, 0, 4, 5, 1, 3, 5, 3, 4])
    >>> s = transversal_search(indptr, indices, np.array([0, 0, 0, 1, 1, 1]))
    >>> len(s)
    2
    """
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    indices = np.ascontiguousarray(indices, dtype=np.int64)
    cls = np.ascontiguousarray(cls, dtype=np.int64)
    n = len(indptr) - 1
    if n == 0:
        return np.zeros(0, np.int64)
    k = int(cls.max()) + 1
    chosen = np.empty(k, np.int64)
    if _transversal(indptr, indices, cls, k, int(steps), int(seed), chosen) < 0:
        return None
    return np.sort(chosen)
