"""The paper's bidirectional scan for the linear forest, over all vertices (GPU only).

Pointer jumping in both directions with ping-pong buffers: ``min`` over the edges finds
every cycle's weakest edge, ``+`` ranks the vertices on their paths
(``kernels/cuda/forest.cu``: ``cycle_*`` and ``rank_*``). The permutation and path order
are those of :mod:`kernels.forest.order`.

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Algorithm 3 and Section 4.2.
"""
from __future__ import annotations

import math

import numpy as np

from ..nvrtc import get_kernel
from .order import order_buffers, order_paths
from .result import ForestArrays
from .ruling_gpu import RulingGpuLauncher

__all__ = ["linear_forest_scan_gpu"]


def linear_forest_scan_gpu(partners, weights, *, early_exit=True, check_every=4, stats=None) -> ForestArrays:
    """The paper's bidirectional scan over all vertices on the GPU; the same
    :class:`kernels.forest.ForestArrays` as :func:`kernels.forest.walk.linear_forest_walk_cpu`
    (CuPy).

    ``ceil(log2 N) + 1`` min-scan steps for the cycles, then the ranking scan, with an
    early exit (checked every ``check_every`` steps, so there is no host synchronization
    per step) unless ``early_exit=False`` (the paper's fixed ``ceil(log2 N)`` steps). Kept
    for comparison with the default sparse ruling set
    (:func:`kernels.forest.ruling.linear_forest_ruling`), which does O(N) work.

    ``stats`` (a dict), if given, receives the number of scan steps run and the GPU time
    in seconds of the phases ``cycles``, ``ranking`` and ``permutation`` (CUDA events).
    """
    import cupy

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
    # ---- (3) permutation, path starts and removed edges, as for the ruling set
    launcher = RulingGpuLauncher(itype, vtype)
    perm, paths = order_paths(launcher, order_buffers(launcher, N), length, path_id, position, removed_lo)
    path_start, removed = paths()
    if stats is not None:
        events[3].record()
        events[3].synchronize()
        stats["cycle_steps"] = steps + 1
        stats["rank_steps"] = ran
        for name, (a, b) in zip(("cycles", "ranking", "permutation"), zip(events, events[1:])):
            stats[name] = cupy.cuda.get_elapsed_time(a, b) * 1e-3
    return ForestArrays(partners, path_id, position, perm, path_start, removed)
