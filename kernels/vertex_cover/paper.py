"""Exact minimum / parameterized vertex cover by the GPU paper's branch-and-reduce (Yamout et al.).

The intermediate graph of a search-tree node is a *degree array*: one int32 per vertex
of the original CSR graph, holding the vertex's current degree, or ``-1`` (``REMOVED``)
when the vertex has been deleted and added to the cover, plus a counter of removed
vertices. Together with the read-only CSR it is self-contained, so nodes can be copied
between stacks (and, on the GPU, between thread blocks through the global worklist), and
the cover of a leaf is simply the set of ``-1`` entries.

Every node applies the paper's reductions until nothing changes: *degree one* (take the
neighbour), *degree two in a triangle* (take both neighbours) and *high degree* (a vertex
whose degree exceeds the remaining budget must be taken); then the stopping conditions
(budget exceeded, more edges than ``budget * max degree``); then it branches on the
max-degree vertex ``v`` (child 1: take ``v``; child 2: take ``N(v)``).

The budget is ``limit - removed`` where ``limit`` is the largest cover size still of
interest: ``best - 1`` for MVC (``best`` is the best cover found so far, which shrinks
during the search), ``k`` for PVC.

Beyond the paper, both searches also prune with the *degree-sequence bound*: ``budget``
more vertices cover at most the sum of the ``budget`` largest degrees, so a node whose
sum falls short of its edge count is cut. The paper's edge rule is the special case that
counts every degree as the maximum one. It halves the tree of the complement of
p_hat300-3 (23.9 to 12.0 million nodes).

CPU (Numba): a sequential depth-first search with an explicit stack of degree arrays; it
runs in chunks of tree nodes so the Python caller can enforce a time limit and resume.
Optional extra (not in the paper): a greedy clique-cover lower bound (every clique of
``s`` vertices needs ``s - 1`` of them in any cover) that prunes nodes whose
``removed + bound`` exceeds the limit.

GPU (``kernels/cuda/vertex_cover.cu``): the Hybrid (per-block local stacks plus a global
worklist) and StackOnly (sub-trees from a fixed depth) persistent kernels.

References
----------
P. Yamout, K. Barada, A. Jaljuli, A. E. Mouawad and I. El Hajj, "Parallel vertex cover
algorithms on GPUs", Proc. IPDPS 2022, 201-211.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = [
    "REMOVED",
    "reduce_cpu",
    "degree_bound_holds",
    "greedy_cover_cpu",
    "clique_cover_bound_cpu",
    "SearchState",
    "search_cpu",
    "lp_bound",
    "bipartite_matching",
    "GpuConfig",
    "GpuCapacityError",
    "gpu_config",
    "search_gpu",
]

REMOVED = -1

# indices into the int64 state vector of the CPU search
_LIMIT, _BEST, _NODES, _SP, _FOUND, _OVERFLOW, _PRUNED_LB, _LB_PERIOD, _LB_WAIT = range(9)

#: ``use_lb`` modes of the CPU search: no bound, bound at every node, adaptive (the bound
#: is evaluated again right after it prunes, and ever more rarely, up to every 64th node,
#: while it fails to prune)
LB_OFF, LB_ALWAYS, LB_ADAPTIVE = 0, 1, 2


# --------------------------------------------------------------------------- primitives
@njit(cache=True, inline="always")
def _take(indptr, indices, deg, v):
    """Delete ``v`` (add it to the cover): mark it and decrement its live neighbours."""
    deg[v] = REMOVED
    for p in range(indptr[v], indptr[v + 1]):
        u = indices[p]
        if deg[u] > 0:
            deg[u] -= 1


@njit(cache=True)
def _adjacent(indptr, indices, a, b):
    """Binary search for ``b`` in the sorted row of ``a``."""
    lo = indptr[a]
    hi = indptr[a + 1]
    while lo < hi:
        mid = (lo + hi) >> 1
        w = indices[mid]
        if w == b:
            return True
        if w < b:
            lo = mid + 1
        else:
            hi = mid
    return False


@njit(cache=True)
def _reduce(indptr, indices, deg, count, limit):
    """Apply degree-one, degree-two-triangle and high-degree until nothing changes.

    Returns the new removed count; a value above ``limit`` means the node is infeasible.
    """
    n = len(deg)
    changed = True
    while changed:
        changed = False
        for v in range(n):
            d = deg[v]
            if d <= 0:
                continue
            if d > limit - count:  # high degree: v cannot stay out of the cover
                _take(indptr, indices, deg, v)
                count += 1
                changed = True
                if count > limit:
                    return count
                continue
            if d == 1:
                for p in range(indptr[v], indptr[v + 1]):
                    u = indices[p]
                    if deg[u] > 0:
                        _take(indptr, indices, deg, u)
                        count += 1
                        changed = True
                        break
            elif d == 2:
                a = -1
                b = -1
                for p in range(indptr[v], indptr[v + 1]):
                    u = indices[p]
                    if deg[u] > 0:
                        if a < 0:
                            a = u
                        else:
                            b = u
                            break
                if b >= 0 and _adjacent(indptr, indices, a, b):
                    _take(indptr, indices, deg, a)
                    _take(indptr, indices, deg, b)
                    count += 2
                    changed = True
            if count > limit:
                return count
    return count


def reduce_cpu(indptr, indices, deg, count, limit):
    """Reduce a degree array in place (paper rules); returns the new removed count.

    Examples
    --------
    >>> import numpy as np
    >>> indptr = np.array([0, 1, 3, 4]); indices = np.array([1, 0, 2, 1])  # path 0-1-2
    >>> deg = np.diff(indptr).astype(np.int32)
    >>> reduce_cpu(indptr, indices, deg, 0, 3), deg.tolist()
    (1, [0, -1, 0])
    """
    return int(_reduce(indptr, indices, deg, np.int64(count), np.int64(limit)))


@njit(cache=True)
def _greedy(indptr, indices, deg, count):
    """Paper's initial upper bound: reduce, take the max-degree vertex, repeat."""
    n = len(deg)
    big = n + 1
    while True:
        count = _reduce(indptr, indices, deg, count, big)
        vmax = -1
        dmax = 0
        for v in range(n):
            if deg[v] > dmax:
                dmax = deg[v]
                vmax = v
        if vmax < 0:
            return count
        _take(indptr, indices, deg, vmax)
        count += 1


def greedy_cover_cpu(indptr, indices, deg=None, count=0):
    """Greedy cover of the paper (rules, then max degree, repeated): ``(size, degree array)``.

    Examples
    --------
    >>> import numpy as np
    >>> indptr = np.array([0, 2, 4, 6]); indices = np.array([1, 2, 0, 2, 0, 1])  # triangle
    >>> size, deg = greedy_cover_cpu(indptr, indices)
    >>> size, sorted(np.flatnonzero(deg < 0).tolist())
    (2, [1, 2])
    """
    if deg is None:
        deg = np.diff(indptr).astype(np.int32)
    else:
        deg = np.array(deg, dtype=np.int32)
    size = int(_greedy(indptr, indices, deg, np.int64(count)))
    return size, deg


@njit(cache=True)
def _clique_cover_bound(indptr, indices, deg, order, cid, csize, hits):
    """Greedy partition of the live non-isolated vertices into cliques.

    Vertices are visited by increasing degree; each joins the largest existing clique all
    of whose members are its neighbours, else opens a new one. Returns
    ``live - cliques``, a lower bound on the cover of the remaining graph.
    """
    n = len(deg)
    # counting sort of the live vertices by degree
    maxd = 0
    for v in range(n):
        if deg[v] > maxd:
            maxd = deg[v]
    if maxd == 0:
        return 0
    bucket = np.zeros(maxd + 2, dtype=np.int64)
    live = 0
    for v in range(n):
        if deg[v] > 0:
            bucket[deg[v] + 1] += 1
            live += 1
    for d in range(1, maxd + 2):
        bucket[d] += bucket[d - 1]
    for v in range(n):
        if deg[v] > 0:
            order[bucket[deg[v]]] = v
            bucket[deg[v]] += 1
    ncl = 0
    for i in range(live):
        v = order[i]
        cid[v] = -1
    for i in range(live):
        v = order[i]
        for p in range(indptr[v], indptr[v + 1]):
            u = indices[p]
            if deg[u] > 0 and cid[u] >= 0:
                hits[cid[u]] += 1
        best = -1
        bsize = 0
        for p in range(indptr[v], indptr[v + 1]):
            u = indices[p]
            if deg[u] > 0 and cid[u] >= 0:
                c = cid[u]
                if hits[c] == csize[c] and csize[c] > bsize:
                    bsize = csize[c]
                    best = c
        for p in range(indptr[v], indptr[v + 1]):
            u = indices[p]
            if deg[u] > 0 and cid[u] >= 0:
                hits[cid[u]] = 0
        if best >= 0:
            cid[v] = best
            csize[best] += 1
        else:
            cid[v] = ncl
            csize[ncl] = 1
            hits[ncl] = 0
            ncl += 1
    return live - ncl


def clique_cover_bound_cpu(indptr, indices, deg):
    """Clique-cover lower bound on the minimum cover of the graph a degree array describes.

    Examples
    --------
    >>> import numpy as np
    >>> indptr = np.array([0, 2, 4, 6]); indices = np.array([1, 2, 0, 2, 0, 1])  # triangle
    >>> clique_cover_bound_cpu(indptr, indices, np.diff(indptr).astype(np.int32))
    2
    """
    n = len(deg)
    deg = np.asarray(deg, dtype=np.int32)
    return int(_clique_cover_bound(indptr, indices, deg, np.empty(n, np.int64), np.empty(n, np.int64),
                                   np.empty(n + 1, np.int64), np.zeros(n + 1, np.int64)))


@njit(cache=True)
def degree_bound_holds(deg, dmax, edges, budget, hist):
    """Whether ``budget`` more vertices can cover ``edges`` edges: the sum of the ``budget``
    largest degrees must reach ``edges`` (beyond the paper, whose rule ``edges <= budget *
    dmax`` takes every degree as ``dmax``). ``hist`` is scratch of at least ``dmax + 1``."""
    for d in range(dmax + 1):
        hist[d] = 0
    for v in range(len(deg)):
        if deg[v] > 0:
            hist[deg[v]] += 1
    covered = 0
    left = budget
    for d in range(dmax, 0, -1):
        take = min(hist[d], left)
        covered += take * d
        left -= take
        if left == 0:
            break
    return covered >= edges


# --------------------------------------------------------------------------- CPU search
@njit(cache=True)
def _search(indptr, indices, stack, stack_cnt, st, best_deg, max_nodes, use_lb, pvc,
            order, cid, csize, hits, hist):
    """Depth-first branch-and-reduce over an explicit stack of degree arrays.

    Processes at most ``max_nodes`` tree nodes, then pushes the node in hand back on the
    stack and returns so the caller can check its clock and call again. ``st`` holds
    ``limit, best, nodes, sp, found, overflow, pruned_by_bound``.
    """
    n = len(indptr) - 1
    cap = stack.shape[0]
    cur = np.empty(n, dtype=np.int32)
    processed = 0
    while st[_SP] > 0 and processed < max_nodes:
        st[_SP] -= 1
        sp = st[_SP]
        for i in range(n):
            cur[i] = stack[sp, i]
        count = stack_cnt[sp]
        while True:
            processed += 1
            st[_NODES] += 1
            limit = st[_LIMIT]
            if count > limit:
                break
            count = _reduce(indptr, indices, cur, count, limit)
            if count > limit:
                break
            dmax = 0
            vmax = -1
            dsum = 0
            for v in range(n):
                d = cur[v]
                if d > 0:
                    dsum += d
                    if d > dmax:
                        dmax = d
                        vmax = v
            edges = dsum // 2
            if edges == 0:  # a cover no larger than the limit
                for i in range(n):
                    best_deg[i] = cur[i]
                st[_BEST] = count
                if pvc:
                    st[_FOUND] = 1
                    st[_SP] = 0
                    return
                st[_LIMIT] = count - 1
                break
            if edges > (limit - count) * dmax or not degree_bound_holds(cur, dmax, edges, limit - count, hist):
                break
            if use_lb == LB_ALWAYS or (use_lb == LB_ADAPTIVE and st[_LB_WAIT] <= 0):
                lb = _clique_cover_bound(indptr, indices, cur, order, cid, csize, hits)
                if count + lb > limit:
                    st[_PRUNED_LB] += 1
                    st[_LB_PERIOD] = 1
                    st[_LB_WAIT] = 0
                    break
                st[_LB_PERIOD] = min(2 * st[_LB_PERIOD], 64)
                st[_LB_WAIT] = st[_LB_PERIOD]
            elif use_lb == LB_ADAPTIVE:
                st[_LB_WAIT] -= 1
            # branch on vmax: push child "take N(vmax)", continue with child "take vmax"
            if count + dmax <= limit:
                top = st[_SP]
                if top >= cap:
                    st[_OVERFLOW] = 1
                    return
                for i in range(n):
                    stack[top, i] = cur[i]
                child = stack[top]
                for p in range(indptr[vmax], indptr[vmax + 1]):
                    u = indices[p]
                    if child[u] > 0:
                        _take(indptr, indices, child, u)
                stack_cnt[top] = count + dmax
                st[_SP] = top + 1
            _take(indptr, indices, cur, vmax)
            count += 1
            if processed >= max_nodes:  # suspend: the node in hand goes back on the stack
                top = st[_SP]
                if top >= cap:
                    st[_OVERFLOW] = 1
                    return
                for i in range(n):
                    stack[top, i] = cur[i]
                stack_cnt[top] = count
                st[_SP] = top + 1
                break


class SearchState:
    """Resumable CPU search over one graph (see :func:`search_cpu`)."""

    def __init__(self, indptr, indices, root_deg, root_count, limit, pvc, use_lb):
        n = len(indptr) - 1
        self.indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        self.indices = np.ascontiguousarray(indices, dtype=np.int64)
        # every stacked node has taken at least one more vertex than the one below it, so
        # the depth is bounded by the budget and by the number of vertices, whatever k is
        cap = min(max(int(limit) - int(root_count), 0), n) + 4
        need = cap * max(n, 1) * 4
        from ..memory import format_bytes, host_memory_budget

        if need > host_memory_budget():
            raise MemoryError(f"the paper's CPU search stacks {cap} degree arrays of {n} vertices "
                              f"({format_bytes(need)}); use method='auto' (branch-and-reduce) instead")
        self.stack = np.empty((cap, n), dtype=np.int32)
        self.stack_cnt = np.empty(cap, dtype=np.int64)
        self.stack[0] = root_deg
        self.stack_cnt[0] = root_count
        self.st = np.zeros(9, dtype=np.int64)
        self.st[_LB_PERIOD] = 1
        self.st[_LIMIT] = limit
        self.st[_BEST] = -1
        self.st[_SP] = 1
        self.best_deg = np.empty(n, dtype=np.int32)
        self.pvc = bool(pvc)
        if isinstance(use_lb, (bool, np.bool_)):
            use_lb = LB_ALWAYS if use_lb else LB_OFF
        if use_lb not in (LB_OFF, LB_ALWAYS, LB_ADAPTIVE):
            raise ValueError(f"use_lb must be a bool or one of 0, 1, 2, got {use_lb!r}")
        self.use_lb = np.int64(use_lb)
        self._work = (np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n + 1, np.int64),
                      np.zeros(n + 1, np.int64), np.empty(n + 1, np.int64))

    @property
    def done(self) -> bool:
        return bool(self.st[_SP] == 0)

    def step(self, max_nodes):
        _search(self.indptr, self.indices, self.stack, self.stack_cnt, self.st, self.best_deg,
                np.int64(max_nodes), self.use_lb, self.pvc, *self._work)
        if self.st[_OVERFLOW]:
            raise RuntimeError("vertex cover search stack overflow (internal error)")

    @property
    def nodes(self) -> int:
        return int(self.st[_NODES])

    @property
    def best(self) -> int:
        """Size of the best cover found by the search (-1 if none)."""
        return int(self.st[_BEST])

    @property
    def found(self) -> bool:
        return bool(self.st[_FOUND])


def search_cpu(indptr, indices, root_deg, root_count, limit, *, pvc=False, use_lb=True,
               deadline=None, chunk=None):
    """Run the CPU branch-and-reduce from one root node.

    Parameters
    ----------
    indptr, indices : ndarray
        CSR of the (sub)graph.
    root_deg : ndarray of int32
        Degree array of the root (``-1`` for vertices already in the cover).
    root_count : int
        Number of ``-1`` entries of ``root_deg``.
    limit : int
        Largest cover size of interest (``best - 1`` for MVC, ``k`` for PVC).
    pvc : bool
        Stop at the first cover of size ``<= limit``.
    use_lb : bool or {0, 1, 2}
        Prune with the clique-cover lower bound (an extension of the paper): False/0 never,
        True/1 at every node, 2 adaptively (``LB_ADAPTIVE``).
    deadline : float or None
        ``time.perf_counter()`` value after which the search stops unfinished.

    Returns
    -------
    state : SearchState
        ``state.done`` tells whether the tree was exhausted (or, for PVC, a cover found);
        ``state.best`` / ``state.best_deg`` hold the best cover found (``-1`` if none
        within the limit).

    Examples
    --------
    >>> import numpy as np
    >>> indptr = np.array([0, 2, 4, 6, 8]); indices = np.array([1, 3, 0, 2, 1, 3, 0, 2])  # C4
    >>> s = search_cpu(indptr, indices, np.diff(indptr).astype(np.int32), 0, 2)
    >>> s.done, s.best
    (True, 2)
    """
    import time

    state = SearchState(indptr, indices, root_deg, root_count, limit, pvc, use_lb)
    if chunk is None:  # about 10 ms of work between clock checks, whatever the graph size
        n = len(indptr) - 1
        chunk = max(16, min(20000, 400_000 // max(n + (len(indices) // max(n, 1)) * 8, 1)))
    while not state.done:
        state.step(chunk)
        if deadline is not None and time.perf_counter() > deadline:
            break
    return state


# --------------------------------------------------------------------------- GPU search
class GpuCapacityError(RuntimeError):
    """The GPU search cannot take this instance on this device (launch limits, shared or
    global memory); callers fall back to the CPU."""


class GpuConfig:
    """Launch configuration of the GPU kernels (Section IV-E of the paper)."""

    def __init__(self, blocks, threads, shared, stack_depth, worklist_size, threshold, sms, bitset=False):
        self.blocks = int(blocks)
        self.threads = int(threads)
        self.shared = bool(shared)
        self.stack_depth = int(stack_depth)
        self.worklist_size = int(worklist_size)
        self.threshold = int(threshold)
        self.sms = int(sms)
        self.bitset = bool(bitset)

    def as_dict(self):
        return dict(blocks=self.blocks, threads=self.threads, shared=self.shared,
                    stack_depth=self.stack_depth, worklist_size=self.worklist_size,
                    threshold=self.threshold, sms=self.sms, bitset=self.bitset)

    def replace(self, **changes):
        """A copy with some fields changed."""
        return GpuConfig(**{**self.as_dict(), **changes})

    def __repr__(self):
        return "GpuConfig(" + ", ".join(f"{k}={v}" for k, v in self.as_dict().items()) + ")"


#: Bitset mode: at most this many vertices (the kernels' VC_BITSET_WORDS * 32).
BITSET_MAX_VERTICES = 8192


def gpu_config(n, depth, *, edges=None, threads=None, shared=None, bitset=None, worklist_size=None, threshold=None,
               memory_fraction=0.25, device_props=None):
    """Choose block size, block count, shared/global degree array, bitset mode and worklist size.

    Follows Section IV-E: the block size lies between a lower limit (threads needed for
    full occupancy divided by the most blocks that can run at once: hardware, shared
    memory and global memory for the stacks) and an upper limit (``min(1024, n)``
    rounded up to a warp); the shared-memory kernel is used when its per-block degree
    array fits and still allows full occupancy, else the global-memory kernel. Beyond
    the paper, a block gets at least 256 threads (the warps scan adjacency lists
    cooperatively; measured faster than 128 and 512 on the DIMACS complements).

    Bitset mode (an extension of the paper) recounts the degrees as popcounts over
    adjacency bitsets after each batch of deletions, ``n * n / 32`` word operations
    instead of one atomic per deleted edge end (``avg_degree ** 2`` when taking a
    neighbourhood): it is chosen (``bitset=None``) for graphs of at most 8192 vertices
    with edge density (from ``edges``) at least 0.6: on sparser graphs the recount after
    each small reduction round costs more than the few decrements it replaces
    (docs/performance.md has the measurements).

    ``device_props`` (a dict with ``multiProcessorCount``, ``maxThreadsPerMultiProcessor``,
    ``maxBlocksPerMultiProcessor``, ``sharedMemPerMultiprocessor``,
    ``sharedMemPerBlockOptin``, ``totalGlobalMem``) defaults to the current device.

    Examples
    --------
    >>> props = dict(multiProcessorCount=132, maxThreadsPerMultiProcessor=2048,
    ...              maxBlocksPerMultiProcessor=32, sharedMemPerMultiprocessor=233472,
    ...              sharedMemPerBlockOptin=232448, totalGlobalMem=80 * 2**30)
    >>> cfg = gpu_config(300, 120, device_props=props)
    >>> cfg.shared, cfg.threads >= 64
    (True, True)
    """
    if device_props is None:
        import cupy

        from ..backend import device_attributes

        attrs = device_attributes()
        device_props = dict(
            multiProcessorCount=attrs["MultiProcessorCount"],
            maxThreadsPerMultiProcessor=attrs["MaxThreadsPerMultiProcessor"],
            maxBlocksPerMultiProcessor=attrs.get("MaxBlocksPerMultiprocessor", 32),
            sharedMemPerMultiprocessor=attrs["MaxSharedMemoryPerMultiprocessor"],
            sharedMemPerBlockOptin=attrs.get("MaxSharedMemoryPerBlockOptin", 49152),
            totalGlobalMem=cupy.cuda.runtime.memGetInfo()[0],
        )
    sms = int(device_props["multiProcessorCount"])
    max_threads_sm = int(device_props["maxThreadsPerMultiProcessor"])
    max_blocks_sm = int(device_props["maxBlocksPerMultiProcessor"])
    smem_sm = int(device_props["sharedMemPerMultiprocessor"])
    smem_block = int(device_props["sharedMemPerBlockOptin"])
    gmem = int(device_props["totalGlobalMem"]) * memory_fraction
    entry = 4 * (n + 1)
    depth = max(int(depth), 1) + 4
    if worklist_size is None:
        # a few entries per block, but never more than a quarter of the memory budget
        worklist_size = 1024
        while worklist_size > 64 and worklist_size * entry > gmem / 4:
            worklist_size //= 2
    gmem_stacks = gmem - worklist_size * entry
    blocks_gmem = max(int(gmem_stacks // (depth * entry + entry)), 1)
    smem_need = entry + 5 * 1024  # degree array + static state (histogram of 1024 bins, control)
    fits_shared = smem_need <= smem_block
    blocks_smem = smem_sm // smem_need if fits_shared else 0
    upper = min(1024, max(32, ((n + 31) // 32) * 32))

    def pick(blocks_per_sm_cap):
        max_blocks = min(max_blocks_sm * sms, blocks_per_sm_cap * sms, blocks_gmem)
        lower = max(32, math.ceil(max_threads_sm * sms / max(max_blocks, 1)))
        if lower > upper:
            return upper, False
        t = 32
        while t < lower:
            t *= 2
        t = min(max(t, 128), upper)  # at least 4 warps per block when the graph allows
        t = 1 << (t.bit_length() - 1) if t & (t - 1) else t
        return max(t, 32), True

    if shared is None:
        use_shared = False
        if fits_shared:
            t, full = pick(blocks_smem)
            use_shared = full
        if not use_shared:
            t, full_g = pick(max_blocks_sm)
            if not full_g and fits_shared:  # neither reaches full occupancy: keep shared memory
                use_shared = True
                t, _ = pick(blocks_smem)
    else:
        use_shared = bool(shared) and fits_shared
        t, _ = pick(blocks_smem if use_shared else max_blocks_sm)
    if bitset is None:
        bitset = edges is not None and n <= BITSET_MAX_VERTICES and 2 * edges >= 0.6 * n * (n - 1)
    elif bitset and n > BITSET_MAX_VERTICES:
        raise ValueError(f"bitset mode needs at most {BITSET_MAX_VERTICES} vertices, got {n}")
    if threads is not None:
        t = int(threads)
        if t < 32 or t > 1024 or t % 32:
            raise ValueError(f"threads must be a multiple of 32 in [32, 1024], got {threads}")
    elif bitset:
        # a node's cost is the n * n / 32-word recount: wider blocks shorten the critical path
        t = max(t, 512)
    else:
        # the warps scan adjacency lists cooperatively, so 8 warps pay off even on graphs of
        # fewer vertices (128 and 512 threads measured slower: docs/performance.md)
        t = max(t, 256)
    per_sm = min(max_blocks_sm, max_threads_sm // t)
    if use_shared:
        per_sm = min(per_sm, max(smem_sm // smem_need, 1))
    blocks = max(1, min(per_sm * sms, blocks_gmem))
    if threshold is None:
        threshold = max(1, worklist_size // 2)
    return GpuConfig(blocks, t, use_shared, depth, worklist_size, min(threshold, worklist_size), sms, bitset)


def adjacency_bitsets(indptr, indices):
    """Row ``v`` = bits of the neighbours of ``v`` in ``ceil(n / 32)`` little-endian
    ``uint32`` words (the GPU kernels' bitset mode).

    Examples
    --------
    >>> import numpy as np
    >>> adjacency_bitsets(np.array([0, 2, 3, 4]), np.array([1, 2, 0, 0])).ravel().tolist()
    [6, 1, 1]
    """
    indptr = np.asarray(indptr, dtype=np.int64)
    n = len(indptr) - 1
    wn = (n + 31) // 32
    dense = np.zeros((n, wn * 32), dtype=bool)
    dense[np.repeat(np.arange(n), np.diff(indptr)), np.asarray(indices, dtype=np.int64)] = True
    return np.packbits(dense, axis=1, bitorder="little").view("<u4").reshape(n, wn)


@njit(cache=True)
def _hopcroft_karp(indptr, indices, n_right):
    n_left = len(indptr) - 1
    inf = n_left + 1
    match_l = np.full(n_left, -1, np.int64)
    match_r = np.full(n_right, -1, np.int64)
    dist = np.empty(n_left, np.int64)
    queue = np.empty(n_left, np.int64)
    path_u = np.empty(n_left + 1, np.int64)
    path_v = np.empty(n_left + 1, np.int64)
    nxt = np.empty(n_left, np.int64)
    while True:
        # layers of left vertices by alternating distance from the free ones
        tail = 0
        for u in range(n_left):
            if match_l[u] < 0:
                dist[u] = 0
                queue[tail] = u
                tail += 1
            else:
                dist[u] = inf
        head = 0
        free_reached = False
        while head < tail:
            u = queue[head]
            head += 1
            for e in range(indptr[u], indptr[u + 1]):
                w = match_r[indices[e]]
                if w < 0:
                    free_reached = True
                elif dist[w] == inf:
                    dist[w] = dist[u] + 1
                    queue[tail] = w
                    tail += 1
        if not free_reached:
            return match_l
        # vertex-disjoint shortest augmenting paths, depth first along the layers
        for u in range(n_left):
            nxt[u] = indptr[u]
        for s in range(n_left):
            if match_l[s] >= 0:
                continue
            top = 0
            path_u[0] = s
            while top >= 0:
                u = path_u[top]
                moved = False
                while nxt[u] < indptr[u + 1]:
                    v = indices[nxt[u]]
                    nxt[u] += 1
                    w = match_r[v]
                    if w < 0:
                        path_v[top] = v
                        for lvl in range(top + 1):
                            match_l[path_u[lvl]] = path_v[lvl]
                            match_r[path_v[lvl]] = path_u[lvl]
                        top = -1
                        moved = True
                        break
                    if dist[w] == dist[u] + 1:
                        path_v[top] = v
                        top += 1
                        path_u[top] = w
                        moved = True
                        break
                if not moved:
                    dist[u] = inf  # dead end for this phase
                    top -= 1


def bipartite_matching(indptr, indices, n_right):
    """Maximum matching of a bipartite graph given as the CSR of its left side (Hopcroft-Karp,
    Numba, O(E sqrt(V))); returns the right partner of each left vertex (-1: unmatched).

    Examples
    --------
    >>> import numpy as np
    >>> bipartite_matching(np.array([0, 2, 3]), np.array([0, 1, 0]), 2).tolist()
    [1, 0]
    """
    indptr = np.asarray(indptr, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    if len(indptr) == 0 or indptr[0] != 0 or indptr[-1] != len(indices) or np.any(np.diff(indptr) < 0):
        raise ValueError("indptr must start at 0, not decrease and end at len(indices)")
    if len(indices) and (indices.min() < 0 or indices.max() >= n_right):
        raise ValueError(f"right vertex ids must lie in 0..{int(n_right) - 1}")
    return _hopcroft_karp(indptr, indices, int(n_right))


def lp_bound(indptr, indices):
    """LP lower bound on the minimum cover: half the maximum matching of the bipartite double cover.

    Examples
    --------
    >>> import numpy as np
    >>> indptr = np.array([0, 2, 4, 6]); indices = np.array([1, 2, 0, 2, 0, 1])  # triangle
    >>> lp_bound(indptr, indices)
    2
    """
    n = len(indptr) - 1
    if n == 0 or len(indices) == 0:
        return 0
    match = bipartite_matching(indptr, indices, n)
    return int(-(-int(np.count_nonzero(match >= 0)) // 2))


_STOP_STREAMS = {}


def _run_with_deadline(kern, grid, block, args, smem, start, stop, stop_flag, time_limit):
    """Launch the persistent kernel on its own stream and raise ``stop_flag`` (one device
    int) once ``time_limit`` seconds have passed. The kernel may occupy every SM, so the
    flag is written by a host-to-device copy (copy engine) on another stream, never by a
    kernel. The host polls with a sleep of at most 1/20 of the time elapsed (0.05-1 ms),
    so a short search is not stretched by the polling."""
    import time

    import cupy

    dev = cupy.cuda.runtime.getDevice()
    if dev not in _STOP_STREAMS:
        one = cupy.cuda.alloc_pinned_memory(4)
        one_np = np.frombuffer(one, dtype=np.int32, count=1)
        one_np[0] = 1
        _STOP_STREAMS[dev] = (cupy.cuda.Stream(non_blocking=True), cupy.cuda.Stream(non_blocking=True), one, one_np)
    stream, flag_stream, _, one_np = _STOP_STREAMS[dev]
    cupy.cuda.get_current_stream().synchronize()  # the set-up ran on the current stream
    with stream:
        start.record(stream)
        kern(grid, block, args, shared_mem=smem)
        stop.record(stream)
    t0 = time.perf_counter()
    while not stop.done:
        elapsed = time.perf_counter() - t0
        if elapsed > time_limit:
            stop_flag.set(one_np, stream=flag_stream)
            flag_stream.synchronize()
            break
        time.sleep(min(max(elapsed / 20, 5e-5), 1e-3))
    stop.synchronize()


def _fit_launch(method, config, n):
    """The kernel for ``config`` and a launch that the device accepts: block size within
    the kernel's ``max_threads_per_block`` (registers), dynamic plus static shared memory
    within the per-block opt-in limit (else the global-memory variant). Returns
    ``(kernel, config, dynamic shared bytes)``."""
    from ..backend import device_attributes
    from ..nvrtc import get_kernel

    attrs = device_attributes()
    optin = int(attrs.get("MaxSharedMemoryPerBlockOptin", 49152))
    for shared in ((True, False) if config.shared else (False,)):
        kern = get_kernel("vertex_cover", f"vc_{method}_{'shared' if shared else 'global'}")
        static = int(getattr(kern, "shared_size_bytes", 0) or 0)
        smem = 4 * (n + 1) if shared else 0
        if smem + static > optin:
            continue
        if smem > 48 * 1024:
            kern.max_dynamic_shared_size_bytes = smem
        T = config.threads
        max_t = int(getattr(kern, "max_threads_per_block", 1024) or 1024)
        if T > max_t:
            T = max(32, (max_t // 32) * 32)
        B = config.blocks
        regs = int(getattr(kern, "num_regs", 0) or 0)
        if regs > 0:  # registers may allow fewer resident blocks than the configuration assumed
            B = max(1, min(B, max(65536 // (regs * T), 1) * config.sms))
        return kern, config.replace(blocks=B, threads=T, shared=shared), smem
    raise GpuCapacityError(f"no kernel variant fits: a graph of {n} vertices exceeds the shared memory per block")


def search_gpu(indptr, indices, root_deg, root_count, limit, *, pvc=False, method="hybrid",
               start_depth=8, config=None, time_limit=None):
    """Run the Hybrid or StackOnly CUDA kernel from one root node.

    Parameters
    ----------
    indptr, indices : ndarray (host)
        CSR of the graph (converted to int32).
    root_deg : ndarray of int32
        Root degree array, ``root_count`` its number of removed vertices.
    limit : int
        Largest cover size of interest (``best - 1`` for MVC, ``k`` for PVC).
    pvc : bool
        Stop every block as soon as one finds a cover within the limit.
    method : {"hybrid", "stackonly"}
    start_depth : int
        StackOnly: depth of the sub-trees distributed over the blocks.
    config : GpuConfig, optional
        Launch configuration (default :func:`gpu_config`).
    time_limit : float, optional
        Seconds after which blocks stop taking new nodes (the result is then unproven).

    Returns
    -------
    dict
        ``best`` (size found within the limit, or -1), ``best_deg`` (host degree array of
        that cover), ``complete`` (tree exhausted or PVC cover found), ``nodes_per_block``
        (host array), ``nodes_per_sm`` (host array), ``config``, ``kernel_ms``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernels.backend import gpu_available
    >>> if gpu_available():  # doctest: +SKIP
    ...     indptr = np.array([0, 2, 4, 6, 8]); indices = np.array([1, 3, 0, 2, 1, 3, 0, 2])
    ...     search_gpu(indptr, indices, np.diff(indptr).astype(np.int32), 0, 2)["best"]
    2
    """
    import cupy

    if method not in ("hybrid", "stackonly"):
        raise ValueError(f"method must be 'hybrid' or 'stackonly', got {method!r}")
    n = len(indptr) - 1
    depth = max(int(limit) - int(root_count), 0) + 2
    if config is None:
        config = gpu_config(n, depth, edges=len(indices) // 2)
    kern, config, smem = _fit_launch(method, config, n)
    B, T = config.blocks, config.threads
    S = max(config.stack_depth, depth + 2)
    W = config.worklist_size if method == "hybrid" else 1
    # global memory: the stacks dominate; fewer blocks when they do not fit
    per_block = 4 * (S * n + S + (0 if config.shared else n))
    fixed = 4 * (W * (n + 2) + 4 * n + len(indices)) + (4 * n * ((n + 31) // 32) if config.bitset else 0)
    free = int(cupy.cuda.runtime.memGetInfo()[0] * 0.8)
    if fixed + per_block > free:
        raise GpuCapacityError(f"{n} vertices with a stack depth of {S} need "
                               f"{(fixed + per_block) / 2**30:.1f} GiB of device memory, {free / 2**30:.1f} GiB free")
    if fixed + B * per_block > free:
        B = max(1, (free - fixed) // per_block)
        config = config.replace(blocks=B)
    d_indptr = cupy.asarray(np.asarray(indptr, dtype=np.int32))
    d_indices = cupy.asarray(np.asarray(indices, dtype=np.int32))
    wn = (n + 31) // 32
    adj = cupy.asarray(adjacency_bitsets(indptr, indices)) if config.bitset else None
    stacks = cupy.empty((B, S, n), dtype=np.int32)
    stack_cnt = cupy.empty((B, S), dtype=np.int32)
    scratch = cupy.empty((B, n), dtype=np.int32) if not config.shared else cupy.empty((1, 1), dtype=np.int32)
    root_h = np.asarray(root_deg, dtype=np.int32)
    root = cupy.asarray(root_h)
    best_deg = root.copy()
    # ctl: 0 limit (best-1 / k), 1 best size found, 2 found flag (PVC), 3 pending, 4 head,
    #      5 tail, 6 available, 7 cover lock, 8 overflow, 9 next sub-tree, 10 stop, 11 queue size
    ctl_h = np.zeros(16, dtype=np.int32)
    ctl_h[0], ctl_h[1] = int(limit), -1
    work = cupy.empty((W, n), dtype=np.int32)
    work_cnt_h = np.zeros(W, dtype=np.int32)
    work_ticket_h = np.zeros(W, dtype=np.uint32)
    if method == "hybrid":  # the root is the only worklist entry
        work[0] = root
        work_cnt_h[0] = int(root_count)
        work_ticket_h[0] = 1
        ctl_h[[3, 5, 6, 11]] = 1  # pending, tail, available, queue size
    ctl = cupy.asarray(ctl_h)
    work_cnt = cupy.asarray(work_cnt_h)
    work_ticket = cupy.asarray(work_ticket_h)
    nodes = cupy.zeros(B, dtype=np.int64)
    smid = cupy.zeros(B, dtype=np.int32)
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    args = (d_indptr, d_indices, np.int32(n), root, np.int32(root_count), stacks, stack_cnt,
            np.int32(S), work, work_cnt, work_ticket, np.int32(W), np.int32(config.threshold),
            scratch, best_deg, ctl, nodes, smid, np.int32(1 if pvc else 0), np.int32(start_depth),
            adj if adj is not None else np.uint64(0), np.int32(wn))
    try:
        if time_limit is None:
            start.record()
            kern((B,), (T,), args, shared_mem=smem)
            stop.record()
            stop.synchronize()
        else:
            _run_with_deadline(kern, (B,), (T,), args, smem, start, stop, ctl[10:11], time_limit)
    except (cupy.cuda.driver.CUDADriverError, cupy.cuda.runtime.CUDARuntimeError) as e:
        raise GpuCapacityError(f"kernel launch failed ({e}) with {B} blocks of {T} threads and {smem} bytes of "
                               f"dynamic shared memory") from e
    ms = cupy.cuda.get_elapsed_time(start, stop)
    c = ctl.get()
    if c[8]:
        raise RuntimeError("vertex cover GPU stack overflow (internal error)")
    nodes_h = nodes.get()
    sm_h = smid.get()
    per_sm = np.bincount(sm_h, weights=nodes_h, minlength=config.sms).astype(np.int64)
    complete = bool(c[10] == 0) or (pvc and c[2] == 1)
    return dict(best=int(c[1]), best_deg=best_deg.get(), complete=complete, nodes_per_block=nodes_h,
                nodes_per_sm=per_sm, config=config, kernel_ms=float(ms))
