"""Preconditioner objects: setup once, apply many.

Every preconditioner has ``shape``, ``dtype``, ``matvec(x)`` (returns a new array, no
host synchronization on the GPU), ``aslinearoperator()`` (a SciPy or cupyx
``LinearOperator`` matching the backend, with explicit dtype), ``setup_time`` (a dict of
the setup phases in seconds) and a readable ``repr``. The backend follows the matrix:
SciPy in, NumPy vectors; cupyx in, CuPy vectors.
"""
from __future__ import annotations

import time
import warnings

import numpy as np

from kernels.backend import get_array_module, is_device_array, sparse_linalg_module, sparse_module

__all__ = ["Preconditioner", "JacobiPrecond", "jacobi", "check_matrix"]


def check_matrix(A):
    """Validate a square sparse matrix of a floating (or complex) dtype; return CSR."""
    xp = get_array_module(A)
    sps = sparse_module(xp)
    if not sps.issparse(A):
        raise TypeError(f"expected a scipy.sparse or cupyx.scipy.sparse matrix, got {type(A).__name__}")
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"matrix must be square, got shape {A.shape}")
    if A.shape[0] == 0:
        raise ValueError("matrix is empty")
    if np.dtype(A.dtype).kind not in "fc":
        raise TypeError(f"matrix dtype must be floating point, got {A.dtype}")
    A = A.tocsr()
    if not bool(xp.isfinite(A.data).all()):
        raise ValueError("matrix has NaN or infinite entries")
    return A


class Preconditioner:
    """Base class: holds backend, shape, dtype and the setup-time breakdown."""

    def __init__(self, A):
        self.shape = A.shape
        self.dtype = np.dtype(A.dtype)
        self.xp = get_array_module(A)
        self.on_gpu = is_device_array(A)
        self.setup_time: dict[str, float] = {}

    def _check_vector(self, x):
        if x.shape[0] != self.shape[0]:
            raise ValueError(f"vector of length {x.shape[0]} does not match preconditioner of size {self.shape[0]}")
        if get_array_module(x) is not self.xp:
            raise TypeError("vector and preconditioner live on different devices")

    def matvec(self, x):
        """Apply the preconditioner ``M^{-1} x``; returns a new array."""
        raise NotImplementedError

    def __call__(self, x):
        return self.matvec(x)

    def aslinearoperator(self):
        """The preconditioner as a SciPy / cupyx ``LinearOperator`` with explicit dtype."""
        spla = sparse_linalg_module(self.xp)
        return spla.LinearOperator(self.shape, matvec=self.matvec, dtype=self.dtype)

    @property
    def total_setup_time(self) -> float:
        return float(sum(self.setup_time.values()))

    def _describe(self) -> str:
        return ""

    def __repr__(self) -> str:
        device = "gpu" if self.on_gpu else "cpu"
        extra = self._describe()
        return (f"<{type(self).__name__} {self.shape[0]}x{self.shape[1]} {self.dtype} on {device}"
                f"{', ' + extra if extra else ''}, setup {self.total_setup_time * 1e3:.1f} ms>")


def _safe_inverse_diagonal(d, xp, what="diagonal"):
    """1/d with zero (or non-finite) entries replaced by 1, warning when that happens."""
    bad = (d == 0) | ~xp.isfinite(d)
    n_bad = int(bad.sum())
    if n_bad:
        warnings.warn(f"{n_bad} zero {what} entr{'y' if n_bad == 1 else 'ies'}: using 1 there", stacklevel=3)
        d = xp.where(bad, 1, d)
    return 1 / d


class JacobiPrecond(Preconditioner):
    """Diagonal (Jacobi) preconditioner ``M = diag(A)``."""

    def __init__(self, A):
        t0 = time.perf_counter()
        A = check_matrix(A)
        super().__init__(A)
        self.inv_diag = _safe_inverse_diagonal(A.diagonal(), self.xp)
        self.setup_time = {"diagonal": time.perf_counter() - t0}

    def matvec(self, x):
        self._check_vector(x)
        return self.inv_diag * x if x.ndim == 1 else self.inv_diag[:, None] * x


def jacobi(A) -> JacobiPrecond:
    """Jacobi preconditioner of a sparse matrix (SciPy or cupyx).

    Examples
    --------
    >>> import matrices, precond, scipy.sparse.linalg as spla
    >>> A = matrices.poisson2d(16)
    >>> M = precond.jacobi(A)
    >>> x, info = spla.bicgstab(A, A @ (0 * A.diagonal() + 1), M=M.aslinearoperator(), rtol=1e-8)
    >>> info
    0
    """
    return JacobiPrecond(A)
