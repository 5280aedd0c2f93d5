"""Sparse triangular solves on the GPU with the analysis done once.

An incomplete-LU preconditioner applies ``U^{-1} L^{-1}`` hundreds of times with the same
factors. cuSPARSE's triangular solve (``SpSM``) splits into an analysis of the factor's
dependency levels and a solve; ``cupyx.cusparse.spsm`` runs both on every call, and the
analysis costs several solves. :class:`DeviceTriangularPair` runs it once per factor on
two fixed device buffers, so an apply is two copies, two zero fills and two solves.

References
----------
M. Naumov, "Parallel solution of sparse triangular linear systems in the preconditioned
iterative methods on the GPU", NVIDIA Technical Report NVR-2011-001, 2011.
"""
from __future__ import annotations

import numpy as np

__all__ = ["DeviceTriangularPair"]


class DeviceTriangularPair:
    """``U^{-1} L^{-1} b`` on the GPU for fixed sparse factors, ``SpSM`` analysed once.

    Parameters
    ----------
    L, U : cupyx.scipy.sparse.csr_matrix
        Lower and upper triangular factors of one square shape and dtype, canonical
        (sorted, unique indices), int32 indices, every diagonal entry stored (cuSPARSE's
        non-unit solve reads it: store a unit diagonal as ones).

    Examples
    --------
    >>> import cupy, cupyx.scipy.sparse as csp  # doctest: +SKIP
    >>> L = csp.csr_matrix(cupy.array([[2., 0], [1, 1]]))  # doctest: +SKIP
    >>> U = csp.csr_matrix(cupy.array([[1., 1], [0, 4]]))  # doctest: +SKIP
    >>> DeviceTriangularPair(L, U).solve(cupy.array([2., 5]))  # doctest: +SKIP
    array([0., 1.])

    References
    ----------
    M. Naumov, "Parallel solution of sparse triangular linear systems in the
    preconditioned iterative methods on the GPU", NVIDIA Technical Report
    NVR-2011-001, 2011.
    """

    def __init__(self, L, U):
        import cupy
        import cupyx.cusparse as cusparse
        from cupy._core import _dtype
        from cupy_backends.cuda.libs import cusparse as _cusparse

        if not cusparse.check_availability("spsm"):
            raise RuntimeError("sparse triangular solves on the GPU need cuSPARSE's SpSM, not available here")
        if L.shape != U.shape or L.shape[0] != L.shape[1] or L.dtype != U.dtype:
            raise ValueError(f"factors of different shapes or dtypes: {L.shape} {L.dtype}, {U.shape} {U.dtype}")
        n = L.shape[0]
        self.L, self.U, self.dtype, self.shape = L, U, np.dtype(L.dtype), L.shape
        self._x = cupy.zeros((n, 1), dtype=self.dtype, order="F")
        self._y = cupy.zeros((n, 1), dtype=self.dtype, order="F")
        self._alpha = np.ones(1, dtype=self.dtype)  # host scalar read by every solve
        self._cuda_dtype = _dtype.to_cuda_dtype(self.dtype)
        self._op = _cusparse.CUSPARSE_OPERATION_NON_TRANSPOSE
        self._algo = _cusparse.CUSPARSE_SPSM_ALG_DEFAULT
        self._lib = _cusparse
        self._dense = {key: cusparse.DnMatDescriptor.create(a) for key, a in (("x", self._x), ("y", self._y))}
        self._plans = []
        handle = cupy.cuda.device.get_cusparse_handle()
        for M, lower, src, dst in ((L, True, "x", "y"), (U, False, "y", "x")):
            mat = cusparse.SpMatDescriptor.create(M)
            mat.set_attribute(_cusparse.CUSPARSE_SPMAT_FILL_MODE,
                              _cusparse.CUSPARSE_FILL_MODE_LOWER if lower else _cusparse.CUSPARSE_FILL_MODE_UPPER)
            mat.set_attribute(_cusparse.CUSPARSE_SPMAT_DIAG_TYPE, _cusparse.CUSPARSE_DIAG_TYPE_NON_UNIT)
            descr = _cusparse.spSM_createDescr()
            self._plans.append((mat, descr, None, src, dst))  # registered first: __del__ frees it on failure
            size = _cusparse.spSM_bufferSize(handle, self._op, self._op, self._alpha.ctypes.data, mat.desc,
                                             self._dense[src].desc, self._dense[dst].desc, self._cuda_dtype,
                                             self._algo, descr)
            work = cupy.empty(max(int(size), 1), dtype=np.int8)
            _cusparse.spSM_analysis(handle, self._op, self._op, self._alpha.ctypes.data, mat.desc,
                                    self._dense[src].desc, self._dense[dst].desc, self._cuda_dtype, self._algo,
                                    descr, work.data.ptr)
            self._plans[-1] = (mat, descr, work, src, dst)

    def _solve_column(self, b):
        import cupy

        buffers = {"x": self._x, "y": self._y}
        self._x[:, 0] = b
        handle = cupy.cuda.device.get_cusparse_handle()
        for mat, descr, work, src, dst in self._plans:
            buffers[dst].fill(0)  # SpSM's output must start at zero
            self._lib.spSM_solve(handle, self._op, self._op, self._alpha.ctypes.data, mat.desc,
                                 self._dense[src].desc, self._dense[dst].desc, self._cuda_dtype, self._algo,
                                 descr, work.data.ptr)
        return self._x[:, 0].astype(cupy.result_type(self.dtype, b.dtype), copy=True)

    def solve(self, b):
        """``U^{-1} L^{-1} b`` for a device vector or an ``n x k`` block (column by column)."""
        import cupy

        if b.ndim == 1:
            return self._solve_column(b)
        out = cupy.empty(b.shape, dtype=cupy.result_type(self.dtype, b.dtype))
        for j in range(b.shape[1]):
            out[:, j] = self._solve_column(b[:, j])
        return out

    def __del__(self):
        for plan in getattr(self, "_plans", ()):
            try:
                self._lib.spSM_destroyDescr(plan[1])
            except Exception:  # noqa: BLE001 - at interpreter exit the library may be gone
                pass
