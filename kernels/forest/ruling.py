"""The linear forest by a sparse ruling set: work-efficient list ranking, CPU or GPU.

About one vertex in ``spacing`` and every path end is a ruler; the two rulers of a gap
walk towards each other and meet halfway (every vertex is visited once); the much shorter
lists of ruler slots get the paper's bidirectional scan, carrying ``+`` for the distance
to the path end and ``min`` for the weakest edge of a cycle at once; every vertex then
combines its two directions. O(N) work instead of the full scan's O(N log N). The driver
(:func:`ruling_forest`) runs the kernels of ``kernels/cuda/forest.cu`` through a
launcher: :class:`kernels.forest.ruling_gpu.RulingGpuLauncher` on the GPU,
:class:`kernels.forest.ruling_cpu.RulingCpuLauncher` (their Numba twins) on the CPU.

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Algorithm 3 (the bidirectional scan).
"""
from __future__ import annotations

import functools
import math
import time

import numpy as np

from ..backend import EarlyRead, is_device_array, small_zeros, to_host
from ..nvrtc import aligned
from .order import drop_removed, order_buffers, order_paths
from .ruling_cpu import RulingCpuLauncher

__all__ = ["linear_forest_ruling", "ruling_forest", "scan_steps", "ruler_threshold", "RULER_SPACING", "RULER_RUN",
           "SCAN_START"]

#: Mean distance between rulers: longer gaps mean fewer slots to scan but longer walks.
RULER_SPACING = 32
#: Ids per run of a vertex whose partners are not its id neighbours: such runs are drawn as
#: rulers together, so that neighbouring threads walk neighbouring paths.
RULER_RUN = 32
#: Level of the ruler scan folded from level 0 gap by gap, each slot alone, before the
#: scan's first step (odd; ``forest.cu``'s ``fold_gaps``): most lists of slots are short,
#: and each step replaced reads and writes every slot's window behind a grid barrier.
SCAN_START = 3


def ruler_threshold(spacing, run):
    """The hash threshold of ``spacing`` (both parameters checked)."""
    for name, value in (("spacing", spacing), ("run", run)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"ruler {name} must be a positive integer, got {value!r}")
    return (1 << 32) // spacing


def scan_steps(n_rulers):
    """Steps of the ruler scan for ``n_rulers`` rulers: ceil(log2 R) + 1, rounded up to an
    even number (the scan's result lies in its second buffer)."""
    return 2 * math.ceil((math.ceil(math.log2(max(n_rulers, 2))) + 1) / 2)


def ruling_forest(partners, weights, launcher, spacing=RULER_SPACING, run=RULER_RUN, seed=0, stats=None,
                   paths_later=False, overlap=None, ruler_guess=None):
    """:func:`linear_forest_ruling` on ``launcher``'s backend; ``ruler_guess`` (a fraction
    of the vertices, for tests) replaces the launcher's guess of the number of rulers."""
    xp = launcher.xp
    N = partners.shape[0]
    itype = launcher.itype
    sc = launcher.scalar
    P = xp.ascontiguousarray(partners)
    Wt = xp.ascontiguousarray(weights)
    vtype = Wt.dtype
    marks = []

    def mark():
        if stats is not None:
            if xp is np:
                marks.append(time.perf_counter())
            else:
                ev = xp.cuda.Event()
                ev.record()
                marks.append(ev)

    mark()
    # ---- rulers and the walks between them
    if not (isinstance(SCAN_START, int) and 1 <= SCAN_START <= 29 and SCAN_START % 2):
        raise ValueError(f"SCAN_START must be an odd integer in [1, 29] (the scan's result lies in its second "
                         f"buffer after an odd level), got {SCAN_START!r}")
    if N >= 1 << 30:
        raise ValueError(f"the ruling-set forest supports fewer than 2**30 vertices, got {N}")
    rulers = xp.empty(N, dtype=itype)  # the first nr entries
    n_rulers = small_zeros(xp, 1, np.uint32)
    claim = xp.empty(N, dtype=np.int64)
    launcher("ruler_mark", N, sc(N), P, np.uint32(seed), np.uint64(ruler_threshold(spacing, run)), np.uint32(run),
             rulers, n_rulers, claim)
    # every output is written in full by ruler_finish; these and the ordering's arrays are
    # allocated while the device marks the rulers (the host reads their number below)
    removed_lo, path_id, position, length = (xp.empty(N, dtype=itype) for _ in range(4))
    order = order_buffers(launcher, N)
    # the scan's flags, one per step; nr < N bounds the steps
    busy = small_zeros(xp, scan_steps(N), np.int32)
    steps_run = small_zeros(xp, 1, np.int32)
    # the count copied as soon as ruler_mark is done (into pinned memory: the host then waits
    # for that copy's event only)
    count = EarlyRead(n_rulers)
    mark()

    def walks(n_slots):
        """The walks and links on ``n_slots`` slots (they read the count on the device, and
        do nothing when it needs more slots)."""
        buffer, walk, level0 = launcher.walk_slots(n_slots, vtype)
        launcher("ruler_walk", n_slots, n_rulers, sc(n_slots), rulers, P, Wt, claim, walk)
        launcher("ruler_link", n_slots, n_rulers, sc(n_slots), walk, level0)
        return buffer, level0

    # Queued on slots for a guessed number of rulers before the host reads the count: on
    # the GPU the device would otherwise idle from the end of ruler_mark until the host had
    # read it and queued the walks. A short guess costs that wait: the walks are queued
    # again on enough slots after the read.
    guess = 2 * (launcher.guessed_rulers(N, n_rulers) if ruler_guess is None else max(math.ceil(ruler_guess * N), 1))
    walk_buffer, level0 = walks(guess)
    if overlap is not None:  # the caller's work, queued behind the walks
        overlap()
    nr = int(count.get()[0])
    ns = 2 * nr
    if ns > guess:
        walk_buffer, level0 = walks(ns)
    scan_buffer, a, b, ends = launcher.scan_slots(ns, vtype)
    mark()
    # ---- one scan over the slots: distances to the path ends, the weakest edge of every
    # cycle and the distance to it. A list of slots has fewer than nr hops; the scan stops
    # itself once the lists are done, after its fold or an odd step (result in buffer b).
    link = level0[0]
    steps = scan_steps(nr)
    launcher("ruler_scan", ns, sc(ns), np.int32(steps), np.int32(min(SCAN_START, steps - 1)), busy, steps_run, link,
             level0[1:], a, b, ends)
    mark()
    launcher("ruler_finish", N, sc(N), P, Wt, claim, level0, ends, b[1:], path_id, position, length, removed_lo)
    del walk_buffer, scan_buffer  # freed after the kernels queued on them (CuPy's pool is stream-ordered)
    mark()
    perm, paths = order_paths(launcher, order, length, path_id, position, removed_lo)
    mark()
    if stats is not None:
        stats["rulers"] = nr
        stats["ruler_steps"] = int(to_host(steps_run)[0])
        if xp is np:
            spans = [b - a for a, b in zip(marks, marks[1:])]
        else:
            marks[-1].synchronize()
            spans = [xp.cuda.get_elapsed_time(a, b) * 1e-3 for a, b in zip(marks, marks[1:])]
        stats.update(zip(("select_rulers", "walks", "ruler_scan", "finish", "permutation"), spans))
    # the forest's partners (the factor's without the removed edges), which the
    # preconditioners never read: with paths_later, computed when asked for (ruler_finish
    # then writes less)
    neighbors = functools.partial(drop_removed, P, removed_lo)
    out = (neighbors if paths_later else neighbors(), path_id, position, perm)
    return (*out, paths) if paths_later else (*out, *paths())


def linear_forest_ruling(partners, weights, *, spacing=RULER_SPACING, run=RULER_RUN, seed=0, stats=None,
                         paths_later=False, overlap=None):
    """Linear forest by a sparse ruling set (work-efficient list ranking), CPU or GPU.

    Same outputs as :func:`linear_forest_walk_cpu`. About one vertex in ``spacing`` (chosen by
    :func:`kernels.hashing.hash32` and ``seed``) plus every path end is a ruler; one in
    ``2 * spacing`` among 256 consecutive ids of which at least 32 are path ends (short
    paths need few rulers between their ends, and the scan is then shorter). A vertex
    whose partners are not its id neighbours ``v +- 1`` is drawn by the hash of ``v //
    run``, in runs of ``run`` consecutive ids: where the paths cross the order of the ids
    (a grid's columns) neighbouring threads then walk neighbouring paths through
    neighbouring memory. A vertex with a partner ``v +- 1`` is drawn alone: where the paths follow the ids
    (a grid's rows) runs would lengthen the gaps by the run length. The two
    rulers of a gap walk towards each other, claiming vertices, and meet halfway, so every
    vertex is visited once. The much shorter lists of ruler slots get the paper's
    bidirectional scan, at most ``ceil(log2 R) + 1`` steps (the first ``SCAN_START``
    folded gap by gap by each slot alone, and the scan stops once every list is done)
    carrying both operators at once: ``+`` for the distance to the path end and ``min``
    for the weakest edge ahead together with the distance to it. On a path the first
    ranks the vertices; on a cycle (its pointers never end) the second says where the
    cycle is cut and how far each vertex lies from either side of the cut, so cycles need
    no second pass. Every vertex then combines its two directions; cycles without any
    ruler are walked by each of their vertices. O(N) work instead of the scan's O(N log N).
    The result does not depend on ``spacing``/``run``/``seed``. On NumPy input it runs the
    Numba twins of the CUDA kernels (parallel over vertices; the walks in lockstep rounds).

    ``paths_later=True`` returns functions in place of ``neighbors`` and of ``path_start,
    removed_edges`` that compute them when called, and ``overlap`` is called while the host
    waits for the number of rulers (see :func:`linear_forest_arrays`).

    ``stats`` (a dict), if given, receives the number of rulers, the scan's levels reached
    (``ruler_steps``, the folded ones included) and the time in seconds of the phases
    ``select_rulers``, ``walks``, ``ruler_scan``, ``finish`` and ``permutation`` (CUDA
    events on the GPU).
    """
    if is_device_array(partners):
        from .ruling_gpu import RulingGpuLauncher

        launcher = RulingGpuLauncher(partners.dtype, weights.dtype)
        # the kernels read a vertex's two slots as one pair (pairs.cuh)
        partners, weights = (aligned(x, 2 * x.dtype.itemsize) for x in (partners, weights))
    else:
        partners = np.asarray(partners)
        launcher = RulingCpuLauncher(partners.dtype, weights.dtype)
    return ruling_forest(partners, weights, launcher, spacing=spacing, run=run, seed=seed, stats=stats,
                          paths_later=paths_later, overlap=overlap)
