"""The order of a ranked linear forest: the permutation that makes it tridiagonal, the
path starts and the removed cycle edges (``kernels/cuda/forest.cu``'s ``order_*`` and
``scatter_permutation`` kernels and their Numba twins).

One scan over the vertices' path lengths (held at the path ids) gives the first new
position of every path, and every vertex goes to its path's offset plus its position: a
linear-time exclusive scan instead of a sort.

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Sections 3.3 and 4.2, Algorithm 3.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..backend import get_array_module, small_zeros, to_host
from .common import OFFSET_TILE, ORDER_TILE

__all__ = ["order_buffers", "order_paths", "drop_removed", "scatter_permutation_cpu", "order_tile_sums_cpu",
           "order_scan_tiles_cpu", "order_offsets_cpu", "order_place_cpu"]


@njit(cache=True, parallel=True)
def scatter_permutation_cpu(N, path_id, position, offsets, perm):
    for v in prange(N):
        perm[offsets[path_id[v]] + position[v]] = v




@njit(cache=True, parallel=True)
def order_tile_sums_cpu(N, length, removed_lo, sums):
    for t in prange((N + ORDER_TILE - 1) // ORDER_TILE):
        c = np.zeros(3, dtype=np.int64)
        for v in range(t * ORDER_TILE, min((t + 1) * ORDER_TILE, N)):
            c[0] += length[v]
            c[1] += length[v] > 0
            c[2] += removed_lo[v] >= 0
        sums[3 * t:3 * t + 3] = c


@njit(cache=True)
def order_scan_tiles_cpu(n_tiles, sums, totals):
    run = np.zeros(3, dtype=np.int64)
    for t in range(n_tiles):
        for k in range(3):
            x = sums[3 * t + k]
            sums[3 * t + k] = run[k]
            run[k] += x
    totals[:] = run


@njit(cache=True)
def order_offsets_cpu(N, length, state, offsets):
    """Twin of ``order_offsets`` (``state``, its ticket and tile statuses, unused): one
    running sum over the vertices."""
    at = 0
    for v in range(N):
        if length[v] > 0:
            offsets[v] = at
            at += length[v]


@njit(cache=True, parallel=True)
def order_place_cpu(N, length, removed_lo, tile_offsets, path_start, removed):
    for t in prange((N + ORDER_TILE - 1) // ORDER_TILE):
        at, paths, rem = tile_offsets[3 * t], tile_offsets[3 * t + 1], tile_offsets[3 * t + 2]
        for v in range(t * ORDER_TILE, min((t + 1) * ORDER_TILE, N)):
            if length[v] > 0:
                path_start[paths] = at
                paths += 1
                at += length[v]
            if removed_lo[v] >= 0:
                removed[rem, 0] = v
                removed[rem, 1] = removed_lo[v]
                rem += 1


def order_buffers(launcher, N):
    """The arrays of :func:`order_paths` for ``N`` vertices: allocated before the forest's
    host waits for the device, so that after the wait it only queues kernels."""
    if N >= 1 << 30:  # order_offsets keeps a tile's prefix in 30 bits
        raise ValueError(f"the path order supports fewer than 2**30 vertices, got {N}")
    xp, it = launcher.xp, launcher.itype
    n_tiles = (N + ORDER_TILE - 1) // ORDER_TILE
    # order_offsets' ticket and tile statuses
    return (n_tiles, small_zeros(xp, (N + OFFSET_TILE - 1) // OFFSET_TILE + 1, np.uint32),
            xp.empty(N, dtype=it),  # offsets, written at the path ids
            xp.empty(N, dtype=it))


def order_paths(launcher, buffers, length, path_id, position, removed_lo):
    """``(permutation, paths)`` from the ranked forest, where ``paths()`` returns
    ``(path_start, removed_edges)``. One scan over the vertices' path lengths (held at the
    path ids) gives the first new position of every path at its path id, and every vertex
    goes to its path's offset plus its position: the permutation needs no host read.
    ``paths()`` scans (length, path id?, removed edge's lower end?) in tiles, reads the two
    counts (their array sizes) and places the path starts in path id order and the removed
    edges in the order of their lower ends, when first called (the preconditioners never
    need them, so their set-up does not wait for the device here)."""
    xp = launcher.xp
    N = len(length)
    sc = launcher.scalar
    n_tiles, state, offsets, perm = buffers
    launcher("order_offsets", (len(state) - 1) * 256, sc(N), length, state, offsets)
    launcher("scatter_permutation", N, sc(N), path_id, position, offsets, perm)

    def paths():
        sums, totals = xp.empty(3 * n_tiles, dtype=launcher.itype), xp.empty(3, dtype=launcher.itype)
        launcher("order_tile_sums", n_tiles * 256, sc(N), length, removed_lo, sums)
        launcher("order_scan_tiles", 1 if n_tiles else 0, sc(n_tiles), sums, totals)
        _, n_paths, n_removed = (int(x) for x in to_host(totals))
        path_start = xp.empty(n_paths + 1, dtype=launcher.itype)
        path_start[n_paths:] = N
        removed = xp.empty((n_removed, 2), dtype=np.int64)
        launcher("order_place", n_tiles * 256, sc(N), length, removed_lo, sums, path_start, removed)
        return path_start, removed

    return perm, paths


def drop_removed(P, removed_lo):
    """The partners ``P`` of a [0,2]-factor without the cycle edges removed from its forest
    (``removed_lo``: at each removed edge's lower end its higher end, else -1)."""
    xp = get_array_module(P)
    out = P.copy()
    lo = xp.flatnonzero(removed_lo >= 0)
    hi = removed_lo[lo]
    out[lo] = xp.where(P[lo] == hi[:, None], -1, P[lo])
    out[hi] = xp.where(P[hi] == lo[:, None], -1, P[hi])
    return out
