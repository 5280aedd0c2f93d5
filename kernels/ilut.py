"""Threshold incomplete LU (SuperLU's ILUTP through SciPy's ``spilu``) on the CPU and GPU.

The factorization always runs on the host: SciPy's ``spilu`` (SuperLU's ILUTP: threshold
dropping, a fill limit, partial pivoting and a column ordering), which gives
``Pr A Pc ~ L U``. On the CPU its own ``solve`` applies ``M^{-1}``. On the GPU ``L`` and
``U`` move to the device once and ``M^{-1} b = Pc U^{-1} L^{-1} Pr b`` runs as two
cuSPARSE triangular solves whose analysis is done once
(:class:`kernels.triangular.DeviceTriangularPair`); ``cupyx.scipy.sparse.linalg.spilu``
repeats that analysis on every solve, which made it tens of times slower per apply.

References
----------
Y. Saad, "ILUT: a dual threshold incomplete LU factorization", Numerical Linear Algebra
with Applications 1 (1994) 387-402.
X. S. Li and M. Shao, "A supernodal approach to incomplete LU factorization with partial
pivoting", ACM Transactions on Mathematical Software 37 (2011) 43:1-43:20.
"""
from __future__ import annotations

import numpy as np

__all__ = ["ILUT"]


def _check_options(drop_tol, fill_factor):
    """SuperLU takes any float here, but a fill factor of zero or below aborts the
    interpreter, and one far below 1 can loop forever: refuse what is not a finite
    ``drop_tol >= 0`` and ``fill_factor >= 1``."""
    for name, value, low in (("drop_tol", drop_tol, 0.0), ("fill_factor", fill_factor, 1.0)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not np.isfinite(value) or value < low:
            raise ValueError(f"{name} must be a finite number >= {low:g}, got {value!r}")


class ILUT:
    """SciPy's ``spilu`` factors of a square sparse matrix and their solve, on the
    matrix's backend (SciPy sparse in: SuperLU's solve; cupyx sparse in: the factors on
    the device, triangular-solve analysis done once).

    Parameters
    ----------
    A : scipy.sparse or cupyx.scipy.sparse matrix
        Square, floating or complex, finite entries (callers validate).
    drop_tol, fill_factor : float
        As in ``scipy.sparse.linalg.spilu`` (same defaults); ``drop_tol >= 0`` and
        ``fill_factor >= 1`` (SuperLU aborts or hangs below that), else ``ValueError``.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[4., 1, 0], [1, 4, 1], [0, 1, 4]]))
    >>> np.allclose(ILUT(A).solve(A @ np.ones(3)), 1)
    True
    """

    def __init__(self, A, drop_tol=1e-4, fill_factor=10.0, clock=None):
        import scipy.sparse.linalg as spla

        _check_options(drop_tol, fill_factor)

        from .backend import is_device_array

        self.shape = A.shape
        self.on_gpu = is_device_array(A)
        host = A.get() if self.on_gpu else A
        self.superlu = spla.spilu(host.tocsc(), drop_tol=drop_tol, fill_factor=fill_factor)
        self.dtype = np.dtype(self.superlu.L.dtype)
        self.nnz = int(self.superlu.L.nnz + self.superlu.U.nnz - A.shape[0])  # L's unit diagonal is stored
        if clock is not None:
            clock.mark("factorize")
        if self.on_gpu:
            import cupy
            import cupyx.scipy.sparse as csp

            from .triangular import DeviceTriangularPair

            def device(M):
                M = M.tocsr()
                M.sum_duplicates()
                D = csp.csr_matrix((cupy.asarray(M.data), cupy.asarray(M.indices.astype(np.int32)),
                                    cupy.asarray(M.indptr.astype(np.int32))), shape=M.shape)
                D.has_canonical_format = True
                return D

            self._pair = DeviceTriangularPair(device(self.superlu.L), device(self.superlu.U))
            self._perm_r = cupy.asarray(self.superlu.perm_r)
            self._perm_c = cupy.asarray(self.superlu.perm_c)
            if clock is not None:
                clock.mark("analysis")

    def solve(self, b):
        """``M^{-1} b`` for a vector (or an ``n x k`` block) on the factors' backend."""
        if not self.on_gpu:
            return self.superlu.solve(b)
        import cupy

        y = cupy.empty(b.shape, dtype=cupy.result_type(self.dtype, b.dtype))
        y[self._perm_r] = b  # Pr b
        return self._pair.solve(y)[self._perm_c]  # Pc (U^{-1} L^{-1} Pr b)

    def factors(self):
        """``(L, U, perm_r, perm_c)`` on the host, with ``Pr A Pc ~ L U`` as in SciPy."""
        return self.superlu.L, self.superlu.U, self.superlu.perm_r, self.superlu.perm_c
