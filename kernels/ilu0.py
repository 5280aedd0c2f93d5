"""Incomplete LU factorization with zero fill-in, ILU(0), and its two triangular solves.

ILU(0) computes ``A ~ L U`` with ``L`` unit lower triangular and ``U`` upper triangular,
both restricted to the sparsity pattern of ``A`` (every stored entry, explicit zeros
included), without pivoting or reordering. The factors are unique, so the CPU (Numba,
row-by-row IKJ elimination) and the GPU (cuSPARSE ``csrilu02``) compute the same numbers up
to rounding. Both store ``L`` and ``U`` in one CSR array over the pattern of ``A``: the
strictly lower part holds ``L`` (its unit diagonal is implicit), the rest ``U``.

A diagonal entry missing from the pattern, or a pivot ``u_ii`` that is zero or not finite,
raises ``ValueError`` naming the row (SciPy's ``spilu`` raises on an exactly singular
factor too).

References
----------
Y. Saad, "Iterative Methods for Sparse Linear Systems", 2nd ed., SIAM, 2003, Sec. 10.3.2
(Algorithm 10.4, ILU(0) in IKJ order).
M. Naumov, "Parallel incomplete-LU and Cholesky factorization in the preconditioned
iterative methods on the GPU", NVIDIA Technical Report NVR-2012-003, 2012.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .matrix import csr_position

__all__ = ["ILU0", "ilu0_factor", "ilu0_solve"]


@njit(cache=True)
def _diagonal_positions(indptr, indices, diag):
    """``diag[i]``: position of ``a_ii`` in row ``i`` (sorted indices); returns the first
    row without a diagonal entry, or -1."""
    for i in range(len(indptr) - 1):
        p = csr_position(indptr, indices, i, i)
        if p < 0:
            return i
        diag[i] = p
    return -1


@njit(cache=True)
def _factor_ikj(indptr, indices, lu, diag):
    """ILU(0) in place on ``lu`` (a copy of A's values, sorted rows). Returns the first row
    whose pivot is zero or not finite, else -1."""
    n = len(indptr) - 1
    where = np.full(n, -1, dtype=np.int64)  # column -> position in the current row
    for i in range(n):
        lo, hi = indptr[i], indptr[i + 1]
        for p in range(lo, hi):
            where[indices[p]] = p
        for p in range(lo, diag[i]):  # the row's entries left of the diagonal, in order
            k = indices[p]
            l_ik = lu[p] / lu[diag[k]]
            lu[p] = l_ik
            for q in range(diag[k] + 1, indptr[k + 1]):  # row i -= l_ik * (row k of U)
                t = where[indices[q]]
                if t >= 0:
                    lu[t] -= l_ik * lu[q]
        for p in range(lo, hi):
            where[indices[p]] = -1
        pivot = abs(lu[diag[i]])
        if not (pivot > 0 and pivot < np.inf):  # zero, NaN or infinite
            return i
    return -1


@njit(cache=True)
def _solve_lu(indptr, indices, lu, diag, b, out):
    """``out = U^{-1} L^{-1} b``: forward substitution with the unit lower factor, then
    backward substitution with the upper one."""
    n = len(indptr) - 1
    for i in range(n):
        s = b[i]
        for p in range(indptr[i], diag[i]):
            s -= lu[p] * out[indices[p]]
        out[i] = s
    for i in range(n - 1, -1, -1):
        s = out[i]
        for p in range(diag[i] + 1, indptr[i + 1]):
            s -= lu[p] * out[indices[p]]
        out[i] = s / lu[diag[i]]


def _zero_pivot(row, value=None) -> ValueError:
    what = "is missing from the matrix's pattern" if value is None else "is zero or not finite"
    return ValueError(f"ILU(0): the pivot u[{row},{row}] {what}; the factorization without pivoting "
                      "does not exist for this matrix (reorder it, or use another preconditioner)")


def ilu0_factor(indptr, indices, data):
    """ILU(0) of a square CSR matrix with sorted, unique column indices (CPU).

    Parameters
    ----------
    indptr, indices, data : ndarray
        CSR arrays; ``data`` is not modified.

    Returns
    -------
    lu : ndarray
        ``L`` (strictly lower part, unit diagonal implicit) and ``U`` (diagonal and upper
        part) over the pattern of ``A``, aligned with ``indices``.
    diag : ndarray of int64
        Position of each row's diagonal entry in ``lu``.

    Raises
    ------
    ValueError
        A diagonal entry is missing, or a pivot is zero or not finite.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[4., 1, 0], [1, 4, 1], [0, 1, 4]]))
    >>> lu, diag = ilu0_factor(A.indptr, A.indices, A.data)
    >>> np.round(lu[diag], 4)  # pivots
    array([4.    , 3.75  , 3.7333])
    """
    indptr = np.asarray(indptr)
    indices = np.asarray(indices)
    lu = np.array(data, copy=True)
    diag = np.empty(len(indptr) - 1, dtype=np.int64)
    missing = _diagonal_positions(indptr, indices, diag)
    if missing >= 0:
        raise _zero_pivot(missing)
    bad = _factor_ikj(indptr, indices, lu, diag)
    if bad >= 0:
        raise _zero_pivot(bad, lu[diag[bad]])
    return lu, diag


def ilu0_solve(indptr, indices, lu, diag, b):
    """Apply ``(L U)^{-1}`` to ``b`` (1-D, or 2-D column by column) on the CPU.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[4., 1, 0], [1, 4, 1], [0, 1, 4]]))  # tridiagonal: ILU(0) is exact
    >>> lu, diag = ilu0_factor(A.indptr, A.indices, A.data)
    >>> x = ilu0_solve(A.indptr, A.indices, lu, diag, A @ np.array([1., 2, 3]))
    >>> np.allclose(x, [1, 2, 3])
    True
    """
    b = np.asarray(b)
    out = np.empty(b.shape, dtype=np.result_type(lu.dtype, b.dtype))
    if b.ndim == 1:
        _solve_lu(indptr, indices, lu, diag, b, out)
    else:
        for j in range(b.shape[1]):
            column = np.empty(b.shape[0], dtype=out.dtype)
            _solve_lu(indptr, indices, lu, diag, np.ascontiguousarray(b[:, j]), column)
            out[:, j] = column
    return out


class ILU0:
    """ILU(0) factors of a square sparse matrix and their solve, on the matrix's backend.

    CPU (SciPy CSR in): Numba factorization and substitutions. GPU (cupyx CSR in):
    cuSPARSE ``csrilu02`` through ``cupyx.cusparse``, then ``L`` (with its unit diagonal
    stored) and ``U`` as two CSR matrices whose cuSPARSE triangular-solve analysis
    (``SpSM``) runs once here; :meth:`solve` reuses it on two fixed device buffers.

    ``A`` must be CSR with sorted, unique indices, of a floating or complex dtype, with
    finite entries (callers validate).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[4., 1, 0], [1, 4, 1], [0, 1, 4]]))
    >>> f = ILU0(A)
    >>> np.allclose(f.solve(A @ np.ones(3)), 1)
    True
    """

    def __init__(self, A, clock=None):
        from .backend import is_device_array

        self.shape = A.shape
        self.dtype = np.dtype(A.dtype)
        self.nnz = int(A.nnz)
        self.on_gpu = is_device_array(A)
        if self.on_gpu:
            self._gpu = _CusparseILU0(A, clock)
        else:
            self.indptr, self.indices = A.indptr, A.indices
            self.lu, self.diag = ilu0_factor(A.indptr, A.indices, A.data)
            if clock is not None:
                clock.mark("factorize")

    def solve(self, b):
        """``(L U)^{-1} b`` for a vector (or an ``n x k`` block) on the factors' backend."""
        if self.on_gpu:
            return self._gpu.solve(b)
        return ilu0_solve(self.indptr, self.indices, self.lu, self.diag, b)

    def factors(self):
        """``(L, U)`` as host ``scipy.sparse.csr_matrix`` (``L`` with its unit diagonal)."""
        import scipy.sparse as sp

        if self.on_gpu:
            return self._gpu.L.get(), self._gpu.U.get()
        n = self.shape[0]
        rows = np.repeat(np.arange(n), np.diff(self.indptr))
        lower = self.indices < rows
        L = sp.csr_matrix((self.lu[lower], (rows[lower], self.indices[lower])), shape=self.shape)
        L = (L + sp.eye(n, dtype=self.dtype, format="csr")).tocsr()
        U = sp.csr_matrix((self.lu[~lower], (rows[~lower], self.indices[~lower])), shape=self.shape)
        L.sort_indices()
        U.sort_indices()
        return L, U


class _CusparseILU0:
    """GPU ILU(0): ``csrilu02`` in place on a copy of ``A``, the factors split into ``L``
    (unit diagonal stored, as cuSPARSE's non-unit solve reads it) and ``U``, solved by a
    :class:`kernels.triangular.DeviceTriangularPair` (``SpSM`` analysed once)."""

    def __init__(self, A, clock=None):
        import cupy
        import cupyx.cusparse as cusparse
        import cupyx.scipy.sparse as csp

        from .triangular import DeviceTriangularPair

        if not cusparse.check_availability("csrilu02"):
            raise RuntimeError("ILU(0) on the GPU needs cuSPARSE's csrilu02, not available in this CUDA/CuPy")
        n = A.shape[0]
        if A.nnz > np.iinfo(np.int32).max:
            raise ValueError(f"ILU(0) on the GPU takes at most 2**31 - 1 entries (cuSPARSE's csrilu02), got {A.nnz}")
        lu = csp.csr_matrix((A.data.copy(), A.indices.astype(np.int32), A.indptr.astype(np.int32)), shape=A.shape)
        lu.has_canonical_format = True  # the caller's A is canonical
        try:
            cusparse.csrilu02(lu)
        except ValueError as exc:  # "a(i,i) is missing" / "u(i,i) is zero"
            text = str(exc)
            row = int(text[text.index("(") + 1:text.index(",")]) if "(" in text else -1
            raise _zero_pivot(row, None if "missing" in text else 0) from None
        pivots = lu.diagonal()
        bad = ~cupy.isfinite(pivots) | (pivots == 0)  # csrilu02 reports exact zeros; NaN/inf too
        if bool(bad.any()):
            raise _zero_pivot(int(cupy.flatnonzero(bad)[0]), 0)
        if clock is not None:
            clock.mark("factorize")
        coo = lu.tocoo()
        lower = coo.col < coo.row
        diag_ones = cupy.arange(n, dtype=coo.row.dtype)
        L = csp.coo_matrix(
            (cupy.concatenate([coo.data[lower], cupy.ones(n, dtype=lu.dtype)]),
             (cupy.concatenate([coo.row[lower], diag_ones]), cupy.concatenate([coo.col[lower], diag_ones]))),
            shape=A.shape).tocsr()
        U = csp.coo_matrix((coo.data[~lower], (coo.row[~lower], coo.col[~lower])), shape=A.shape).tocsr()
        for M in (L, U):
            M.sum_duplicates()  # sorts: SpSM wants canonical CSR
        self.pair = DeviceTriangularPair(L, U)
        self.L, self.U, self.dtype = L, U, self.pair.dtype
        if clock is not None:
            clock.mark("analysis")

    def solve(self, b):
        return self.pair.solve(b)
