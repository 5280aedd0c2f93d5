"""The tridiagonal (and 2x2 block tridiagonal) part of a sparse matrix in a linear forest's
order: the coefficients the preconditioners factorize (CPU: Numba twins of the
``kernels/cuda/tridiag.cu`` extraction kernels).

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Section 4.3.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..backend import get_array_module, inverse_permutation, is_device_array, to_host
from ..nvrtc import aligned, get_kernel

__all__ = ["extract_tridiagonal", "partner_entries", "extract_block_tridiagonal", "forest_system", "launch_per_row"]


def launch_per_row(name, n, vt, itype, *args, threads=512):
    """Launches the ``tridiag.cu`` kernel ``name`` (templated on ``vt`` and ``itype``, or
    on ``itype`` alone when ``vt`` is None) with one thread per row for ``n`` rows (its
    first argument)."""

    types = (itype,) if vt is None else (vt, itype)
    get_kernel("tridiag", name, *types)(((n + threads - 1) // threads,), (threads,), (itype.type(n), *args))


@njit(cache=True, parallel=True)
def _extract_cpu(indptr, indices, data, inverse, dl, d, du):
    """Twin of the CUDA ``extract_tridiagonal``: old row i writes new row ``inverse[i]``."""
    N = len(indptr) - 1
    use_inverse = len(inverse) > 0
    for row in prange(N):
        i = np.int64(row)  # signed: the prange index may be unsigned
        k = inverse[i] if use_inverse else i
        diag = data[0] * 0
        lower = data[0] * 0
        upper = data[0] * 0
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            if j == i:
                diag += data[e]
                continue
            kj = inverse[j] if use_inverse else j
            if kj == k - 1:
                lower += data[e]
            elif kj == k + 1:
                upper += data[e]
        d[k] = diag
        dl[k] = lower
        du[k] = upper


@njit(cache=True, parallel=True)
def _partner_entries_cpu(indptr, indices, data, partners, entries):
    """Twin of the CUDA ``partner_entries``."""
    for row in prange(len(indptr) - 1):
        i = np.int64(row)
        p0, p1 = partners[i, 0], partners[i, 1]
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            if j == i:
                entries[i, 0] += data[e]
            elif j == p0:
                entries[i, 1] += data[e]
            elif j == p1:
                entries[i, 2] += data[e]


@njit(cache=True, parallel=True)
def _order_partner_entries_cpu(perm, partners, entries, dl, d, du):
    """Twin of the CUDA ``order_partner_entries`` (``perm`` empty: the original order)."""
    N = len(d)
    use_perm = len(perm) > 0
    for row in prange(N):
        k = np.int64(row)
        i = perm[k] if use_perm else k
        before = (perm[k - 1] if use_perm else k - 1) if k > 0 else -1
        after = (perm[k + 1] if use_perm else k + 1) if k + 1 < N else -1
        d[k] = entries[i, 0]
        for s in range(2):
            if before >= 0 and before == partners[i, s]:
                dl[k] = entries[i, 1 + s]
            if after >= 0 and after == partners[i, s]:
                du[k] = entries[i, 1 + s]


def partner_entries(A, partners):
    """Per row ``i`` of ``A``, its diagonal and its entries to its two partners (``N x 2``,
    -1 for none), as an ``N x 4`` array ``(a_ii, a_{i,p0}, a_{i,p1}, 0)``: the pass
    over A of :func:`extract_tridiagonal` with partners. It needs the partners only, not
    the order: the [0,2]-factor's will do, so that it runs while the forest is computed."""
    xp = get_array_module(A)
    A = A.tocsr()
    N = A.shape[0]
    if tuple(partners.shape) != (N, 2):
        raise ValueError(f"partners must have shape {(N, 2)} for a matrix of {N} rows, got {tuple(partners.shape)}")
    vt = np.dtype(A.dtype)
    if xp is np:
        entries = np.zeros((N, 4), vt)
        _partner_entries_cpu(A.indptr, A.indices, A.data, np.ascontiguousarray(partners, dtype=np.int64), entries)
        return entries

    itype = A.indices.dtype
    entries = xp.empty((N, 4), vt)  # written in full
    launch_per_row("partner_entries", N, vt, itype, A.indptr, A.indices, A.data,
                    aligned(partners, 2 * itype.itemsize, itype), entries)
    return entries


def extract_tridiagonal(A, perm=None, partners=None, *, entries=None, factor_entries=None):
    """Tridiagonal coefficients ``(dl, d, du)`` of ``A`` in the order ``perm`` (new -> old)
    (Klein and Strzodka 2022, Section 4.3).

    Without ``partners``: the tridiagonal part of ``A`` permuted by ``perm`` (default: the
    original ordering), in one pass over A's entries: A's rows are read in their own order
    and the coefficients scattered to their new rows (``perm``'s inverse).

    With ``partners`` (``N x 2``, -1 for none), only entries between partners that are
    neighbours in the order enter the off-diagonals: a linear forest's partners and
    permutation give its tridiagonal system. The partners of the [0,2]-factor the forest
    was built from give the same system (a factor edge between rows adjacent in the
    forest's order is a forest edge: a cut cycle's removed edge joins the two ends of one
    path). Two passes: :func:`partner_entries` reads A in its own order (``entries``, if
    given, is its result), then each new row gathers its old row's entries; a permutation
    that follows the columns of a grid (ANISO2) would scatter reads of A's rows, or the
    one-pass writes, over the whole matrix. ``factor_entries``, if given with the
    partners, replaces that first pass on the GPU: ``(diagonal, weights, signs)``, what a [0,2]-factor of ``A``
    itself recorded of its entries (its ``weights`` with the ``Factor.matrix_entries`` of
    :func:`precond.factor` on the GPU; ``signs``: a byte per row, bit ``3 + s`` set where
    the entry to partner ``s`` is negative), from which the new rows gather theirs.

    Arrays of the wrong shape raise ``ValueError``."""
    xp = get_array_module(A)
    A = A.tocsr()
    N = A.shape[0]
    vt = np.dtype(A.dtype)
    if partners is not None:
        if xp is np:
            _check_extract_shapes(A, perm, partners, entries, factor_entries)
            entries = partner_entries(A, partners) if entries is None else np.ascontiguousarray(entries, dtype=vt)
            dl, d, du = (np.zeros(N, vt) for _ in range(3))
            perm = np.empty(0, np.int64) if perm is None else np.ascontiguousarray(perm, dtype=np.int64)
            _order_partner_entries_cpu(perm, np.ascontiguousarray(partners, dtype=np.int64), entries, dl, d, du)
            return dl, d, du
        perm, system, vt, itype = forest_system(A, perm, partners, entries, factor_entries)
        dl, d, du = (xp.empty(N, vt) for _ in range(3))  # every row is written
        launch_per_row("order_partner_entries", N, vt, itype, perm, *system, dl, d, du)
        return dl, d, du
    _check_extract_shapes(A, perm, partners, entries, factor_entries)
    itype = np.dtype(np.int64) if xp is np else A.indices.dtype
    # the kernel's order: None (the original one), else old -> new
    inverse = None if perm is None else inverse_permutation(xp.asarray(perm), itype)
    if xp is np:
        inverse = np.empty(0, np.int64) if inverse is None else inverse
        dl, d, du = (np.zeros(N, vt) for _ in range(3))
        if A.nnz:
            _extract_cpu(A.indptr, A.indices, A.data, inverse, dl, d, du)
        return dl, d, du
    dl, d, du = (xp.empty(N, vt) for _ in range(3))  # every row is written
    launch_per_row("extract_tridiagonal", N, vt, itype, A.indptr, A.indices, A.data, inverse, dl, d, du)
    return dl, d, du


def _check_extract_shapes(A, perm, partners, entries, factor_entries):
    """The shapes of :func:`extract_tridiagonal`'s arguments (``A`` in CSR)."""
    N = A.shape[0]
    if factor_entries is not None and (partners is None or len(factor_entries) != 3):
        raise ValueError("factor_entries must be (diagonal, weights, signs), given with the factor's partners")
    recorded = zip(("diagonal", "weights", "signs"), factor_entries or (None,) * 3, ((N,), (N, 2), (N,)))
    for name, x, shape in (("perm", perm, (N,)), ("partners", partners, (N, 2)), ("entries", entries, (N, 4)),
                           *((f"factor_entries' {name}", x, shape) for name, x, shape in recorded)):
        if x is not None and tuple(x.shape) != shape:
            raise ValueError(f"{name} must have shape {shape} for a matrix of {N} rows, got {tuple(x.shape)}")
    if factor_entries is not None and not is_device_array(A):
        raise ValueError("factor_entries are recorded by the GPU's factor; on the CPU pass entries")


def forest_system(A, perm, partners, entries, factor_entries):
    """The GPU arguments of a linear forest's system (``A`` a cupyx CSR matrix, checked
    here): ``(perm, system, vt, itype)``, ``system`` the arguments of ``tridiag.cu``'s
    ``ForestSystem`` (partners, entries, weights, signs, diagonal), the entries from
    ``factor_entries`` or ``entries`` or, given neither, from :func:`partner_entries`."""

    _check_extract_shapes(A, perm, partners, entries, factor_entries)
    xp = get_array_module(A)
    vt = np.dtype(A.dtype)
    itype = A.indices.dtype
    if factor_entries is None:
        entries = partner_entries(A, partners) if entries is None else xp.ascontiguousarray(entries, dtype=vt)
        recorded = (aligned(entries, 16), None, None, None)
    else:
        diagonal, weights, signs = factor_entries
        recorded = (None, aligned(weights, 2 * vt.itemsize, vt), xp.ascontiguousarray(signs, dtype=np.uint8),
                    xp.ascontiguousarray(diagonal, dtype=vt))
    perm = None if perm is None else xp.ascontiguousarray(perm, dtype=itype)
    return perm, (aligned(partners, 2 * itype.itemsize, itype), *recorded), vt, itype


@njit(cache=True)
def _extract_blocks_cpu(indptr, indices, data, slot, path_start, L, D, U):
    """Twin of the CUDA ``block_row_entries`` and ``block_gather_rows`` in one pass (each
    row's sums in the same order)."""
    covered = 0.0
    total = 0.0
    for i in range(len(indptr) - 1):
        bi = slot[i] >> 1
        si = slot[i] & 1
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            a = data[e]
            w = abs(a) if j != i else 0.0
            total += w
            bj = slot[j] >> 1
            sj = slot[j] & 1
            if bj == bi:
                D[bi, si, sj] += a
                covered += w
            elif bj == bi - 1 and not path_start[bi]:
                L[bi, si, sj] += a
                covered += w
            elif bj == bi + 1 and not path_start[bi + 1]:
                U[bi, si, sj] += a
                covered += w
    return covered, total


def extract_block_tridiagonal(A, index, starts, *, check=True):
    """2x2 block tridiagonal part of a sparse matrix.

    Block ``k`` holds the rows ``index[k, 0]`` and ``index[k, 1]`` (-1: a ghost, whose
    equation is ``1 * x = rhs``); blocks ``starts[p]:starts[p + 1]`` form path ``p`` and
    only neighbouring blocks of one path are coupled. Returns ``(L, D, U, coverage)``:
    ``m x 2 x 2`` blocks (``L[k]`` couples block ``k`` to ``k - 1``) on the backend of
    ``A`` (Numba on the CPU; on the GPU two passes, the rows' sums by block in ``A``'s own
    order, then gathered in the blocks' order; the same values) and the fraction of the
    off-diagonal absolute weight of ``A`` that they hold.

    ``check=False`` skips the tests that ``index`` holds only row ids (or -1) and every
    row, and that ``starts`` rises from 0 to ``m`` (host synchronizations on the GPU), for
    arrays known to be valid (AlgTriBlock's own); with invalid ones the result is
    undefined. A row in two blocks is not detected either way.
    """
    xp = get_array_module(A)
    A = A.tocsr()
    if not A.has_canonical_format:  # duplicates summed first, as the weight graph does
        A = A.copy()
        A.sum_duplicates()
    N = A.shape[0]
    index = xp.asarray(index)
    starts = xp.asarray(starts)
    m = len(index)
    if check:
        if index.ndim != 2 or index.shape[1] != 2 or m == 0 or int(index.max()) >= N or int(index.min()) < -1:
            raise ValueError(f"index must be an m x 2 array of row ids in 0..{N - 1} or -1")
        if len(starts) == 0 or int(starts[0]) != 0 or int(starts[-1]) != m or bool((xp.diff(starts) < 0).any()):
            raise ValueError("starts must rise from 0 to the number of blocks")
    itype = np.dtype(np.int64) if xp is np else A.indices.dtype
    index = xp.ascontiguousarray(index, dtype=itype)
    slot = xp.full(N, -1, dtype=itype)  # slot[i] = 2 * block + position of row i
    if xp is np:
        for s in range(2):
            rows = index[:, s]
            blocks = np.flatnonzero(rows >= 0)
            slot[rows[blocks]] = 2 * blocks + s
    else:
        launch_per_row("block_slots", m, None, itype, itype.type(N), index, slot, threads=256)
    if check and bool((slot < 0).any()):
        raise ValueError("every row must belong to a block")
    path_start = xp.zeros(m + 1, dtype=np.uint8)  # whether block k begins a path (k = m: past the end)
    path_start[starts] = 1
    vt = np.dtype(A.dtype)
    if xp is np:
        L, D, U = (np.zeros((m, 2, 2), dtype=vt) for _ in range(3))
        covered, total = _extract_blocks_cpu(A.indptr, A.indices, A.data, slot, path_start, L, D, U)
        for s in range(2):  # ghosts: uncoupled, diagonal 1
            D[index[:, s] < 0, s, s] = 1
        return L, D, U, (covered / total if total else 0.0)
    record = xp.empty((N, 6), dtype=vt)  # per row: its (l, d, u) pairs, written in full
    covered, total = xp.empty(N), xp.empty(N)
    launch_per_row("block_row_entries", N, vt, itype, A.indptr, A.indices, A.data, slot, path_start, record,
                    covered, total, threads=256)
    L, D, U = (xp.empty((m, 2, 2), dtype=vt) for _ in range(3))  # every entry is written
    launch_per_row("block_gather_rows", m, vt, itype, index, record, L, D, U, threads=256)
    covered, total = (float(x) for x in to_host(xp.stack([covered.sum(), total.sum()])))
    return L, D, U, (covered / total if total else 0.0)
