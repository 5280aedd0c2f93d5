"""The CPU reference of the linear forest: a linear-time walk along the paths (Numba).

Every path is walked once from its smaller end; every cycle is broken at its weakest edge
(smallest ``(weight, lo, hi)``) and ranked from that edge's lower end. The permutation is
placed from the path lengths (an exclusive scan) instead of a sort.

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Sections 3.3 and 4.2, Algorithm 3.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .result import ForestArrays

__all__ = ["linear_forest_walk_cpu"]


@njit(cache=True)
def _other(partners, cur, prev):
    """Next vertex along the path/cycle from ``cur`` coming from ``prev`` (-1: none)."""
    a, b = partners[cur, 0], partners[cur, 1]
    if a >= 0 and a != prev:
        return a
    if b >= 0 and b != prev:
        return b
    return -1


@njit(cache=True)
def _rank_path(partners, v, order, path_id, position, length, done):
    """Walk the path that ends at v; give its vertices their path id and position."""
    L, prev, cur = 0, -1, v
    while cur >= 0:
        order[L] = cur
        done[cur] = True
        L += 1
        nxt = _other(partners, cur, prev)
        prev, cur = cur, nxt
    end = order[L - 1]
    forward = v <= end
    pid = min(v, end)
    length[pid] = L
    for t in range(L):
        u = order[t]
        path_id[u] = pid
        position[u] = t if forward else L - 1 - t


@njit(cache=True)
def _linear_forest(partners, weights):
    N = partners.shape[0]
    partners = partners.copy()
    path_id = np.empty(N, dtype=np.int64)
    position = np.empty(N, dtype=np.int64)
    length = np.zeros(N, dtype=np.int64)
    done = np.zeros(N, dtype=np.bool_)
    order = np.empty(N, dtype=np.int64)
    for v in range(N):  # paths, each walked once from its smaller end
        if not done[v] and (partners[v, 0] < 0 or partners[v, 1] < 0):
            _rank_path(partners, v, order, path_id, position, length, done)
    removed = np.empty((N, 2), dtype=np.int64)
    n_removed = 0
    for v in range(N):  # the rest are cycles: drop the weakest edge, rank from its lower end
        if done[v]:
            continue
        best_w, best_a, best_b = np.inf, N, N
        prev, cur = partners[v, 1], v
        while True:
            nxt = partners[cur, 0] if partners[cur, 0] != prev else partners[cur, 1]
            w = weights[cur, 0] if partners[cur, 0] == nxt else weights[cur, 1]
            a, b = min(cur, nxt), max(cur, nxt)
            if w < best_w or (w == best_w and (a < best_a or (a == best_a and b < best_b))):
                best_w, best_a, best_b = w, a, b
            prev, cur = cur, nxt
            if cur == v:
                break
        for s in range(2):
            if partners[best_a, s] == best_b:
                partners[best_a, s] = -1
            if partners[best_b, s] == best_a:
                partners[best_b, s] = -1
        removed[n_removed, 0] = best_a
        removed[n_removed, 1] = best_b
        n_removed += 1
        _rank_path(partners, best_a, order, path_id, position, length, done)
    offsets = np.zeros(N + 1, dtype=np.int64)
    for v in range(N):
        offsets[v + 1] = offsets[v] + length[v]
    perm = np.empty(N, dtype=np.int64)
    for v in range(N):
        perm[offsets[path_id[v]] + position[v]] = v
    n_paths = 0
    for v in range(N):
        if length[v] > 0:
            n_paths += 1
    path_start = np.empty(n_paths + 1, dtype=np.int64)
    t = 0
    for v in range(N):
        if length[v] > 0:
            path_start[t] = offsets[v]
            t += 1
    path_start[n_paths] = N
    return partners, path_id, position, perm, path_start, removed[:n_removed]



def linear_forest_walk_cpu(partners, weights) -> ForestArrays:
    """CPU reference: the :class:`kernels.forest.ForestArrays` of the [0,2]-factor
    ``(partners, weights)``, ``removed_edges`` as ``k x 2`` (lo, hi)."""
    return ForestArrays(*_linear_forest(np.ascontiguousarray(partners, dtype=np.int64), np.ascontiguousarray(weights)))
