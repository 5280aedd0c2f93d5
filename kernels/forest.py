"""Linear forest from a [0,2]-factor (paper 001, Sections 3.3 and 4.2).

1. Break every cycle at its weakest edge (smallest ``(weight, lo, hi)``).
2. Give every vertex its path id (the smaller end vertex id) and position (0 at that end).
3. The permutation sorting vertices by (path id, position): under it the forest's
   adjacency is tridiagonal.

The CPU version walks the paths in linear time (Numba). The GPU version uses the paper's
bidirectional scan (pointer jumping in both directions with ping-pong buffers; ``min``
over edges for the cycles, ``+`` for positions) in ``kernels/cuda/forest.cu``; the
ranking scan stops early once every pointer has reached a path end (checked every
``check_every`` steps, so there is no host synchronization per step); ``early_exit=False``
runs the paper's fixed ``ceil(log2 N)`` steps. The permutation is then computed in linear
time from the path lengths (an exclusive scan) instead of a sort.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .backend import is_device_array

__all__ = ["linear_forest_cpu", "linear_forest_gpu", "linear_forest_arrays"]


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
def _linear_forest(partners, weights):
    N = partners.shape[0]
    partners = partners.copy()
    deg = (partners >= 0).sum(axis=1)
    on_path = np.zeros(N, dtype=np.bool_)
    for v in range(N):  # mark vertices that lie on paths (start from the ends)
        if deg[v] < 2 and not on_path[v]:
            prev, cur = -1, v
            while cur >= 0:
                on_path[cur] = True
                nxt = _other(partners, cur, prev)
                prev, cur = cur, nxt
    removed = np.empty((N, 2), dtype=np.int64)
    n_removed = 0
    for v in range(N):  # the rest are cycles: drop the weakest edge of each
        if on_path[v]:
            continue
        best_w, best_a, best_b = np.inf, N, N
        prev, cur = partners[v, 1], v
        while True:
            on_path[cur] = True
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
    path_id = np.empty(N, dtype=np.int64)
    position = np.empty(N, dtype=np.int64)
    length = np.zeros(N, dtype=np.int64)
    done = np.zeros(N, dtype=np.bool_)
    order = np.empty(N, dtype=np.int64)
    for v in range(N):
        if done[v] or (partners[v, 0] >= 0 and partners[v, 1] >= 0):
            continue
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


def linear_forest_cpu(partners, weights):
    """CPU reference: returns ``(forest_partners, path_id, position, permutation,
    path_start, removed_edges)`` with ``removed_edges`` as ``k x 2`` (lo, hi)."""
    return _linear_forest(np.ascontiguousarray(partners, dtype=np.int64), np.ascontiguousarray(weights))


def linear_forest_gpu(partners, weights, *, early_exit=True, check_every=4, stats=None):
    """GPU bidirectional-scan version; same outputs as :func:`linear_forest_cpu` (CuPy).

    ``stats`` (a dict), if given, receives the number of scan steps run and the GPU time
    in seconds of the phases ``cycles``, ``ranking`` and ``permutation`` (CUDA events).
    """
    import cupy

    from .cuda import get_kernel

    N = partners.shape[0]
    itype = partners.dtype
    vtype = weights.dtype
    threads = 256
    blocks = max(1, (N + threads - 1) // threads)
    N_ = itype.type(N)
    steps = max(1, math.ceil(math.log2(max(N, 2))))
    events = [cupy.cuda.Event() for _ in range(4)] if stats is not None else None
    if events:
        events[0].record()
    partners = partners.copy()
    # ---- (1) cycles: min-scan over edges, then drop each cycle's weakest edge
    q = [cupy.empty((N, 2), dtype=itype) for _ in range(2)]
    mw = [cupy.empty((N, 2), dtype=vtype) for _ in range(2)]
    ma = [cupy.empty((N, 2), dtype=itype) for _ in range(2)]
    mb = [cupy.empty((N, 2), dtype=itype) for _ in range(2)]
    get_kernel("forest", "cycle_init", vtype, itype)((blocks,), (threads,), (N_, partners, weights, q[0], mw[0], ma[0], mb[0]))
    cycle_step = get_kernel("forest", "cycle_step", vtype, itype)
    for s in range(steps + 1):
        a, b = s % 2, (s + 1) % 2
        cycle_step((blocks,), (threads,), (N_, q[a], mw[a], ma[a], mb[a], q[b], mw[b], ma[b], mb[b]))
    final = (steps + 1) % 2
    removed_lo = cupy.full(N, -1, dtype=itype)
    get_kernel("forest", "cycle_break", vtype, itype)(
        (blocks,), (threads,), (N_, q[final], mw[final], ma[final], mb[final], partners, removed_lo))
    lo = cupy.flatnonzero(removed_lo >= 0)
    removed = cupy.stack([lo.astype(np.int64), removed_lo[lo].astype(np.int64)], axis=1)
    if events:
        events[1].record()
    # ---- (2) path ids and positions: +-scan with early exit
    r = [cupy.empty((N, 2), dtype=itype) for _ in range(2)]
    get_kernel("forest", "rank_init", vtype, itype)((blocks,), (threads,), (N_, partners, q[0], r[0]))
    rank_step = get_kernel("forest", "rank_step", vtype, itype)
    active = cupy.zeros(1, dtype=np.int32)
    cur, ran = 0, 0
    for s in range(steps + 1):
        if early_exit and s % check_every == 0:
            if s and int(active[0]) == 0:  # host check only every few steps
                break
            active.fill(0)
        rank_step((blocks,), (threads,), (N_, q[cur], r[cur], q[1 - cur], r[1 - cur], active))
        cur, ran = 1 - cur, ran + 1
    path_id = cupy.empty(N, dtype=itype)
    position = cupy.empty(N, dtype=itype)
    length = cupy.zeros(N, dtype=itype)
    get_kernel("forest", "rank_finish", vtype, itype)((blocks,), (threads,), (N_, q[cur], r[cur], path_id, position, length))
    if events:
        events[2].record()
    # ---- (3) permutation in linear time: exclusive scan of path lengths indexed by path id
    offsets = cupy.zeros(N + 1, dtype=itype)
    cupy.cumsum(length, out=offsets[1:])
    perm = cupy.empty(N, dtype=itype)
    get_kernel("forest", "scatter_permutation", vtype, itype)((blocks,), (threads,), (N_, path_id, position, offsets, perm))
    starts = cupy.flatnonzero(length > 0)
    path_start = cupy.concatenate([offsets[starts], offsets[-1:]])
    if stats is not None:
        events[3].record()
        events[3].synchronize()
        stats["cycle_steps"] = steps + 1
        stats["rank_steps"] = ran
        for name, (a, b) in zip(("cycles", "ranking", "permutation"), zip(events, events[1:])):
            stats[name] = cupy.cuda.get_elapsed_time(a, b) * 1e-3
    return partners, path_id, position, perm, path_start, removed


def linear_forest_arrays(partners, weights, **kwargs):
    """Dispatch on the backend of ``partners``."""
    if is_device_array(partners):
        return linear_forest_gpu(partners, weights, **kwargs)
    return linear_forest_cpu(partners, weights)
