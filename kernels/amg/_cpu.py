"""CPU twins (Numba) of the kernels of ``kernels/cuda/amg.cu`` that the CPU cycle and the
pairwise set-up need: the same loops, the same order of the sums."""
from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

__all__ = ["strength_weights", "strength_mirror", "residual_restrict", "ordered_product"]


@njit(cache=True, inline="always")
def _scaled_coupling(a, di, dj):
    """|a_ij| / sqrt(|a_ii a_jj|), or |a_ij| where a_ii a_jj = 0 (``scaled_coupling``)."""
    dd = di * dj
    mag = -a if a < 0 else a
    if dd == 0:
        return mag
    return mag / np.sqrt(-dd if dd < 0 else dd)


@njit(cache=True, parallel=True)
def _strength_weights(indptr, indices, data, diag, theta, w):
    for r in prange(len(indptr) - 1):
        row = np.int64(r)
        begin, end = indptr[row], indptr[row + 1]
        di = diag[row]
        largest = data[0] * 0
        for e in range(begin, end):
            j = indices[e]
            if j == row:
                continue
            s = _scaled_coupling(data[e], di, diag[j])
            if s > largest:
                largest = s
        bound = theta * largest
        for e in range(begin, end):
            j = indices[e]
            s = data[0] * 0
            if j != row:
                s = _scaled_coupling(data[e], di, diag[j])
                if not (s >= bound and s > 0):
                    s = data[0] * 0
            w[e] = s


def strength_weights(indptr, indices, data, diag, theta):
    """Twin of ``strength_weights`` in amg.cu: the strong scaled couplings of each row
    (``theta`` relative to the row's largest), on ``A``'s pattern, 0 elsewhere."""
    w = np.empty_like(data)
    if len(data):
        _strength_weights(indptr, indices, data, diag, data.dtype.type(theta), w)
    return w


@njit(cache=True)
def _strength_mirror(indptr, indices, w, out, flags):
    for i in range(len(indptr) - 1):
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            if j == i:
                out[e] = 0
                continue
            f = indptr[j] + np.searchsorted(indices[indptr[j]:indptr[j + 1]], i)
            if f < indptr[j + 1] and indices[f] == i:
                if w[e] != w[f]:
                    flags[1] = 1
                out[e] = w[e] + w[f]
            else:
                if w[e] != 0:
                    flags[0] = 1
                out[e] = w[e]


def strength_mirror(indptr, indices, w):
    """Twin of ``strength_mirror`` in amg.cu: ``(out, flags)``, ``out[e] = w_ij + w_ji`` on
    the pattern (0 on the diagonal), ``flags`` [a nonzero weight without a mirror entry,
    some ``w_ij != w_ji``]."""
    out = np.empty_like(w)
    flags = np.zeros(2, dtype=np.uint32)
    if len(w):
        _strength_mirror(indptr, indices, w, out, flags)
    return out, flags


@njit(cache=True)
def _residual_restrict(members, indptr, indices, data, x, b, use_x, bc):
    width = members.shape[1]
    for c in range(members.shape[0]):
        total = b[0] * 0
        for k in range(width):
            m = members[c, k]
            if m < 0:
                continue
            s = b[0] * 0
            if use_x:
                for e in range(indptr[m], indptr[m + 1]):
                    s += data[e] * x[indices[e]]
            total += b[m] - s
        bc[c] = total


def residual_restrict(members, A, x, b):
    """Twin of ``residual_restrict``: ``bc[c] = sum over the members m of c of (b - A x)[m]``
    (``x`` None: zero)."""
    bc = np.empty(members.shape[0], dtype=b.dtype)
    use_x = x is not None
    _residual_restrict(members, A.indptr, A.indices, A.data, x if use_x else b, b, use_x, bc)
    return bc


@njit(cache=True, parallel=True)
def _ordered_product(n_cols, Ap, Aj, Ax, Bp, Bj, Bx, counts, Cp, Cj, Cx, zero, fill, tasks):
    n = len(Ap) - 1
    size = (n + tasks - 1) // tasks
    for task in prange(tasks):  # a dense accumulator per task
        sums = np.zeros(n_cols, dtype=Ax.dtype)
        seen = np.full(n_cols, -1, dtype=np.int64)
        touched = np.empty(n_cols, dtype=np.int64)
        for row in range(task * size, min(n, (task + 1) * size)):
            m = 0
            for e in range(Ap[row], Ap[row + 1]):
                k = Aj[e]
                a = Ax[e]
                for f in range(Bp[k], Bp[k + 1]):
                    j = Bj[f]
                    if seen[j] != row:
                        seen[j] = row
                        sums[j] = zero
                        touched[m] = j
                        m += 1
                    sums[j] = sums[j] + a * Bx[f]  # two roundings (Numba does not contract them)
            cols = np.sort(touched[:m])
            written = 0
            for t in range(m):
                j = cols[t]
                if sums[j] != 0:
                    if fill:
                        Cj[Cp[row] + written] = j
                        Cx[Cp[row] + written] = sums[j]
                    written += 1
            if not fill:
                counts[row] = written


def ordered_product(n_cols, Ap, Aj, Ax, Bp, Bj, Bx, counts, Cp, Cj, Cx):
    """Twin of the ``ordered_product`` kernel of amg.cu (one pass of the CSR product
    ``A B``; see :func:`kernels.amg.product.ordered_product`): ``counts`` given, the
    entries of each row of the product are counted into it; else they are written into
    ``Cj``, ``Cx`` from ``Cp[row]``. Each entry receives its terms in the order of the row
    of ``A``, from zero, as in the kernel; where the kernel finds the columns of a row by
    merging (no per-thread memory), this loop accumulates them in a dense array per task
    and sorts the columns it touched (SciPy's way, and its cost)."""
    fill = counts is None
    itype, vt = Aj.dtype, Ax.dtype
    none_i, none_v = np.zeros(0, dtype=itype), np.zeros(0, dtype=vt)
    tasks = max(1, min(len(Ap) - 1, 4 * numba.get_num_threads()))
    if fill:
        _ordered_product(itype.type(n_cols), Ap, Aj, Ax, Bp, Bj, Bx, none_i, Cp, Cj, Cx, vt.type(0), True, tasks)
    else:
        _ordered_product(itype.type(n_cols), Ap, Aj, Ax, Bp, Bj, Bx, counts, none_i, none_i, none_v, vt.type(0), False,
                         tasks)
