"""CPU twins (Numba) of the kernels of ``kernels/cuda/amg.cu`` that the CPU cycle and the
pairwise set-up need: the same loops, the same order of the sums."""
from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["strength_weights", "residual_restrict", "ordered_product"]


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


@njit(cache=True, inline="always")
def _first_at_least(cols, lo, hi, key):
    while lo < hi:
        mid = lo + (hi - lo) // 2
        if cols[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, parallel=True)
def _ordered_product(n_cols, Ap, Aj, Ax, Bp, Bj, Bx, counts, Cp, Cj, Cx, zero, fill):
    for r in prange(len(Ap) - 1):
        row = np.int64(r)
        begin, end = Ap[row], Ap[row + 1]
        nxt = n_cols
        for e in range(begin, end):
            k = Aj[e]
            if Bp[k] < Bp[k + 1] and Bj[Bp[k]] < nxt:
                nxt = Bj[Bp[k]]
        out = Cp[row] if fill else 0
        written = 0
        while nxt < n_cols:
            j = nxt
            nxt = n_cols
            total = zero
            for e in range(begin, end):
                k = Aj[e]
                stop = Bp[k + 1]
                pos = _first_at_least(Bj, Bp[k], stop, j)
                if pos < stop and Bj[pos] == j:
                    total = total + Ax[e] * Bx[pos]  # two roundings (Numba does not contract them)
                    pos += 1
                if pos < stop and Bj[pos] < nxt:
                    nxt = Bj[pos]
            if total != 0:
                if fill:
                    Cj[out + written] = j
                    Cx[out + written] = total
                written += 1
        if not fill:
            counts[row] = written


def ordered_product(n_cols, Ap, Aj, Ax, Bp, Bj, Bx, counts, Cp, Cj, Cx):
    """Twin of the ``ordered_product`` kernel of amg.cu (one pass of the CSR product
    ``A B``; see :func:`kernels.amg.product.ordered_product`): ``counts`` given, the
    entries of each row of the product are counted into it; else they are written into
    ``Cj``, ``Cx`` from ``Cp[row]``."""
    fill = counts is None
    itype, vt = Aj.dtype, Ax.dtype
    none_i, none_v = np.zeros(0, dtype=itype), np.zeros(0, dtype=vt)
    if fill:
        _ordered_product(itype.type(n_cols), Ap, Aj, Ax, Bp, Bj, Bx, none_i, Cp, Cj, Cx, vt.type(0), True)
    else:
        _ordered_product(itype.type(n_cols), Ap, Aj, Ax, Bp, Bj, Bx, counts, none_i, none_i, none_v, vt.type(0), False)
