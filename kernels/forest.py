"""Linear forest from a [0,2]-factor (paper 001, Sections 3.3 and 4.2).

1. Break every cycle at its weakest edge (smallest ``(weight, lo, hi)``).
2. Give every vertex its path id (the smaller end vertex id) and position (0 at that end).
3. The permutation sorting vertices by (path id, position): under it the forest's
   adjacency is tridiagonal.

The CPU reference walks the paths in linear time (Numba). The GPU default is a sparse
ruling set (:func:`linear_forest_ruling`: walks between sampled rulers, the paper's
bidirectional scan on the short lists of rulers only, O(N) work). The paper's own
bidirectional scan over all vertices (pointer jumping in both directions with ping-pong
buffers; ``min`` over edges for the cycles, ``+`` for positions) is kept for comparison
(``method="scan"``, ``kernels/cuda/forest.cu``); its ranking scan stops early once every
pointer has reached a path end (checked every ``check_every`` steps, so there is no host
synchronization per step); ``early_exit=False`` runs the paper's fixed ``ceil(log2 N)``
steps. The permutation is computed in linear time from the path lengths (an exclusive
scan) instead of a sort.
"""
from __future__ import annotations

import functools
import math
import time

import numpy as np
from numba import njit, prange

from .backend import EarlyRead, get_array_module, is_device_array, small_zeros, to_host
from .cuda import launch_cooperative
from .hashing import hash32

__all__ = ["linear_forest_cpu", "linear_forest_gpu", "linear_forest_ruling", "linear_forest_arrays"]


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


def linear_forest_cpu(partners, weights):
    """CPU reference: returns ``(forest_partners, path_id, position, permutation,
    path_start, removed_edges)`` with ``removed_edges`` as ``k x 2`` (lo, hi)."""
    return _linear_forest(np.ascontiguousarray(partners, dtype=np.int64), np.ascontiguousarray(weights))


def linear_forest_gpu(partners, weights, *, method="ruling", early_exit=True, check_every=4, stats=None):
    """GPU version; same outputs as :func:`linear_forest_cpu` (CuPy).

    ``method="ruling"`` (default): the work-efficient sparse ruling set,
    :func:`linear_forest_ruling` (O(N) work, one pass over the vertices).
    ``method="scan"``: the paper's bidirectional scan over all vertices
    (``ceil(log2 N) + 1`` min-scan steps for the cycles, then the ranking scan, with an
    early exit unless ``early_exit=False``), kept for comparison. Both are verified
    against the CPU walk on an H100.

    ``stats`` (a dict), if given, receives the number of scan steps run and the GPU time
    in seconds of the phases ``cycles``, ``ranking`` and ``permutation`` (CUDA events).
    """
    if method == "ruling":
        return linear_forest_ruling(partners, weights, stats=stats)
    if method != "scan":
        raise ValueError(f"method must be 'ruling' or 'scan', got {method!r}")
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
    launcher = _GpuLauncher(itype, vtype)
    perm, paths = _order_paths(launcher, _order_buffers(launcher, N), length, path_id, position, removed_lo)
    path_start, removed = paths()
    if stats is not None:
        events[3].record()
        events[3].synchronize()
        stats["cycle_steps"] = steps + 1
        stats["rank_steps"] = ran
        for name, (a, b) in zip(("cycles", "ranking", "permutation"), zip(events, events[1:])):
            stats[name] = cupy.cuda.get_elapsed_time(a, b) * 1e-3
    return partners, path_id, position, perm, path_start, removed


def linear_forest_arrays(partners, weights, method=None, *, paths_later=False, overlap=None, **kwargs):
    """Dispatch on the backend of ``partners``: ``(neighbors, path_id, position,
    permutation, path_start, removed_edges)``.

    ``method``: None (CPU: ``"walk"``, GPU: ``"ruling"``), ``"walk"`` (CPU linear-time
    walk), ``"ruling"`` (sparse ruling set, CPU or GPU), ``"scan"`` (the paper's
    bidirectional scan, GPU only). ``paths_later=True`` returns, in place of the last
    two, a function that returns them: the ruling set then computes them only when it is
    called (their sizes are counts on the device, read back there), and ``neighbors`` as
    a function too (the factor's partners without the removed edges, which the
    preconditioners never read).

    ``overlap``, if given, is a function that queues work independent of the forest (on
    the backend of ``partners``): the ruling set calls it while its host waits for the
    number of rulers, so that the device works meanwhile; the other methods call it first.
    """
    gpu = is_device_array(partners)
    if method is None:
        method = "ruling" if gpu else "walk"
    if method not in ("walk", "ruling", "scan"):
        raise ValueError(f"method must be 'walk', 'ruling' or 'scan', got {method!r}")
    if method == "walk" and gpu:
        raise ValueError("method='walk' is the CPU reference; use 'ruling' or 'scan' on the GPU")
    if method == "scan" and not gpu:
        raise ValueError("method='scan' (the paper's bidirectional scan) runs on the GPU only")
    if method == "ruling":
        return linear_forest_ruling(partners, weights, paths_later=paths_later, overlap=overlap, **kwargs)
    if overlap is not None:
        overlap()
    out = linear_forest_cpu(partners, weights) if method == "walk" else linear_forest_gpu(partners, weights,
                                                                                          method="scan", **kwargs)
    return (lambda: out[0], *out[1:4], lambda: out[4:]) if paths_later else out


# ---------------------------------------------------------------------------------------
# Work-efficient variant: sparse ruling set. The Numba functions below mirror the CUDA
# kernels ruler_* of kernels/cuda/forest.cu one to one (a prange loop = one thread per
# item), so the GPU algorithm's logic is exercised and tested on the CPU as well.

RULER_SPACING = 32
RULER_RUN = 32
#: Fraction of the vertices for which the GPU allocates ruler slots before it knows how
#: many rulers there are (about 1 in ``RULER_SPACING``, plus every path end and isolated
#: vertex): random_diffusion2d, whose paths have 8 vertices on average, has 0.21 N.
GUESSED_RULERS = 0.25
_RULER_SALT = 0x51
_RUN_SALT = 0x52
_RULER_BLOCK = 256  # the ruling-set kernels' blocks (_GpuLauncher)
_DENSE_ENDS = 8  # forest.cu's DENSE_ENDS


@njit(cache=True)
def _edge_less(w, a, b, w2, a2, b2):
    return w < w2 or (w == w2 and (a < a2 or (a == a2 and b < b2)))


# claim[v]: _CLAIM_FREE, _RULER_TAG << 32 | the ruler's rank, or owner slot << 32 | distance
# from the owner's ruler (the CUDA kernels use the same bits as unsigned 64-bit words)
_CLAIM_FREE = -1
_RULER_TAG = -2


@njit(cache=True)
def _ruler_mark(N, P, seed, threshold, run, rulers, n_rulers, claim):
    """Twin of the CUDA ``ruler_mark`` (its blocks of ``_RULER_BLOCK`` vertices, sampled half
    as often where at least 1 in ``_DENSE_ENDS`` is a path end). The kernel's ranks come
    from an atomic counter and no result may depend on them: the twin numbers the rulers in
    decreasing vertex order, so the tests run the slots in an order unrelated to the vertex
    ids."""
    n_blocks = (N + _RULER_BLOCK - 1) // _RULER_BLOCK
    dense = np.zeros(n_blocks, dtype=np.bool_)
    for c in range(n_blocks):
        ends = 0
        for v in range(c * _RULER_BLOCK, min((c + 1) * _RULER_BLOCK, N)):
            ends += P[v, 0] < 0 or P[v, 1] < 0
        dense[c] = ends * _DENSE_ENDS >= _RULER_BLOCK
    k = 0
    for v in range(N - 1, -1, -1):
        p0, p1 = P[v, 0], P[v, 1]
        across = p0 != v - 1 and p0 != v + 1 and p1 != v - 1 and p1 != v + 1
        key, salt = (v // run, _RUN_SALT) if across else (v, _RULER_SALT)
        t = threshold // 2 if dense[v // _RULER_BLOCK] else threshold
        if p0 < 0 or p1 < 0 or hash32(key, salt, seed) < t:
            rulers[k] = v
            claim[v] = (np.int64(_RULER_TAG) << 32) | k
            k += 1
        else:
            claim[v] = _CLAIM_FREE
    n_rulers[0] = k


@njit(cache=True)
def _slots_within(n_rulers, capacity):
    """Twin of ``forest.cu``'s ``slots_within``: the slots of the rulers marked, or 0 when
    they exceed ``capacity``."""
    n_slots = 2 * np.int64(n_rulers[0])
    return n_slots if n_slots <= capacity else 0


@njit(cache=True)
def _ruler_walk(n_rulers, capacity, rulers, P, Wt, claim, w_end, w_met, w_len, w_bw, w_ba, w_bb, w_bn, w_bk,
                lockstep):
    """The walks of all slots, one step at a time: in lockstep rounds (``lockstep``: every
    walk advances by one vertex per round, so the two walks of a gap meet halfway) or each
    walk to its end in turn (one walk claims the whole gap). A claim is the CUDA kernel's
    atomicCAS; both orders are interleavings the GPU can produce."""
    n_slots = _slots_within(n_rulers, capacity)
    cur = np.empty(n_slots, dtype=np.int64)
    prev = np.empty(n_slots, dtype=np.int64)
    dist = np.ones(n_slots, dtype=np.int64)
    live = np.zeros(n_slots, dtype=np.bool_)
    for t in range(n_slots):
        R = rulers[t >> 1]
        cur[t] = P[R, t & 1]
        prev[t] = R
        w_end[t] = -(R + 1)
        w_met[t] = -1
        w_len[t] = 0
        w_bw[t] = np.inf
        w_ba[t] = -1
        w_bb[t] = -1
        w_bn[t] = R
        w_bk[t] = 0
        if cur[t] >= 0:
            live[t] = True
            w_bw[t] = Wt[R, t & 1]
            w_ba[t] = min(R, cur[t])
            w_bb[t] = max(R, cur[t])
    more = True
    while more:
        more = False
        for t in range(n_slots):
            while live[t]:
                c, p = cur[t], prev[t]
                old = claim[c]
                if old == _CLAIM_FREE:
                    claim[c] = (np.int64(t) << 32) | dist[t]
                if old >> 32 == _RULER_TAG:
                    w_end[t] = 2 * (old & 0xFFFFFFFF) + (0 if P[c, 0] == p else 1)
                    w_len[t] = dist[t]
                    live[t] = False
                    break
                if old != _CLAIM_FREE:
                    w_met[t] = old >> 32
                    w_len[t] = dist[t] - 1
                    live[t] = False
                    break
                s_out = 1 if P[c, 0] == p else 0
                nxt = P[c, s_out]
                w = Wt[c, s_out]
                a, b = min(c, nxt), max(c, nxt)
                if _edge_less(w, a, b, w_bw[t], w_ba[t], w_bb[t]):
                    w_bw[t], w_ba[t], w_bb[t], w_bn[t], w_bk[t] = w, a, b, c, dist[t]
                prev[t], cur[t] = c, nxt
                dist[t] += 1
                if lockstep:
                    more = True
                    break


@njit(cache=True, parallel=True)
def _ruler_link(n_rulers, capacity, w_end, w_met, w_len, w_bw, w_ba, w_bb, w_bn, w_bk, link, gap, mw, ma, mb, near,
                near_dist, mn):
    for t in prange(_slots_within(n_rulers, capacity)):
        u = w_met[t]
        bw, ba, bb, bn, bk = w_bw[t], w_ba[t], w_bb[t], w_bn[t], w_bk[t]
        lk, g = w_end[t], w_len[t]
        if u >= 0:
            lk = u
            g = w_len[u] if w_met[u] < 0 else w_len[t] + w_len[u] + 1
            if _edge_less(w_bw[u], w_ba[u], w_bb[u], bw, ba, bb):
                bw, ba, bb = w_bw[u], w_ba[u], w_bb[u]
                bn = bb if w_bn[u] == ba else ba
                bk = g - w_bk[u] - 1
        link[t] = lk
        gap[t] = g
        mw[t] = bw
        ma[t] = ba
        mb[t] = bb
        near[t] = bn
        near_dist[t] = bk
        mn[t] = t >> 1


_RULER_SAT = 1 << 30  # window lengths saturate here (on a cycle the windows wrap)
_HOP_ENDED = 1 << 30  # forest.cu's HOP_ENDED
#: Level of the ruler scan folded from level 0 gap by gap, each slot alone, before the
#: scan's first step (odd; ``forest.cu``'s ``fold_gaps``): most lists of slots are short
#: (random_diffusion2d at 2.9M rows: no path spans more than 8 gaps), and each step it
#: replaces read and wrote every slot's window behind a grid barrier. H100, ``ruler_scan``
#: (Nsight Compute, us) without / from level 1 / 3 / 5: random_diffusion2d float32 90.0 /
#: 81.7 / 49.0 / 60.0, ANISO2 float32 131.2 / 136.3 / 130.9 / 196.0; without / from 3:
#: random_diffusion2d float64 88.3 / 48.6, convection_diffusion3d float32 64.2 / 57.4,
#: ANISO1 float32 115.9 / 110.0, ANISO3 float32 114.3 / 108.7.
SCAN_START = 3


# A level of the twins: (q, r, mw, ma, mb, nv, dn, mn), one array per field; a window: the
# last seven as a tuple of scalars.
@njit(cache=True)
def _window(lv, t):
    return (np.int64(lv[1][t]), lv[2][t], np.int64(lv[3][t]), np.int64(lv[4][t]), np.int64(lv[5][t]),
            np.int64(lv[6][t]), np.int64(lv[7][t]))


@njit(cache=True)
def _store(lv, t, x, w):
    lv[0][t] = x
    lv[1][t] = w[0]
    lv[2][t] = w[1]
    lv[3][t] = w[2]
    lv[4][t] = w[3]
    lv[5][t] = w[4]
    lv[6][t] = w[5]
    lv[7][t] = w[6]


@njit(cache=True)
def _spoil(lv, t):
    """Fills slot ``t``'s window with -3, as the launcher fills unwritten slots: a twin that
    read it would go wrong in the tests."""
    lv[1][t] = -3
    lv[2][t] = -3
    lv[3][t] = -3
    lv[4][t] = -3
    lv[5][t] = -3
    lv[6][t] = -3
    lv[7][t] = -3


@njit(cache=True)
def _append_window(w, nxt):
    """Twin of ``append_window``: window ``w`` followed by ``nxt``."""
    d, bw, ba, bb, bn, bd, m = w
    if _edge_less(nxt[1], nxt[2], nxt[3], bw, ba, bb):
        bw, ba, bb, bn = nxt[1], nxt[2], nxt[3], nxt[4]
        bd = min(d + nxt[5], _RULER_SAT)
    return (min(d + nxt[0], _RULER_SAT), bw, ba, bb, bn, bd, min(m, nxt[6]))


@njit(cache=True, parallel=True)
def _fold_gaps(n_slots, start, busy, level0, a, b, ee, er, ended):
    """Twin of ``fold_gaps``: level ``start`` from level 0, each slot alone (``ended``:
    scratch, whether each slot's list ended)."""
    link = level0[0]
    unfinished = 0
    for t in prange(n_slots):
        x = link[t]
        w = _window(level0, t)
        around = x == t ^ 1
        h = 1
        while h < (1 << start) and x >= 0:
            kw = x ^ 1
            w = _append_window(w, _window(level0, kw))
            x = link[kw]
            around = around or x == t ^ 1
            h += 1
        ended[t] = x < 0
        if x >= 0 and not around:
            unfinished += 1
        if x >= 0:
            _store(a, t, x, w)
        if x < 0 or around:
            _store(b, t, x, w)
        a[0][t] = x - _HOP_ENDED if x < 0 else x
        b[0][t] = x
        ee[t] = -x - 1 if x < 0 else -1
        er[t] = w[0]
    if unfinished:
        busy[start] = 1
    # the windows the GPU leaves unwritten (both sides of the ruler ended) made unreadable
    for t in prange(n_slots):
        if ended[t] and ended[t ^ 1]:
            _spoil(b, t)


@njit(cache=True)
def _window_at(g, inp, ended, use_ended):
    """Twin of ``window_at``."""
    if use_ended and inp[0][g] < -_HOP_ENDED:
        return _window(ended, g)
    return _window(inp, g)


@njit(cache=True, parallel=True)
def _ruler_scan_step(n_slots, s, busy, link, inp, out, use_ended, ee, er):
    unfinished = 0
    for t in prange(n_slots):
        if out[0][t] < 0:  # ended at the level before: final
            continue
        x = inp[0][t]
        w = _window(inp, t)
        is_open = x >= 0
        if is_open:
            if inp[0][t ^ 1] < 0 or w[6] != _window_at(link[t] ^ 1, inp, out, use_ended)[6]:
                unfinished += 1
            kw = x ^ 1
            w = _append_window(w, _window_at(kw, inp, out, use_ended))
            x = inp[0][kw]
            if x < -_HOP_ENDED:
                x += _HOP_ENDED
        _store(out, t, x, w)
        if is_open and x < 0:
            ee[t] = -x - 1
            er[t] = w[0]
    if unfinished:
        busy[s] = 1


@njit(cache=True)
def _ruler_scan(n_slots, steps, start, busy, steps_run, link, r0, mw0, ma0, mb0, nv0, dn0, mn0, qa, ra, mwa, maa,
                mba, nva, dna, mna, qb, rb, mwb, mab, mbb, nvb, dnb, mnb, ee, er):
    """Twin of the cooperative CUDA ``ruler_scan``: level 0 -> level ``start`` in a -> b -> a ... -> b,
    and every slot's path end (``ee``, ``er``: forest.cu's ``PathEnd``)."""
    level0 = (link, r0, mw0, ma0, mb0, nv0, dn0, mn0)
    a = (qa, ra, mwa, maa, mba, nva, dna, mna)
    b = (qb, rb, mwb, mab, mbb, nvb, dnb, mnb)
    _fold_gaps(n_slots, start, busy, level0, a, b, ee, er, np.empty(n_slots, np.bool_))
    if busy[start] == 0:
        steps_run[0] = start
        return
    steps_run[0] = steps
    for s in range(start, steps):
        if s % 2 == 1:
            _ruler_scan_step(n_slots, s, busy, link, a, b, True, ee, er)
            if (s > start and busy[s - 1] == 0) or busy[s] == 0:
                steps_run[0] = s + 1
                break
        else:
            _ruler_scan_step(n_slots, s, busy, link, b, a, False, ee, er)


@njit(cache=True)
def _beyond(s, dist, ee, er, nv, dn):
    o = s ^ 1
    if ee[o] >= 0:
        return ee[o], dist + er[o]
    return nv[o], dist + dn[o]


@njit(cache=True, parallel=True)
def _ruler_finish(N, P, Wt, claim, link, gap, gmw, gma, gmb, near, near_dist, gmn, ee, er, r, mw, ma, mb, nv, dn,
                  mn, path_id, position, length, removed_lo):
    """Twin of the CUDA ``ruler_finish``, given level 0, the slots' path ends and the scan's
    last level's windows (as the launcher spreads them; their ``r``, ``mw`` and ``mn`` are
    not read)."""
    for v in prange(N):
        c = claim[v]
        cut = -1
        if c >> 32 == _RULER_TAG:
            s = 2 * (c & 0xFFFFFFFF)
            if ee[s] < 0:
                cut = s
            e0, d0 = _beyond(s + 1, 0, ee, er, nv, dn)
            e1, d1 = _beyond(s, 0, ee, er, nv, dn)
        elif c != _CLAIM_FREE:
            w, d = c >> 32, c & 0xFFFFFFFF
            f, g = link[w], gap[w]
            if ee[w] < 0:
                cut = w
            if cut >= 0 and gma[w] == ma[w] and gmb[w] == mb[w]:
                x, k = near[w], near_dist[w]
                y = mb[w] if x == ma[w] else ma[w]
                if d <= k:
                    e0, d0 = _beyond(w, d, ee, er, nv, dn)
                    e1, d1 = x, k - d
                else:
                    e0, d0 = y, d - k - 1
                    e1, d1 = _beyond(f, g - d, ee, er, nv, dn)
            else:
                e0, d0 = _beyond(w, d, ee, er, nv, dn)
                e1, d1 = _beyond(f, g - d, ee, er, nv, dn)
        else:  # cycle without a ruler: walk it (twice) from v
            prev, cur, L = v, P[v, 0], 1
            bw, a, b = Wt[v, 0], min(v, cur), max(v, cur)
            while cur != v:
                s_in = 0 if P[cur, 0] == prev else 1
                nxt = P[cur, 1 - s_in]
                w = Wt[cur, 1 - s_in]
                x, y = min(cur, nxt), max(cur, nxt)
                if _edge_less(w, x, y, bw, a, b):
                    bw, a, b = w, x, y
                prev, cur = cur, nxt
                L += 1
            ta, tb, step = 0, 0, 1
            prev, cur = v, P[v, 0]
            while cur != v:
                if cur == a:
                    ta = step
                if cur == b:
                    tb = step
                s_in = 0 if P[cur, 0] == prev else 1
                prev, cur = cur, P[cur, 1 - s_in]
                step += 1
            path_id[v] = a
            if v == a:
                position[v] = 0
            elif v == b:
                position[v] = L - 1
            else:
                position[v] = ta if ta < tb else L - ta
            length[v] = L if v == a else 0
            removed_lo[v] = b if v == a else -1
            continue
        removed_lo[v] = mb[cut] if cut >= 0 and v == ma[cut] else -1
        pid = min(e0, e1)
        path_id[v] = pid
        position[v] = d0 if e0 < e1 else (d1 if e1 < e0 else 0)
        length[v] = d0 + d1 + 1 if pid == v else 0


@njit(cache=True, parallel=True)
def _scatter_permutation(N, path_id, position, offsets, perm):
    for v in prange(N):
        perm[offsets[path_id[v]] + position[v]] = v


_ORDER_TILE = 1024  # vertices per tile of the order scan: 256 threads x ORDER_ITEMS in forest.cu
_OFFSET_TILE = 4096  # order_offsets' tiles: 256 threads x OFFSET_ITEMS in forest.cu


@njit(cache=True, parallel=True)
def _order_tile_sums(N, length, removed_lo, sums):
    for t in prange((N + _ORDER_TILE - 1) // _ORDER_TILE):
        c = np.zeros(3, dtype=np.int64)
        for v in range(t * _ORDER_TILE, min((t + 1) * _ORDER_TILE, N)):
            c[0] += length[v]
            c[1] += length[v] > 0
            c[2] += removed_lo[v] >= 0
        sums[3 * t:3 * t + 3] = c


@njit(cache=True)
def _order_scan_tiles(n_tiles, sums, totals):
    run = np.zeros(3, dtype=np.int64)
    for t in range(n_tiles):
        for k in range(3):
            x = sums[3 * t + k]
            sums[3 * t + k] = run[k]
            run[k] += x
    totals[:] = run


@njit(cache=True)
def _order_offsets(N, length, state, offsets):
    """Twin of ``order_offsets`` (``state``, its ticket and tile statuses, unused): one
    running sum over the vertices."""
    at = 0
    for v in range(N):
        if length[v] > 0:
            offsets[v] = at
            at += length[v]


@njit(cache=True, parallel=True)
def _order_place(N, length, removed_lo, tile_offsets, path_start, removed):
    for t in prange((N + _ORDER_TILE - 1) // _ORDER_TILE):
        at, paths, rem = tile_offsets[3 * t], tile_offsets[3 * t + 1], tile_offsets[3 * t + 2]
        for v in range(t * _ORDER_TILE, min((t + 1) * _ORDER_TILE, N)):
            if length[v] > 0:
                path_start[paths] = at
                paths += 1
                at += length[v]
            if removed_lo[v] >= 0:
                removed[rem, 0] = v
                removed[rem, 1] = removed_lo[v]
                rem += 1


def _ruler_threshold(spacing, run):
    """The hash threshold of ``spacing`` (both parameters checked)."""
    for name, value in (("spacing", spacing), ("run", run)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"ruler {name} must be a positive integer, got {value!r}")
    return (1 << 32) // spacing


_RULER_KERNELS = ("ruler_mark", "ruler_walk", "ruler_link", "ruler_scan", "ruler_finish",
                  "scatter_permutation", "order_offsets", "order_tile_sums", "order_scan_tiles", "order_place")


def _flat(args):
    """Kernel arguments with every tuple (a group of slot arrays) spread in place."""
    return tuple(x for a in args for x in (a if isinstance(a, tuple) else (a,)))


class _CpuLauncher:
    """Runs the ruling-set kernels as their Numba twins (for tests and CPU use)."""

    xp = np
    funcs = {"ruler_mark": _ruler_mark, "ruler_walk": _ruler_walk, "ruler_link": _ruler_link,
             "ruler_scan": _ruler_scan, "ruler_finish": _ruler_finish,
             "scatter_permutation": _scatter_permutation, "order_offsets": _order_offsets,
             "order_tile_sums": _order_tile_sums,
             "order_scan_tiles": _order_scan_tiles, "order_place": _order_place}

    def __init__(self, itype, vtype, lockstep=True):
        self.itype = np.dtype(itype)
        self.lockstep = lockstep

    def __call__(self, name, count, *args):
        if count:
            args = _flat(args)
            if name == "ruler_walk":
                args = args + (self.lockstep,)
            self.funcs[name](*args)

    def scalar(self, x):
        return np.int64(x)

    def guessed_rulers(self, N, n_rulers):
        """The count itself: the twins have run (nothing to wait for)."""
        return int(n_rulers[0])

    def _level(self, n_slots, vtype):
        return tuple(np.full(n_slots, -3, dtype=t) for t in (self.itype, self.itype, vtype) + (self.itype,) * 5)

    def walk_slots(self, n_slots, vtype):
        """``(buffer, walk, level0)``, the storage of :meth:`_GpuLauncher.walk_slots` as one
        array per field: the walks' results ``(end, met, len, bw, ba, bb, bn, bk)`` and
        level 0 ``(q, r, mw, ma, mb, nv, dn, mn)`` (``q`` = link, ``r`` = gap). Filled with -3
        rather than left uninitialized: a twin that read what it had not written would then
        go wrong in the tests (-3 reads as a window ended at vertex 2)."""
        it = self.itype
        walk = tuple(np.full(n_slots, -3, dtype=t) for t in (it,) * 3 + (vtype,) + (it,) * 4)
        return None, walk, self._level(n_slots, vtype)

    def scan_slots(self, n_slots, vtype):
        """``(buffer, a, b, ends)``: the scan's two levels, as level 0 in :meth:`walk_slots`,
        and the slots' path ends ``(e, r)``."""
        it = self.itype
        return (None, self._level(n_slots, vtype), self._level(n_slots, vtype),
                (np.full(n_slots, -3, dtype=it), np.full(n_slots, -3, dtype=it)))


class _GpuLauncher:
    def __init__(self, itype, vtype):
        import cupy

        self.xp = cupy
        self.itype = np.dtype(itype)
        self.kernels = _forest_kernels(self.itype, np.dtype(vtype), cupy.cuda.runtime.getDevice())

    def __call__(self, name, count, *args):
        if count:
            args = _flat(args)
            threads = _RULER_BLOCK
            if name == "ruler_scan":  # synchronizes its grid between the steps
                launch_cooperative(self.kernels[name], int(count), threads, args)
                return
            if name == "order_scan_tiles":
                # one block, whose threads scan a few tiles each (H100, 2.9M rows: 14 us with
                # 256 threads of twelve tiles each, 10 with 1024)
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
        (:func:`kernels.cuda.device_workspace`; keep ``buffer`` while kernels queued on it
        may run), as addresses. A record per slot (``forest.cu``: ``WalkRecord`` and
        ``Window``), so that a gather of another slot reads one or two sectors, not one per
        field: ``walk`` the walks' records, and a level a pointer array ``q`` and a window
        array (level 0: ``q`` = link)."""
        from .cuda import device_workspace

        it = self.itype
        buffer, (walk, link, w0) = device_workspace(
            (n_slots, _record_dtype(vtype, it, 7)), (n_slots, it), (n_slots, _record_dtype(vtype, it, 6)))
        return buffer, (walk,), (link, w0)

    def scan_slots(self, n_slots, vtype):
        """``(buffer, a, b, ends)``: the scan's two levels, as level 0 in :meth:`walk_slots`,
        and the slots' path ends (``forest.cu``'s ``PathEnd``, two indices each)."""
        from .cuda import device_workspace

        it = self.itype
        window = _record_dtype(vtype, it, 6)
        buffer, (qa, wa, qb, wb, ends) = device_workspace(
            (n_slots, it), (n_slots, window), (n_slots, it), (n_slots, window), (2 * n_slots, it))
        return buffer, (qa, wa), (qb, wb), (ends,)


@functools.lru_cache(maxsize=None)
def _record_dtype(vtype, itype, n_int):
    """A record of ``forest.cu`` (one value, then ``n_int`` indices) as an opaque dtype of its
    C size: natural alignment, padded to a multiple of 16 bytes (``__align__(16)``)."""
    fields = np.dtype([("w", vtype)] + [(f"i{k}", itype) for k in range(n_int)], align=True)
    return np.dtype((np.void, -(-fields.itemsize // 16) * 16))


@functools.lru_cache(maxsize=None)
def _forest_kernels(itype, vtype, device_id):
    from .cuda import get_kernel

    return {name: get_kernel("forest", name, vtype, itype) for name in _RULER_KERNELS}


def _order_buffers(launcher, N):
    """The arrays of :func:`_order_paths` for ``N`` vertices: allocated before the forest's
    host waits for the device, so that after the wait it only queues kernels."""
    if N >= 1 << 30:  # order_offsets keeps a tile's prefix in 30 bits
        raise ValueError(f"the path order supports fewer than 2**30 vertices, got {N}")
    xp, it = launcher.xp, launcher.itype
    n_tiles = (N + _ORDER_TILE - 1) // _ORDER_TILE
    # order_offsets' ticket and tile statuses
    return (n_tiles, small_zeros(xp, (N + _OFFSET_TILE - 1) // _OFFSET_TILE + 1, np.uint32),
            xp.empty(N, dtype=it),  # offsets, written at the path ids
            xp.empty(N, dtype=it))


def _order_paths(launcher, buffers, length, path_id, position, removed_lo):
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


def _drop_removed(P, removed_lo):
    """The partners ``P`` of a [0,2]-factor without the cycle edges removed from its forest
    (``removed_lo``: at each removed edge's lower end its higher end, else -1)."""
    xp = get_array_module(P)
    out = P.copy()
    lo = xp.flatnonzero(removed_lo >= 0)
    hi = removed_lo[lo]
    out[lo] = xp.where(P[lo] == hi[:, None], -1, P[lo])
    out[hi] = xp.where(P[hi] == lo[:, None], -1, P[hi])
    return out


def _scan_steps(n_rulers):
    """Steps of the ruler scan for ``n_rulers`` rulers: ceil(log2 R) + 1, rounded up to an
    even number (the scan's result lies in its second buffer)."""
    return 2 * math.ceil((math.ceil(math.log2(max(n_rulers, 2))) + 1) / 2)


def _ruling_forest(partners, weights, launcher, spacing=RULER_SPACING, run=RULER_RUN, seed=0, stats=None,
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
    launcher("ruler_mark", N, sc(N), P, np.uint32(seed), np.uint64(_ruler_threshold(spacing, run)), np.uint32(run),
             rulers, n_rulers, claim)
    # every output is written in full by ruler_finish; these and the ordering's arrays are
    # allocated while the device marks the rulers (the host reads their number below)
    removed_lo, path_id, position, length = (xp.empty(N, dtype=itype) for _ in range(4))
    order = _order_buffers(launcher, N)
    # the scan's flags, one per step; nr < N bounds the steps
    busy = small_zeros(xp, _scan_steps(N), np.int32)
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
    # the GPU the device would idle from the end of ruler_mark until the host had read it
    # and queued the walks (H100, random_diffusion2d at 2.9M rows: about 40 us). A short
    # guess costs that wait: the walks are queued again on enough slots after the read.
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
    steps = _scan_steps(nr)
    launcher("ruler_scan", ns, sc(ns), np.int32(steps), np.int32(min(SCAN_START, steps - 1)), busy, steps_run, link,
             level0[1:], a, b, ends)
    mark()
    launcher("ruler_finish", N, sc(N), P, Wt, claim, level0, ends, b[1:], path_id, position, length, removed_lo)
    del walk_buffer, scan_buffer  # freed after the kernels queued on them (CuPy's pool is stream-ordered)
    mark()
    perm, paths = _order_paths(launcher, order, length, path_id, position, removed_lo)
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
    # preconditioners never read: with paths_later, computed when asked for (H100,
    # random_diffusion2d at 2.9M rows: ruler_finish 98 -> 83 us without writing them)
    neighbors = functools.partial(_drop_removed, P, removed_lo)
    out = (neighbors if paths_later else neighbors(), path_id, position, perm)
    return (*out, paths) if paths_later else (*out, *paths())


def linear_forest_ruling(partners, weights, *, spacing=RULER_SPACING, run=RULER_RUN, seed=0, stats=None,
                         paths_later=False, overlap=None):
    """Linear forest by a sparse ruling set (work-efficient list ranking), CPU or GPU.

    Same outputs as :func:`linear_forest_cpu`. About one vertex in ``spacing`` (chosen by
    :func:`kernels.hashing.hash32` and ``seed``) plus every path end is a ruler; one in
    ``2 * spacing`` among 256 consecutive ids of which at least 32 are path ends (short
    paths need few rulers between their ends, and the scan is then shorter). A vertex
    whose partners are not its id neighbours ``v +- 1`` is drawn by the hash of ``v //
    run``, in runs of ``run`` consecutive ids: where the paths cross the order of the ids
    (a grid's columns) neighbouring threads then walk neighbouring paths through
    neighbouring memory (H100, ANISO2 at 6.25M rows: forest 1.62 -> 0.98 ms with runs of
    32). A vertex with a partner ``v +- 1`` is drawn alone: where the paths follow the ids
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
        from .cuda import aligned

        launcher = _GpuLauncher(partners.dtype, weights.dtype)
        # the kernels read a vertex's two slots as one pair (pairs.cuh)
        partners, weights = (aligned(x, 2 * x.dtype.itemsize) for x in (partners, weights))
    else:
        partners = np.asarray(partners)
        launcher = _CpuLauncher(partners.dtype, weights.dtype)
    return _ruling_forest(partners, weights, launcher, spacing=spacing, run=run, seed=seed, stats=stats,
                          paths_later=paths_later, overlap=overlap)
