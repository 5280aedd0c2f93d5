"""Incomplete LU preconditioners: ILU(0) and the threshold ILU (ILUT) of SciPy's ``spilu``.

The classical peers of the tridiagonal preconditioners. ILU(0): ``M = L U`` with ``L`` and
``U`` on the sparsity pattern of ``A``, no pivoting; its set-up is one sequential
elimination (CPU) or cuSPARSE's level-scheduled ``csrilu02`` (GPU). ILUT: SuperLU's ILUTP
(threshold dropping, fill limit, pivoting) on the host, for matrices on either backend.
Each apply is two sparse triangular solves, sequential by nature (levels on the GPU),
where the tridiagonal preconditioners' solves are parallel.
"""
from __future__ import annotations

from kernels.ilu0 import ILU0
from kernels.ilut import ILUT
from kernels.validation import validate_matrix

from .preconditioners import Preconditioner

__all__ = ["ILU0Precond", "ILUTPrecond", "ilu0", "ilut"]


class _IncompleteLU(Preconditioner):
    """An apply through ``self.factorization.solve`` (set by the subclass with ``nnz``)."""

    def matvec(self, x):
        self._check_vector(x)
        return self.factorization.solve(x)

    def _describe(self):
        return f"nnz(L+U) {self.nnz}"


class ILU0Precond(_IncompleteLU):
    """ILU(0) preconditioner: ``M^{-1} x = U^{-1} L^{-1} x`` (SciPy in: Numba on the CPU;
    cupyx in: cuSPARSE ``csrilu02`` and ``SpSM`` on the GPU).

    Attributes
    ----------
    factorization : kernels.ilu0.ILU0
        The factors (``factorization.factors()`` gives ``L`` and ``U`` as SciPy CSR).
    nnz : int
        Stored entries of ``L + U`` (those of ``A``: no fill-in).
    """

    def __init__(self, A):
        # sorted, unique indices: the pattern ILU(0) keeps
        A = validate_matrix(A, canonical="make", what="ILU(0)")
        super().__init__(A)
        self.factorization = ILU0(A, clock=self._clock)
        self.nnz = self.factorization.nnz


def ilu0(A) -> ILU0Precond:
    """ILU(0) preconditioner of a square sparse matrix (SciPy: CPU; cupyx: GPU).

    Raises ``ValueError`` when a diagonal entry is missing or a pivot is zero: ILU(0)
    does not pivot.

    Examples
    --------
    >>> import numpy as np, matrices, precond
    >>> A = matrices.aniso1(32)
    >>> M = precond.ilu0(A)
    >>> res = precond.solve(A, A @ np.ones(A.shape[0]), M, rtol=1e-8)
    >>> res.converged, M.nnz == A.nnz
    (True, True)

    References
    ----------
    Y. Saad, "Iterative Methods for Sparse Linear Systems", 2nd ed., SIAM, 2003, Sec. 10.3.
    M. Naumov, "Parallel incomplete-LU and Cholesky factorization in the preconditioned
    iterative methods on the GPU", NVIDIA Technical Report NVR-2012-003, 2012.
    """
    return ILU0Precond(A)


class ILUTPrecond(_IncompleteLU):
    """Threshold ILU preconditioner: ``M^{-1} x = Pc U^{-1} L^{-1} Pr x`` from SciPy's
    ``spilu`` (SuperLU's ILUTP), factorized on the host; on the GPU the two triangular
    solves run on the device with their analysis done once.

    Attributes
    ----------
    factorization : kernels.ilut.ILUT
        The factors (``factorization.factors()`` gives ``L``, ``U``, ``perm_r``, ``perm_c``).
    nnz : int
        Stored entries of ``L + U`` (fill-in included, ``L``'s unit diagonal not).
    """

    def __init__(self, A, drop_tol=1e-4, fill_factor=10.0):
        A = validate_matrix(A, canonical="make", what="ILUT")
        super().__init__(A)
        self.factorization = ILUT(A, drop_tol=drop_tol, fill_factor=fill_factor, clock=self._clock)
        self.nnz = self.factorization.nnz


def ilut(A, drop_tol=1e-4, fill_factor=10.0) -> ILUTPrecond:
    """Threshold incomplete LU preconditioner (SciPy's ``spilu``; SciPy: CPU, cupyx: GPU).

    The factorization runs on the host in both cases (as ``cupyx.scipy.sparse.linalg.spilu``
    does); with a cupyx matrix the factors move to the device once and each apply is two
    cuSPARSE triangular solves whose level analysis is not repeated per call.

    Parameters
    ----------
    A : sparse matrix
        Square, SciPy or cupyx.
    drop_tol, fill_factor : float
        As in :func:`scipy.sparse.linalg.spilu` (same defaults); ``drop_tol >= 0`` and
        ``fill_factor >= 1``, else ``ValueError`` (SuperLU aborts or hangs below that).

    Examples
    --------
    >>> import numpy as np, matrices, precond
    >>> A = matrices.aniso2(32)
    >>> res = precond.solve(A, A @ np.ones(A.shape[0]), precond.ilut(A), rtol=1e-8)
    >>> res.converged, res.iterations < precond.solve(A, A @ np.ones(A.shape[0]), precond.ilu0(A), rtol=1e-8).iterations
    (True, True)

    References
    ----------
    Y. Saad, "ILUT: a dual threshold incomplete LU factorization", Numerical Linear
    Algebra with Applications 1 (1994) 387-402.
    X. S. Li and M. Shao, "A supernodal approach to incomplete LU factorization with
    partial pivoting", ACM Transactions on Mathematical Software 37 (2011) 43:1-43:20.
    """
    return ILUTPrecond(A, drop_tol=drop_tol, fill_factor=fill_factor)
