"""Maximal independent sets: ECL-MIS (Burtscher et al., 2018) and the random-permutation baseline.

Both algorithms are deterministic: given the priorities (a hash of the vertex id and the
seed), the result equals the sequential greedy that visits vertices by decreasing
(priority, id). The GPU versions run the parallel algorithms (``kernels/cuda/mis.cu``);
the CPU versions (:func:`ecl_mis_cpu`, :func:`luby_mis_cpu`) run the same relaxation on
one thread (Numba) and reach the same fixed point; :func:`greedy_mis_cpu` is the sorted
greedy, kept as the reference the tests compare with.

Also here: :func:`two_improve_cpu` ((1,2)-swap local search, an extra beyond the paper).

ECL-MIS priorities: ``f = d_avg / (d_avg + d(v) - rand(v))`` with ``rand`` in [0, 1)
from 24 hash bits, scaled by 126 and rounded to the nearest integer p, stored as the odd
byte 2p + 1 in 1..253 (0 = out, 254 = in).

References
----------
.. [1] M. Burtscher, S. Devale, S. Azimi, J. Jaiganesh and E. Powers, "A High-Quality and
   Fast Maximal Independent Set Implementation for GPUs", ACM Transactions on Parallel
   Computing 5(2), 2018.
.. [2] M. Luby, "A Simple Parallel Algorithm for the Maximal Independent Set Problem",
   SIAM Journal on Computing 15(4), 1986 (the random-permutation baseline).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .backend import device_attributes
from .hashing import hash32_array

__all__ = ["ecl_priorities", "luby_priorities", "greedy_mis_cpu", "ecl_mis_cpu", "luby_mis_cpu", "ecl_mis_gpu",
           "luby_mis_gpu", "two_improve_cpu"]

IN, OUT = 254, 0


def ecl_priorities(indptr, seed=0):
    """Odd byte priorities of ECL-MIS (isolated vertices get ``IN``), float32 like the GPU."""
    n = len(indptr) - 1
    deg = np.diff(indptr).astype(np.float32)
    avg = np.float32((indptr[-1] / n) if n else 0.0)
    r = (hash32_array(np.arange(n), 0, seed) >> np.uint64(8)).astype(np.float32) * np.float32(1.0 / 16777216.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = avg / ((avg + deg) - r)
    p = np.clip(np.rint(f * np.float32(126.0)).astype(np.int64), 0, 126)  # round to nearest, as the paper
    prio = (2 * p + 1).astype(np.uint8)
    prio[deg == 0] = IN
    return prio, avg


def luby_priorities(n, seed=0):
    """Uniform 32-bit priorities of the random-permutation baseline."""
    return hash32_array(np.arange(n), 1, seed).astype(np.uint32)


@njit(cache=True)
def _greedy(indptr, indices, order):
    n = len(indptr) - 1
    state = np.zeros(n, dtype=np.uint8)  # 0 undecided, 1 in, 2 out
    for v in order:
        if state[v] != 0:
            continue
        state[v] = 1
        for e in range(indptr[v], indptr[v + 1]):
            state[indices[e]] = 2
    return state == 1


def greedy_mis_cpu(indptr, indices, prio):
    """Greedy MIS by decreasing (priority, vertex id): the fixed point of both GPU algorithms."""
    n = len(indptr) - 1
    key = (prio.astype(np.uint64) << np.uint64(32)) | np.arange(n, dtype=np.uint64)
    order = np.argsort(key)[::-1].astype(np.int64)
    return _greedy(indptr, indices, order)


_RESIDENT = {}


def _persistent_blocks(kernel, key, threads):
    """Blocks of ``threads`` that fit on the device at once (cached: queried once per kernel)."""
    import cupy

    dev = cupy.cuda.runtime.getDevice()
    cached = _RESIDENT.get((dev, key, threads))
    if cached is not None:
        return cached
    sms = device_attributes()["MultiProcessorCount"]
    try:
        func = getattr(kernel, "kernel", kernel)  # RawKernel -> cupy.cuda.function.Function
        per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(func.ptr, threads, 0)
    except Exception:  # noqa: BLE001 - older CuPy: a conservative residency
        per_sm = 1
    blocks = _RESIDENT[(dev, key, threads)] = max(1, sms * max(1, per_sm))
    return blocks


def _average_degree(indptr, nnz):
    n = len(indptr) - 1
    if nnz is None:
        nnz = int(indptr[-1])  # one device-to-host copy; callers that know it pass nnz
    return np.float32(nnz / n) if n else np.float32(0)


def ecl_mis_gpu(indptr, indices, seed=0, nnz=None, status=None, skip_decided=True):
    """ECL-MIS on the GPU (CuPy CSR arrays); returns the boolean membership array (CuPy).

    ``nnz`` (= ``indptr[-1]``, the number of stored neighbours) avoids a device-to-host
    copy when given. With ``status`` (a CuPy uint8 array of length n), the final byte
    status (254 = in, 0 = out) is left there and returned instead of the membership. The
    call launches two kernels and never synchronizes with the host. ``skip_decided``
    (default) selects the kernel variant that writes "out" only to still undecided
    neighbours: the same set as the paper's variant (``False``), and faster (fewer
    stores; see ``kernels/cuda/mis.cu``).
    """
    import cupy

    from .nvrtc import get_kernel

    n = len(indptr) - 1
    itype = indices.dtype
    out_status = status is not None
    if status is None:
        status = cupy.empty(n, dtype=np.uint8)
    elif status.dtype != np.uint8 or status.shape != (n,):
        raise ValueError("status must be a uint8 array of length n")
    if n == 0:
        return status if out_status else cupy.zeros(0, dtype=bool)
    avg = _average_degree(indptr, nnz)
    threads = 256
    get_kernel("mis", "ecl_init", itype)(((n + threads - 1) // threads,), (threads,),
                                         (itype.type(n), indptr, avg, np.uint32(seed), status))
    kernel = get_kernel("mis", "ecl_mis", itype)
    # persistent threads: never more blocks than can be resident (the kernel spins)
    blocks = min(_persistent_blocks(kernel, ("ecl_mis", itype.str), threads), (n + threads - 1) // threads)
    kernel((blocks,), (threads,), (itype.type(n), indptr, indices, status, np.int32(bool(skip_decided))))
    return status if out_status else status == IN


def luby_mis_gpu(indptr, indices, seed=0, check_every=4):
    """Random-permutation baseline with synchronous rounds; returns membership and rounds."""
    import cupy

    from .nvrtc import get_kernel

    n = len(indptr) - 1
    itype = indices.dtype
    if n == 0:
        return cupy.zeros(0, dtype=bool), 0
    threads = 256
    blocks = max(1, min((n + threads - 1) // threads, 65535 * 4))
    prio = cupy.empty(n, dtype=np.uint32)  # the same hash as luby_priorities, computed on the device
    get_kernel("mis", "luby_init", itype)((blocks,), (threads,), (itype.type(n), np.uint32(seed), prio))
    state = cupy.zeros(n, dtype=np.uint8)
    undecided = cupy.zeros(1, dtype=np.int32)
    select = get_kernel("mis", "luby_select", itype)
    exclude = get_kernel("mis", "luby_exclude", itype)
    rounds = 0
    while True:
        undecided.fill(0)
        for _ in range(check_every):
            select((blocks,), (threads,), (itype.type(n), indptr, indices, prio, state, undecided))
            exclude((blocks,), (threads,), (itype.type(n), indptr, indices, state))
            rounds += 1
        if int(undecided[0]) == 0:  # host check every few rounds
            break
    return state == 1, rounds


# --------------------------------------------------------------------------- fast CPU paths
@njit(cache=True)
def _relax(indptr, indices, status):
    """ECL-MIS on one thread: the GPU kernel's chaotic relaxation with one sweeping "thread".

    ``status`` holds odd priorities (undecided), 0 (out) or 254 (in) and is updated in place.
    A vertex joins when no neighbour has a larger status (ties: larger id wins); it then
    marks its neighbours out. Sweeps repeat until every vertex is decided; because a sweep
    sees the updates of earlier vertices at once, few sweeps are needed.
    """
    n = len(indptr) - 1
    todo = np.empty(n, dtype=np.int64)
    k = 0
    for v in range(n):
        if status[v] & 1:
            todo[k] = v
            k += 1
    while k:
        kept = 0
        for t in range(k):
            v = todo[t]
            s = status[v]
            if not (s & 1):
                continue
            best = True
            for e in range(indptr[v], indptr[v + 1]):
                u = indices[e]
                su = status[u]
                if su > s or (su == s and u > v):
                    best = False
                    break
            if best:
                for e in range(indptr[v], indptr[v + 1]):
                    status[indices[e]] = OUT
                status[v] = IN
            else:
                todo[kept] = v
                kept += 1
        k = kept
    return status


@njit(cache=True)
def _relax_keys(indptr, indices, prio):
    """The same relaxation with 32-bit priorities and a separate state (random-permutation baseline)."""
    n = len(indptr) - 1
    state = np.zeros(n, dtype=np.uint8)  # 0 undecided, 1 in, 2 out
    todo = np.arange(n)
    k = n
    while k:
        kept = 0
        for t in range(k):
            v = todo[t]
            if state[v] != 0:
                continue
            pv = prio[v]
            best = True
            for e in range(indptr[v], indptr[v + 1]):
                u = indices[e]
                if state[u] != 2 and (prio[u] > pv or (prio[u] == pv and u > v)):
                    best = False
                    break
            if best:
                state[v] = 1
                for e in range(indptr[v], indptr[v + 1]):
                    state[indices[e]] = 2
            else:
                todo[kept] = v
                kept += 1
        k = kept
    return state == 1


def ecl_mis_cpu(indptr, indices, seed=0):
    """ECL-MIS on the CPU (Numba): the same priorities and fixed point as :func:`ecl_mis_gpu`.

    Returns the boolean membership array. Equal to ``greedy_mis_cpu(indptr, indices,
    ecl_priorities(indptr, seed)[0])`` (tested), without the sort.
    """
    status, _ = ecl_priorities(indptr, seed)
    return _relax(indptr, indices, status) == IN


def luby_mis_cpu(indptr, indices, seed=0):
    """Random-permutation baseline on the CPU: membership equal to :func:`luby_mis_gpu`'s."""
    return _relax_keys(indptr, indices, luby_priorities(len(indptr) - 1, seed))


# --------------------------------------------------------------------------- local search (extra)
@njit(cache=True)
def _insert(v, indptr, indices, inset, tight):
    inset[v] = True
    for e in range(indptr[v], indptr[v + 1]):
        tight[indices[e]] += 1


@njit(cache=True)
def _two_improve(indptr, indices, inset):
    """(1,2)-swaps (Andrade, Resende, Werneck's 2-improvement) until none applies.

    ``tight[v]`` counts v's neighbours in the set. A set vertex x with two non-adjacent
    neighbours u, w whose only set neighbour is x is replaced by u and w, then the free
    vertices around x are added (lowest id first). Set vertices whose neighbourhood
    changed are queued again, so the result admits no further swap. Deterministic.
    Returns the number of swaps; ``inset`` is updated in place.
    """
    n = len(indptr) - 1
    tight = np.zeros(n, dtype=np.int64)
    for v in range(n):
        if inset[v]:
            for e in range(indptr[v], indptr[v + 1]):
                tight[indices[e]] += 1
    queue = np.empty(n, dtype=np.int64)  # ring buffer; queued[] keeps each vertex at most once
    queued = np.zeros(n, dtype=np.bool_)
    head = 0
    size = 0
    for v in range(n):
        if inset[v]:
            queue[size] = v
            queued[v] = True
            size += 1
    mark = np.zeros(n, dtype=np.int64)
    stamp = 0
    cand = np.empty(n, dtype=np.int64)
    swaps = 0
    while size:
        x = queue[head]
        head = (head + 1) % n
        size -= 1
        queued[x] = False
        if not inset[x]:
            continue
        k = 0
        for e in range(indptr[x], indptr[x + 1]):
            u = indices[e]
            if tight[u] == 1:
                cand[k] = u
                k += 1
        if k < 2:
            continue
        pu = -1
        pw = -1
        for i in range(k - 1):
            u = cand[i]
            stamp += 1
            for e in range(indptr[u], indptr[u + 1]):
                mark[indices[e]] = stamp
            for j in range(i + 1, k):
                if mark[cand[j]] != stamp:
                    pu = u
                    pw = cand[j]
                    break
            if pu >= 0:
                break
        if pu < 0:
            continue
        swaps += 1
        inset[x] = False
        for e in range(indptr[x], indptr[x + 1]):
            tight[indices[e]] -= 1
        _insert(pu, indptr, indices, inset, tight)
        _insert(pw, indptr, indices, inset, tight)
        for e in range(indptr[x], indptr[x + 1]):
            z = indices[e]
            if not inset[z] and tight[z] == 0:
                _insert(z, indptr, indices, inset, tight)
        # requeue: the new set vertices and the set neighbours of vertices that became 1-tight
        for e in range(indptr[x], indptr[x + 1]):
            z = indices[e]
            s = -1
            if inset[z]:
                s = z
            elif tight[z] == 1:
                for f in range(indptr[z], indptr[z + 1]):
                    if inset[indices[f]]:
                        s = indices[f]
                        break
            if s >= 0 and not queued[s]:
                queue[(head + size) % n] = s
                queued[s] = True
                size += 1
    return swaps


def two_improve_cpu(indptr, indices, member):
    """Improve an independent set by (1,2)-swaps (CPU, Numba); returns ``(member, swaps)``.

    ``member`` (boolean, not modified) must be an independent set; the result is a maximal
    independent set admitting no (1,2)-swap, at least as large as a maximal ``member``.
    """
    inset = np.array(member, dtype=np.bool_, copy=True)
    swaps = _two_improve(indptr, indices, inset)
    return inset, int(swaps)
