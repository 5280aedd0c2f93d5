"""Maximum clique on the GPU: the colouring branch and bound split into work items, one
warp each, sharing the best size (``kernels/cuda/maxclique.cu``).

References
----------
.. [1] E. Tomita and T. Seki, "An Efficient Branch-and-Bound Algorithm for Finding a
   Maximum Clique", DMTCS 2003, LNCS 2731, Springer, 2003 (MCQ: the colouring bound).
.. [2] P. San Segundo, D. Rodriguez-Losada and A. Jimenez, "An exact bit-parallel
   algorithm for the maximum clique problem", Computers & Operations Research 38(2),
   2011 (BBMC: the bitsets).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..backend import device_attributes
from ..nvrtc import get_kernel
from .degeneracy import ONE, ZERO
from .maxclique_cpu import BBSetup, bb_candidate, bb_candidates, bb_rows, colour_sort

__all__ = ["max_clique_gpu", "GpuCliqueRun", "GpuCapacityError"]


class GpuCapacityError(ValueError):
    """The instance does not fit the GPU kernel's limits (shared or global memory)."""


@njit(cache=True)
def _bb_gpu_plan(indptr, indices, order, rank, core, lower, pmark, Pv, rows, SP, L, C):
    """Work items of the GPU branch and bound (see ``kernels/cuda/maxclique.cu``).

    Every sub-problem that may hold a clique larger than ``lower`` is stored with its
    candidates relabelled in the order of their greedy colouring; item ``(s, j)`` is the
    branch on the ``j``-th of them, kept when its colour bound ``1 + C[j]`` beats ``lower``.
    """
    n = len(order)
    nsub = 0
    words = 0
    npv = 0
    for p in range(n - 1, -1, -1):
        v = order[p]
        k = 0
        for e in range(indptr[v], indptr[v + 1]):
            if bb_candidate(indices[e], rank[v], rank, core, lower):
                k += 1
        if 1 + k > lower:
            nsub += 1
            words += k * ((k + 63) >> 6)
            npv += k
    sub_v = np.empty(nsub, np.int32)
    sub_k = np.empty(nsub, np.int32)
    sub_row_off = np.empty(nsub, np.int64)
    sub_pv_off = np.empty(nsub, np.int64)
    rows_all = np.empty(words, np.uint64)
    pv_all = np.empty(npv, np.int32)
    item_sub = np.empty(npv, np.int32)
    item_j = np.empty(npv, np.int32)
    item_col = np.empty(npv, np.int32)
    Pc = np.empty(len(Pv), np.int64)
    s = 0
    wo = 0
    po = 0
    ni = 0
    for p in range(n - 1, -1, -1):
        v = order[p]
        k = bb_candidates(indptr, indices, v, rank, core, lower, Pv)
        if 1 + k <= lower:
            continue
        W = (k + 63) >> 6
        bb_rows(indptr, indices, Pv, k, pmark, rows, W)
        for w in range(W):
            SP[1, w] = ZERO
        for i in range(k):
            SP[1, i >> 6] |= ONE << np.uint64(i & 63)
        colour_sort(1, W, rows, SP, L, C)
        for t in range(k):
            Pc[t] = Pv[L[1, t]]
            pv_all[po + t] = Pc[t]
        bb_rows(indptr, indices, Pc, k, pmark, rows_all[wo:wo + k * W].reshape(k, W), W)
        sub_v[s] = v
        sub_k[s] = k
        sub_row_off[s] = wo
        sub_pv_off[s] = po
        for j in range(k - 1, -1, -1):
            if 1 + C[1, j] > lower:
                item_sub[ni] = s
                item_j[ni] = j
                item_col[ni] = C[1, j]
                ni += 1
        s += 1
        wo += k * W
        po += k
    return sub_v, sub_k, sub_row_off, sub_pv_off, rows_all, pv_all, item_sub[:ni], item_j[:ni], item_col[:ni]


#: the time budget of a cancellable launch without a deadline (ns): it turns on the warps'
#: looks at the stop flag inside items
_NO_DEADLINE_NS = 1 << 62


class GpuCliqueRun:
    """One launch of the GPU branch and bound, started at construction and left running
    while the host works: :meth:`done` asks the device without waiting (a CUDA event),
    :meth:`stop` asks the warps to stop (a flag they read every 256 tree nodes, written on
    a stream of its own while the kernel runs), :meth:`result` waits and reads.

    Parameters are those of :func:`max_clique_gpu`; ``lower`` (a size) also bounds the
    search when no clique of that size is known (the decision version).
    """

    def __init__(self, indptr, indices, lower_clique=None, deadline=0.0, mem_fraction=0.25, lower=0,
                 cancellable=False):
        import time

        import cupy

        self.lower_clique = np.sort(np.asarray(lower_clique if lower_clique is not None else [], dtype=np.int64))
        self.launched = False
        self._answer = None
        if len(indptr) <= 1:
            self._answer = (self.lower_clique, True, 0)
            return
        if len(indptr) - 1 >= 2 ** 31 - 1:
            raise ValueError("the GPU maximum clique needs fewer than 2**31 vertices")
        b = BBSetup(indptr, indices)
        lo = max(len(self.lower_clique), int(lower), 1)
        if len(self.lower_clique) == 0 and lo == 1:  # any vertex is a clique of size 1
            self.lower_clique = np.zeros(1, np.int64)
        plan = _bb_gpu_plan(b.indptr, b.indices, b.order, b.rank, b.core, lo, b.pmark, b.Pv, b.rows, b.SP, b.L, b.C)
        sub_v, sub_k, sub_row_off, sub_pv_off, rows_all, pv_all, item_sub, item_j, item_col = plan
        nitems = len(item_sub)
        if nitems == 0:
            self._answer = (self.lower_clique, True, 0)
            return
        K = int(sub_k.max())
        Wm = (K + 63) // 64
        dev = cupy.cuda.Device()
        attrs = device_attributes()
        warps_per_block = 4
        smem = warps_per_block * 2 * Wm * 8
        depths = K + 3
        per_warp = 8 * depths * Wm + 4 * (2 * depths * K + 2 * depths) + 4 * (K + 2)
        budget = dev.mem_info[0] * mem_fraction
        if smem > attrs["MaxSharedMemoryPerBlock"] or per_warp > budget:
            raise GpuCapacityError(f"a sub-problem of {K} candidates is too large for the GPU branch and bound "
                                   f"({per_warp / 2**20:.0f} MiB of scratch per warp)")
        max_warps = attrs["MultiProcessorCount"] * (attrs["MaxThreadsPerMultiProcessor"] // 32)
        nwarps = int(max(1, min(nitems, max_warps, budget // per_warp)))
        d = {name: cupy.asarray(a) for name, a in
             dict(rows_all=rows_all, pv_all=pv_all, sub_v=sub_v, sub_k=sub_k, sub_row_off=sub_row_off,
                  sub_pv_off=sub_pv_off, item_sub=item_sub, item_j=item_j, item_col=item_col).items()}
        queue = cupy.zeros(1, np.uint64)
        self._best_packed = cupy.full(1, (lo << 32) | 0xFFFFFFFF, np.uint64)
        self._slots = cupy.empty(nwarps * (K + 2), np.int32)
        wbits = cupy.empty(nwarps * depths * Wm, np.uint64)
        wints = cupy.empty(nwarps * (2 * depths * K + 2 * depths), np.int32)
        self._nodes = cupy.zeros(1, np.uint64)
        self._stop = cupy.zeros(1, np.int32)
        self._K = K
        budget_ns = 0
        if deadline > 0:
            budget_ns = max(1, int((deadline - time.perf_counter()) * 1e9))
        elif cancellable:
            budget_ns = _NO_DEADLINE_NS
        threads = 32 * warps_per_block
        blocks = (nwarps + warps_per_block - 1) // warps_per_block
        get_kernel("maxclique", "max_clique_kernel")(
            (blocks,), (threads,),
            (d["rows_all"], d["pv_all"], d["sub_v"], d["sub_k"], d["sub_row_off"], d["sub_pv_off"], d["item_sub"],
             d["item_j"], d["item_col"], np.int64(nitems), queue, self._best_packed, self._slots, wbits, wints,
             np.int32(Wm), np.int32(K), np.int32(nwarps), self._nodes, self._stop, np.int64(budget_ns)),
            shared_mem=smem)
        self._keep = (d, queue, wbits, wints)  # alive until the kernel is done
        self._event = cupy.cuda.Event(block=False, disable_timing=True)
        self._event.record()
        self.launched = True

    def done(self) -> bool:
        """Whether the launch has finished (never waits)."""
        return self._answer is not None or self._event.done

    def stop(self):
        """Ask the warps to stop (they end within 256 tree nodes each); returns at once."""
        if self._answer is not None or self._event.done:
            return
        import cupy

        # (pinned host memory and a non-blocking stream: the copy does not wait for the
        # kernel, which runs on the default stream)
        side = cupy.cuda.Stream(non_blocking=True)
        pinned = cupy.cuda.alloc_pinned_memory(4)
        one = np.frombuffer(pinned, np.int32, 1)
        one[0] = 1
        cupy.cuda.runtime.memcpyAsync(self._stop.data.ptr, one.ctypes.data, 4,
                                      cupy.cuda.runtime.memcpyHostToDevice, side.ptr)
        side.synchronize()

    def result(self):
        """Wait for the launch; ``(vertices, optimal, nodes)`` as :func:`max_clique_gpu`."""
        if self._answer is None:
            self._event.synchronize()
            packed = int(self._best_packed.get()[0])
            size, winner = packed >> 32, packed & 0xFFFFFFFF
            optimal = int(self._stop.get()[0]) == 0
            nodes = int(self._nodes.get()[0])
            self._keep = None
            if winner == 0xFFFFFFFF:
                self._answer = (self.lower_clique, optimal, nodes)
            else:
                K = self._K
                verts = self._slots[winner * (K + 2): winner * (K + 2) + size].get().astype(np.int64)
                self._answer = (np.sort(verts), optimal, nodes)
        return self._answer


def max_clique_gpu(indptr, indices, lower_clique=None, deadline=0.0, mem_fraction=0.25, lower=0):
    """Maximum clique by colouring branch and bound on the GPU (one warp per work item).

    ``lower_clique`` (a known clique, e.g. from a short CPU run) sets the initial bound and
    is returned when nothing larger exists; ``lower`` (a size) bounds the search the same
    way without a clique (the result is then empty when no clique is larger). Returns
    ``(vertices, optimal, nodes)``.
    """
    return GpuCliqueRun(indptr, indices, lower_clique, deadline, mem_fraction, lower).result()
