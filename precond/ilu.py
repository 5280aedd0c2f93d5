"""ILU(0), the incomplete LU factorization with zero fill-in, as a preconditioner.

The classical peer of the tridiagonal preconditioners: ``M = L U`` with ``L`` and ``U``
on the sparsity pattern of ``A``, no pivoting. Its set-up is one sequential elimination
(CPU) or cuSPARSE's level-scheduled ``csrilu02`` (GPU), and each apply is two sparse
triangular solves, sequential by nature (levels on the GPU), where the tridiagonal
preconditioners' solves are parallel.
"""
from __future__ import annotations

from kernels.ilu0 import ILU0
from kernels.validation import validate_matrix

from .preconditioners import Preconditioner

__all__ = ["ILU0Precond", "ilu0"]


class ILU0Precond(Preconditioner):
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

    def matvec(self, x):
        self._check_vector(x)
        return self.factorization.solve(x)

    def _describe(self):
        return f"nnz(L+U) {self.nnz}"


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
