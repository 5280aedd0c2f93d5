"""Maximal independent sets: ECL-MIS (paper 003) and the random-permutation baseline.

Both algorithms are deterministic: given the priorities (a hash of the vertex id and the
seed), the result equals the sequential greedy that visits vertices by decreasing
(priority, id). The CPU versions compute exactly that greedy (Numba); the GPU versions run
the parallel algorithms (``kernels/cuda/mis.cu``) and reach the same fixed point.

ECL-MIS priorities: ``f = d_avg / (d_avg + d(v) - rand(v))`` with ``rand`` in [0, 1)
from 24 hash bits, scaled to the odd byte values 1..253 (0 = out, 254 = in).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .hashing import hash32_array

__all__ = ["ecl_priorities", "luby_priorities", "greedy_mis_cpu", "ecl_mis_gpu", "luby_mis_gpu"]

IN, OUT = 254, 0


def ecl_priorities(indptr, seed=0):
    """Odd byte priorities of ECL-MIS (isolated vertices get ``IN``), float32 like the GPU."""
    n = len(indptr) - 1
    deg = np.diff(indptr).astype(np.float32)
    avg = np.float32((indptr[-1] / n) if n else 0.0)
    r = (hash32_array(np.arange(n), 0, seed) >> np.uint64(8)).astype(np.float32) * np.float32(1.0 / 16777216.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = avg / ((avg + deg) - r)
    p = np.clip((f * np.float32(126.0)).astype(np.int64), 0, 126)
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


def _persistent_blocks(kernel, threads):
    import cupy

    dev = cupy.cuda.Device()
    sms = dev.attributes["MultiProcessorCount"]
    try:
        func = getattr(kernel, "kernel", kernel)  # RawKernel -> cupy.cuda.function.Function
        per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(func.ptr, threads, 0)
    except Exception:  # noqa: BLE001 - older CuPy: a conservative residency
        per_sm = 1
    return max(1, sms * max(1, per_sm))


def ecl_mis_gpu(indptr, indices, seed=0):
    """ECL-MIS on the GPU (CuPy CSR arrays); returns the boolean membership array (CuPy)."""
    import cupy

    from .cuda import get_kernel

    n = len(indptr) - 1
    itype = indices.dtype
    status = cupy.empty(n, dtype=np.uint8)
    avg = np.float32(int(indptr[-1]) / n) if n else np.float32(0)
    threads = 256
    get_kernel("mis", "ecl_init", itype)(((n + threads - 1) // threads,), (threads,),
                                         (itype.type(n), indptr, avg, np.uint32(seed), status))
    kernel = get_kernel("mis", "ecl_mis", itype)
    # persistent threads: never more blocks than can be resident (the kernel spins)
    blocks = min(_persistent_blocks(kernel, threads), max(1, (n + threads - 1) // threads))
    kernel((blocks,), (threads,), (itype.type(n), indptr, indices, status))
    return status == IN


def luby_mis_gpu(indptr, indices, seed=0, check_every=4):
    """Random-permutation baseline with synchronous rounds; returns membership and rounds."""
    import cupy

    from .cuda import get_kernel

    n = len(indptr) - 1
    itype = indices.dtype
    prio = cupy.asarray(luby_priorities(n, seed))
    state = cupy.zeros(n, dtype=np.uint8)
    undecided = cupy.zeros(1, dtype=np.int32)
    select = get_kernel("mis", "luby_select", itype)
    exclude = get_kernel("mis", "luby_exclude", itype)
    threads = 256
    blocks = max(1, min((n + threads - 1) // threads, 65535 * 4))
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
