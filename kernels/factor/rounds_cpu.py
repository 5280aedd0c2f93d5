"""The CPU twin of the parallel factor's rounds (Algorithm 2 of Klein and Strzodka, 2022).

In each round every unsaturated vertex proposes its best admissible edges (a generalized
SpMV that keeps the ``n`` largest ``(weight, -column)`` pairs of its row,
:func:`propose_cpu`), then the proposals that are not mutual are dropped
(:func:`confirm_cpu`). Numba, parallel over the rows; the same factor as the CUDA rounds
of :mod:`kernels.factor.rounds_gpu` (``kernels/cuda/factor.cu``).

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Algorithm 2.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..hashing import hash32
from ..matrix import MatrixCheck, check_flags

__all__ = ["MAX_N", "propose_cpu", "confirm_cpu", "factor_rounds_cpu"]

#: The largest number of partners per vertex: the proposals' accumulators are this long.
MAX_N = 4


@njit(cache=True, parallel=True)
def propose_cpu(indptr, indices, data, partners, count, prop, prop_w, n_max, k, seed, charging, threshold, absval,
                rows):
    """Each unsaturated row of ``rows`` keeps its best admissible columns in a small sorted
    accumulator (twin of the CUDA ``propose``).

    ``absval``: ``data`` is the matrix itself (weights ``|a_ij|``, zeros skipped)."""
    for r in prange(len(rows)):
        v = rows[r]
        for s in range(n_max):
            prop[v, s] = -1
            prop_w[v, s] = 0
        room = n_max - count[v]
        if room <= 0:
            continue
        qv = hash32(v, k, seed) < threshold
        acc_w = np.zeros(MAX_N, dtype=data.dtype)
        acc_j = -np.ones(MAX_N, dtype=np.int64)
        filled = 0
        for e in range(indptr[v], indptr[v + 1]):
            j = indices[e]
            if j == v or count[j] >= n_max:
                continue
            if charging and (hash32(j, k, seed) < threshold) == qv:
                continue
            already = False
            for s in range(count[v]):
                if partners[v, s] == j:
                    already = True
            if already:
                continue
            w = abs(data[e]) if absval else data[e]
            if w == 0:
                continue
            # insert (w, j) if better than the current worst; better = larger w, then smaller j
            if filled < room:
                pos = filled
                filled += 1
            elif w > acc_w[room - 1] or (w == acc_w[room - 1] and j < acc_j[room - 1]):
                pos = room - 1
            else:
                continue
            while pos > 0 and (w > acc_w[pos - 1] or (w == acc_w[pos - 1] and j < acc_j[pos - 1])):
                acc_w[pos] = acc_w[pos - 1]
                acc_j[pos] = acc_j[pos - 1]
                pos -= 1
            acc_w[pos] = w
            acc_j[pos] = j
        for s in range(filled):
            prop[v, s] = acc_j[s]
            prop_w[v, s] = acc_w[s]


@njit(cache=True, parallel=True)
def confirm_cpu(prop, prop_w, partners, weights, count, n_max, rows):
    """Keep the mutual proposals of ``rows``; returns the number of proposals made (before
    confirmation)."""
    proposed = 0
    for r in prange(len(rows)):
        v = rows[r]
        c = count[v]
        for s in range(n_max):
            w = prop[v, s]
            if w < 0:
                continue
            proposed += 1
            mutual = False
            for t in range(n_max):
                if prop[w, t] == v:
                    mutual = True
            if mutual:
                partners[v, c] = w
                weights[v, c] = prop_w[v, s]
                c += 1
        count[v] = c
    return proposed


def factor_rounds_cpu(W, n, iterations, m, k_m, seed, threshold, absval, check=False):
    """The rounds on the CPU: ``(partners, weights, proposed, check)`` with ``proposed[k]``
    the proposals made in round ``k`` and ``check`` a :class:`kernels.matrix.MatrixCheck`
    of ``W`` (``check=True``; else None). Arguments as :func:`kernels.factor.factor_rounds`
    takes them, checked by the caller (``threshold``: :func:`kernels.factor.charge_threshold`'s)."""
    indptr, indices, data = W.indptr, W.indices, W.data
    N = W.shape[0]
    checked = MatrixCheck(check_flags(W)) if check else None  # the GPU fuses it into the first proposal
    partners = -np.ones((N, n), dtype=np.int64)
    weights = np.zeros((N, n), dtype=data.dtype)
    count = np.zeros(N, dtype=np.int64)
    prop = np.empty((N, n), dtype=np.int64)
    prop_w = np.empty((N, n), dtype=data.dtype)
    proposed = np.zeros(iterations, dtype=np.uint64)  # per round: proposals confirmed
    rows = np.arange(N, dtype=np.int64)
    for k in range(iterations):
        charging = (k % m) != k_m
        propose_cpu(indptr, indices, data, partners, count, prop, prop_w, n, k, seed, charging, threshold, absval,
                    rows)
        proposed[k] = confirm_cpu(prop, prop_w, partners, weights, count, n, rows)
        # later rounds visit the rows left open: saturated rows stay saturated and nobody
        # proposes to them, so their stale proposals are never read
        rows = np.flatnonzero(count < n) if k == 0 else rows[count[rows] < n]
        if proposed[k] == 0 and not charging:
            break
    return partners, weights, proposed, checked
