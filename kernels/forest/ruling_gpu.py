"""The launcher of the ruling-set kernels of ``kernels/cuda/forest.cu`` on the GPU
(:class:`RulingGpuLauncher`): the same calls as :class:`kernels.forest.ruling_cpu.RulingCpuLauncher`,
each a kernel launch, and the slots' scratch in single allocations.

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Sections 3.3 and 4.2, Algorithm 3.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..nvrtc import device_workspace, get_kernel, launch_cooperative
from .common import RULER_BLOCK, flat_arguments

__all__ = ["RulingGpuLauncher", "GUESSED_RULERS", "RULER_KERNELS"]

#: Fraction of the vertices for which the GPU allocates ruler slots before it knows how
#: many rulers there are (about 1 in ``RULER_SPACING``, plus every path end and isolated
#: vertex): short paths need more, a quarter covers the stencil matrices.
GUESSED_RULERS = 0.25

RULER_KERNELS = ("ruler_mark", "ruler_walk", "ruler_link", "ruler_scan", "ruler_finish",
                  "scatter_permutation", "order_offsets", "order_tile_sums", "order_scan_tiles", "order_place")


class RulingGpuLauncher:
    """Runs the ruling-set kernels on the GPU (the calls of :class:`kernels.forest.ruling_cpu.RulingCpuLauncher`)."""

    def __init__(self, itype, vtype):
        import cupy

        self.xp = cupy
        self.itype = np.dtype(itype)
        self.kernels = forest_kernels(self.itype, np.dtype(vtype), cupy.cuda.runtime.getDevice())

    def __call__(self, name, count, *args):
        if count:
            args = flat_arguments(args)
            threads = RULER_BLOCK
            if name == "ruler_scan":  # synchronizes its grid between the steps
                launch_cooperative(self.kernels[name], int(count), threads, args)
                return
            if name == "order_scan_tiles":
                # one block, whose threads scan a few tiles each: more threads, fewer tiles each
                threads = 1024
            blocks = min((int(count) + threads - 1) // threads, 1 << 20)
            self.kernels[name]((blocks,), (threads,), args)

    def scalar(self, x):
        return self.itype.type(x)

    def guessed_rulers(self, N, n_rulers):
        """Rulers to allocate slots for before their count is read: ``GUESSED_RULERS`` of
        the vertices."""
        return min(N, max(math.ceil(GUESSED_RULERS * N), 1024))

    def walk_slots(self, n_slots, vtype):
        """``(buffer, walk, level0)``: the walks' and level 0's scratch in one allocation
        (:func:`kernels.nvrtc.device_workspace`; keep ``buffer`` while kernels queued on it
        may run), as addresses. A record per slot (``forest.cu``: ``WalkRecord`` and
        ``Window``), so that a gather of another slot reads one or two sectors, not one per
        field: ``walk`` the walks' records, and a level a pointer array ``q`` and a window
        array (level 0: ``q`` = link)."""
        it = self.itype
        buffer, (walk, link, w0) = device_workspace(
            (n_slots, record_dtype(vtype, it, 7)), (n_slots, it), (n_slots, record_dtype(vtype, it, 6)))
        return buffer, (walk,), (link, w0)

    def scan_slots(self, n_slots, vtype):
        """``(buffer, a, b, ends)``: the scan's two levels, as level 0 in :meth:`walk_slots`,
        and the slots' path ends (``forest.cu``'s ``PathEnd``, two indices each)."""
        it = self.itype
        window = record_dtype(vtype, it, 6)
        buffer, (qa, wa, qb, wb, ends) = device_workspace(
            (n_slots, it), (n_slots, window), (n_slots, it), (n_slots, window), (2 * n_slots, it))
        return buffer, (qa, wa), (qb, wb), (ends,)


@functools.lru_cache(maxsize=None)
def record_dtype(vtype, itype, n_int):
    """A record of ``forest.cu`` (one value, then ``n_int`` indices) as an opaque dtype of its
    C size: natural alignment, padded to a multiple of 16 bytes (``__align__(16)``)."""
    fields = np.dtype([("w", vtype)] + [(f"i{k}", itype) for k in range(n_int)], align=True)
    return np.dtype((np.void, -(-fields.itemsize // 16) * 16))


@functools.lru_cache(maxsize=None)
def forest_kernels(itype, vtype, device_id):
    """The ruling-set kernels of ``forest.cu`` for these types, on a device (cached)."""
    return {name: get_kernel("forest", name, vtype, itype) for name in RULER_KERNELS}
