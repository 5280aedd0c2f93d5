"""Maximal clique enumeration on the GPU (``kernels/cuda/cliques.cu``).

One warp per sub-problem, taken from a shared queue with an atomic counter; sub-problems
of high-degree vertices are split into one task per top-level branch. Inside a node the
warp works in parallel over bitset words and local vertices (pivot search, filtering,
next branch vertex). Cliques are written to a preallocated device buffer reserved with an
atomic counter; when a reservation does not fit, the warp keeps its state and stops, the
host flushes the buffer and relaunches (:func:`mce_chunks_gpu`).

References
----------
.. [1] J. Jenkins, I. Arkatkar, J. D. Owens, A. Choudhary and N. F. Samatova, "Lessons
   Learned from Exploring the Backtracking Paradigm on the GPU", Euro-Par 2011 Parallel
   Processing, LNCS 6853, Springer, 2011.
.. [2] D. Eppstein, M. Loeffler and D. Strash, "Listing All Maximal Cliques in Sparse
   Graphs in Near-Optimal Time", ISAAC 2010, LNCS 6506, Springer, 2010 (the degeneracy
   order that splits the top level).
"""
from __future__ import annotations

import time

import numpy as np
from numba import njit

from ..backend import device_attributes
from ..nvrtc import get_kernel
from .degeneracy import later_counts, ranked_degeneracy

__all__ = ["mce_chunks_gpu", "mce_count_gpu", "MceGpuPlan", "mce_flushes_gpu"]

#: Target seconds of one counting launch (the host regains control between launches).
COUNT_LAUNCH_SECONDS = 0.25


@njit(cache=True)
def _parse_records(rec):
    """``[size, v...]`` records -> ``(flat, offsets)`` with each clique sorted."""
    nrec = 0
    p = 0
    while p < len(rec):
        nrec += 1
        p += rec[p] + 1
    flat = np.empty(p - nrec, np.int64)
    off = np.zeros(nrec + 1, np.int64)
    p = 0
    q = 0
    c = 0
    while p < len(rec):
        s = rec[p]
        for t in range(s):
            x = np.int64(rec[p + 1 + t])
            j = q + t
            while j > q and flat[j - 1] > x:
                flat[j] = flat[j - 1]
                j -= 1
            flat[j] = x
        q += s
        c += 1
        off[c] = q
        p += s + 1
    return flat, off


_ULL_MAX = np.uint64(0xFFFFFFFFFFFFFFFF)


def _repeat(xp, values, counts):
    """``numpy.repeat(values, counts)`` on either backend (CuPy's takes no array of counts)."""
    if xp is np:
        return np.repeat(values, counts)
    total = int(counts.sum())
    if total == 0:
        return values[:0]
    return values[xp.searchsorted(xp.cumsum(counts), xp.arange(total), side="right")]


class MceGpuPlan:
    """Tasks and launch groups of one GPU enumeration (host side, from the degeneracy order).

    ``ordering="host"`` splits the search by the smallest-last order (serial, on the host);
    ``"device"`` by the order of :func:`kernels.cliques.peel_gpu.peeling_order`, computed
    on the GPU in parallel rounds (every vertex has at most the degeneracy many later
    neighbours in both: the same bound on the sub-problems)."""

    def __init__(self, G, split_min=64, small_x=2048, mem_fraction=0.25, share=None, ordering="host"):
        import cupy

        indptr = np.ascontiguousarray(G.indptr, dtype=np.int64)
        indices = np.ascontiguousarray(G.indices, dtype=np.int64)
        if G.n >= 2 ** 31 - 1:
            raise ValueError("the GPU clique enumeration needs fewer than 2**31 vertices")
        if ordering not in ("host", "device"):
            raise ValueError(f"ordering must be 'host' or 'device', got {ordering!r}")
        self.d_indptr = cupy.asarray(indptr)
        self.d_indices = cupy.asarray(indices.astype(np.int32))
        if ordering == "device":  # the order, the counts and the task lists on the GPU
            from .peel_gpu import later_counts_device, peeling_order

            xp = cupy
            self.d_rank, core = peeling_order(self.d_indptr, self.d_indices)
            later = later_counts_device(self.d_indptr, self.d_indices, self.d_rank)
            xdeg = cupy.diff(self.d_indptr) - later  # |X| of each sub-problem
        else:
            xp = np
            order, core, rank = ranked_degeneracy(indptr, indices)
            later = later_counts(indptr, indices, rank)  # |P| of each sub-problem
            xdeg = np.diff(indptr) - later
            self.d_rank = cupy.asarray(rank)
        self.D = D = max(1, int(core.max()) if G.n else 0)
        free = cupy.cuda.Device().mem_info[0]
        attrs = device_attributes()
        max_warps = attrs["MultiProcessorCount"] * (attrs["MaxThreadsPerMultiProcessor"] // 32)
        self.groups = []
        small = xdeg <= small_x
        mine = xp.ones(G.n, bool)
        if share is not None:  # sub-problems i, i + p, ... by decreasing |P|: one of p processes' share
            i, p = share
            mine[:] = False
            mine[xp.argsort(-later, kind="stable")[i::p]] = True
        for mask in (small & mine, ~small & mine):
            verts = xp.nonzero(mask)[0]
            if len(verts) == 0:
                continue
            xcap = max(1, int(xdeg[verts].max()))
            k = later[verts]
            split = k >= split_min
            whole = verts[~split]
            sv = verts[split]
            cnt = later[sv]
            tv = xp.concatenate([_repeat(xp, sv, cnt), whole]).astype(np.int32)
            child = xp.arange(int(cnt.sum())) - _repeat(xp, xp.cumsum(cnt) - cnt, cnt)
            tc = xp.concatenate([child, xp.full(len(whole), -1)]).astype(np.int32)
            # biggest sub-problems first (longest-processing-time order)
            key = xp.concatenate([_repeat(xp, cnt, cnt), later[whole]])
            perm = xp.argsort(-key, kind="stable")
            tv, tc = tv[perm], tc[perm]
            Wm = (D + 63) // 64
            WXm = (xcap + 63) // 64
            words = (D + xcap) * Wm + D * WXm + 3 * (D + 3) * Wm + (D + 3) * WXm
            ints = 2 * D + xcap + 3
            per_warp = 8 * words + 4 * ints + 64
            nwarps = int(max(1, min(len(tv), max_warps, (free * mem_fraction) // per_warp)))
            self.groups.append(dict(tv=cupy.asarray(tv), tc=cupy.asarray(tc), ntasks=len(tv), Wm=Wm, WXm=WXm,
                                    xcap=xcap, words=words, ints=ints, nwarps=nwarps))


def mce_flushes_gpu(plan, min_size, count_only, cap_words, progress=None):
    """Generator over the raw record buffers (host ``int32``) of each flush; for counting,
    returns the histogram through ``StopIteration.value``.

    Counting never fills a buffer, so it runs each launch group as launches over growing
    prefixes of its task queue (about a quarter of a second each, sized from the rate
    measured so far): the host regains control between them, so Ctrl-C gets through and
    ``progress(done, total)`` (tasks finished, all groups) is called after each launch.
    """
    import cupy

    kernel = get_kernel("cliques", "mce_kernel")
    D = plan.D
    hist = cupy.zeros(D + 3, dtype=np.uint64)
    cap = max(int(cap_words), D + 2) if not count_only else 1
    out = cupy.zeros(cap, dtype=np.int32)
    head = cupy.zeros(1, dtype=np.uint64)
    fail = cupy.zeros(1, dtype=np.uint64)
    threads = 128
    total = sum(g["ntasks"] for g in plan.groups)
    finished = 0
    for g in plan.groups:
        nw = g["nwarps"]
        queue = cupy.zeros(1, dtype=np.uint64)
        wstate = cupy.zeros(nw * 8, dtype=np.int64)
        wbits = cupy.empty(nw * g["words"], dtype=np.uint64)
        wints = cupy.empty(nw * g["ints"], dtype=np.int32)
        blocks = (nw * 32 + threads - 1) // threads

        # the kernel's arguments around the task limit (tasks [queue, limit) run in a launch)
        head_args = (plan.d_indptr, plan.d_indices, plan.d_rank, g["tv"], g["tc"])
        tail_args = (queue, wstate, wbits, wints, np.int32(g["Wm"]), np.int32(g["WXm"]), np.int32(D),
                     np.int32(g["xcap"]), np.int32(min_size), np.int32(1 if count_only else 0), hist, out, head,
                     fail, np.int64(cap), np.int32(nw))

        if count_only:
            done, step = 0, nw
            while done < g["ntasks"]:
                # every task below `done` was finished by the warp that took it (a count never
                # stops a warp mid-task), so the next launch starts the queue there
                limit = min(g["ntasks"], done + step)
                queue.fill(done)
                t0 = time.perf_counter()
                kernel((blocks,), (threads,), (*head_args, np.int64(limit), *tail_args))
                cupy.cuda.get_current_stream().synchronize()
                rate = (limit - done) / max(time.perf_counter() - t0, 1e-6)
                step = max(nw, int(rate * COUNT_LAUNCH_SECONDS))
                finished += limit - done
                done = limit
                if progress is not None:
                    progress(finished, total)
            continue
        while True:  # enumeration: relaunch after each flush of a full buffer
            head.fill(0)
            fail.fill(_ULL_MAX)
            kernel((blocks,), (threads,), (*head_args, np.int64(g["ntasks"]), *tail_args))
            h = int(head.get()[0])
            f = int(fail.get()[0])
            end = min(h, f, cap)
            if end > 0:
                yield out[:end].get()
            if f == int(_ULL_MAX):
                break
    return hist.get().astype(np.int64)


def mce_chunks_gpu(G, min_size=1, chunk_cliques=1 << 16, split_min=64, share=None, ordering="host"):
    """Yield ``(flat, offsets)`` chunks of maximal cliques enumerated on the GPU.

    The device buffer holds about ``16 * chunk_cliques`` vertex ids; each flush of the
    buffer is one chunk. ``share=(i, p)``: only one of ``p`` processes' sub-problems (see
    :func:`mce_count_gpu`); ``ordering`` as in :class:`MceGpuPlan`.
    """
    plan = MceGpuPlan(G, split_min=split_min, share=share, ordering=ordering)
    for rec in mce_flushes_gpu(plan, min_size, False, 16 * int(chunk_cliques)):
        yield _parse_records(rec)


def mce_count_gpu(G, min_size=1, split_min=64, share=None, ordering="host", progress=None):
    """Histogram of maximal clique sizes on the GPU (no clique transfer).

    ``share=(i, p)``: only the sub-problems ``i, i + p, ...`` in the order of decreasing
    candidate count (one of ``p`` processes' share of the work; the shares' histograms
    add up to the whole graph's). ``ordering`` as in :class:`MceGpuPlan`.
    ``progress(done, total)``: tasks finished, after each launch (see
    :func:`mce_flushes_gpu`)."""
    plan = MceGpuPlan(G, split_min=split_min, share=share, ordering=ordering)
    gen = mce_flushes_gpu(plan, min_size, True, 0, progress=progress)
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value
