"""The Numba twins of the ruling-set kernels of ``kernels/cuda/forest.cu`` and the
launcher that runs them (:class:`RulingCpuLauncher`).

Each twin mirrors its CUDA kernel one to one (a ``prange`` loop is one thread per item),
so the GPU algorithm's logic is exercised and tested on the CPU as well; the driver of
:mod:`kernels.forest.ruling` runs either launcher.

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Sections 3.3 and 4.2, Algorithm 3.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..hashing import hash32
from .common import (CLAIM_FREE, DENSE_ENDS, HOP_ENDED, RULER_BLOCK, RULER_SALT, RULER_SAT, RULER_TAG, RUN_SALT,
                     edge_less, flat_arguments)
from .order import order_offsets_cpu, order_place_cpu, order_scan_tiles_cpu, order_tile_sums_cpu, scatter_permutation_cpu

__all__ = ["RulingCpuLauncher", "ruler_mark_cpu", "ruler_walk_cpu", "ruler_link_cpu", "ruler_scan_cpu",
           "ruler_finish_cpu"]


@njit(cache=True)
def ruler_mark_cpu(N, P, seed, threshold, run, rulers, n_rulers, claim):
    """Twin of the CUDA ``ruler_mark`` (its blocks of ``RULER_BLOCK`` vertices, sampled half
    as often where at least 1 in ``DENSE_ENDS`` is a path end). The kernel's ranks come
    from an atomic counter and no result may depend on them: the twin numbers the rulers in
    decreasing vertex order, so the tests run the slots in an order unrelated to the vertex
    ids."""
    n_blocks = (N + RULER_BLOCK - 1) // RULER_BLOCK
    dense = np.zeros(n_blocks, dtype=np.bool_)
    for c in range(n_blocks):
        ends = 0
        for v in range(c * RULER_BLOCK, min((c + 1) * RULER_BLOCK, N)):
            ends += P[v, 0] < 0 or P[v, 1] < 0
        dense[c] = ends * DENSE_ENDS >= RULER_BLOCK
    k = 0
    for v in range(N - 1, -1, -1):
        p0, p1 = P[v, 0], P[v, 1]
        across = p0 != v - 1 and p0 != v + 1 and p1 != v - 1 and p1 != v + 1
        key, salt = (v // run, RUN_SALT) if across else (v, RULER_SALT)
        t = threshold // 2 if dense[v // RULER_BLOCK] else threshold
        if p0 < 0 or p1 < 0 or hash32(key, salt, seed) < t:
            rulers[k] = v
            claim[v] = (np.int64(RULER_TAG) << 32) | k
            k += 1
        else:
            claim[v] = CLAIM_FREE
    n_rulers[0] = k


@njit(cache=True)
def _slots_within(n_rulers, capacity):
    """Twin of ``forest.cu``'s ``slots_within``: the slots of the rulers marked, or 0 when
    they exceed ``capacity``."""
    n_slots = 2 * np.int64(n_rulers[0])
    return n_slots if n_slots <= capacity else 0


@njit(cache=True)
def ruler_walk_cpu(n_rulers, capacity, rulers, P, Wt, claim, w_end, w_met, w_len, w_bw, w_ba, w_bb, w_bn, w_bk,
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
                if old == CLAIM_FREE:
                    claim[c] = (np.int64(t) << 32) | dist[t]
                if old >> 32 == RULER_TAG:
                    w_end[t] = 2 * (old & 0xFFFFFFFF) + (0 if P[c, 0] == p else 1)
                    w_len[t] = dist[t]
                    live[t] = False
                    break
                if old != CLAIM_FREE:
                    w_met[t] = old >> 32
                    w_len[t] = dist[t] - 1
                    live[t] = False
                    break
                s_out = 1 if P[c, 0] == p else 0
                nxt = P[c, s_out]
                w = Wt[c, s_out]
                a, b = min(c, nxt), max(c, nxt)
                if edge_less(w, a, b, w_bw[t], w_ba[t], w_bb[t]):
                    w_bw[t], w_ba[t], w_bb[t], w_bn[t], w_bk[t] = w, a, b, c, dist[t]
                prev[t], cur[t] = c, nxt
                dist[t] += 1
                if lockstep:
                    more = True
                    break


@njit(cache=True, parallel=True)
def ruler_link_cpu(n_rulers, capacity, w_end, w_met, w_len, w_bw, w_ba, w_bb, w_bn, w_bk, link, gap, mw, ma, mb, near,
                near_dist, mn):
    for t in prange(_slots_within(n_rulers, capacity)):
        u = w_met[t]
        bw, ba, bb, bn, bk = w_bw[t], w_ba[t], w_bb[t], w_bn[t], w_bk[t]
        lk, g = w_end[t], w_len[t]
        if u >= 0:
            lk = u
            g = w_len[u] if w_met[u] < 0 else w_len[t] + w_len[u] + 1
            if edge_less(w_bw[u], w_ba[u], w_bb[u], bw, ba, bb):
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
    if edge_less(nxt[1], nxt[2], nxt[3], bw, ba, bb):
        bw, ba, bb, bn = nxt[1], nxt[2], nxt[3], nxt[4]
        bd = min(d + nxt[5], RULER_SAT)
    return (min(d + nxt[0], RULER_SAT), bw, ba, bb, bn, bd, min(m, nxt[6]))


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
        a[0][t] = x - HOP_ENDED if x < 0 else x
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
    if use_ended and inp[0][g] < -HOP_ENDED:
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
            if x < -HOP_ENDED:
                x += HOP_ENDED
        _store(out, t, x, w)
        if is_open and x < 0:
            ee[t] = -x - 1
            er[t] = w[0]
    if unfinished:
        busy[s] = 1


@njit(cache=True)
def ruler_scan_cpu(n_slots, steps, start, busy, steps_run, link, r0, mw0, ma0, mb0, nv0, dn0, mn0, qa, ra, mwa, maa,
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
def ruler_finish_cpu(N, P, Wt, claim, link, gap, gmw, gma, gmb, near, near_dist, gmn, ee, er, r, mw, ma, mb, nv, dn,
                  mn, path_id, position, length, removed_lo):
    """Twin of the CUDA ``ruler_finish``, given level 0, the slots' path ends and the scan's
    last level's windows (as the launcher spreads them; their ``r``, ``mw`` and ``mn`` are
    not read)."""
    for v in prange(N):
        c = claim[v]
        cut = -1
        if c >> 32 == RULER_TAG:
            s = 2 * (c & 0xFFFFFFFF)
            if ee[s] < 0:
                cut = s
            e0, d0 = _beyond(s + 1, 0, ee, er, nv, dn)
            e1, d1 = _beyond(s, 0, ee, er, nv, dn)
        elif c != CLAIM_FREE:
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
                if edge_less(w, x, y, bw, a, b):
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


class RulingCpuLauncher:
    """Runs the ruling-set kernels as their Numba twins (for tests and CPU use)."""

    xp = np
    funcs = {"ruler_mark": ruler_mark_cpu, "ruler_walk": ruler_walk_cpu, "ruler_link": ruler_link_cpu,
             "ruler_scan": ruler_scan_cpu, "ruler_finish": ruler_finish_cpu,
             "scatter_permutation": scatter_permutation_cpu, "order_offsets": order_offsets_cpu,
             "order_tile_sums": order_tile_sums_cpu,
             "order_scan_tiles": order_scan_tiles_cpu, "order_place": order_place_cpu}

    def __init__(self, itype, vtype, lockstep=True):
        self.itype = np.dtype(itype)
        self.lockstep = lockstep

    def __call__(self, name, count, *args):
        if count:
            args = flat_arguments(args)
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
        """``(buffer, walk, level0)``, the storage of :meth:`RulingGpuLauncher.walk_slots` as one
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
