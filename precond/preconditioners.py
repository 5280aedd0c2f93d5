"""Preconditioner objects: setup once, apply many.

Every preconditioner has ``shape``, ``dtype``, ``matvec(x)`` (returns a new array, no
host synchronization on the GPU), ``aslinearoperator()`` (a SciPy or cupyx
``LinearOperator`` matching the backend, with explicit dtype), ``setup_time`` (a dict of
the setup phases in seconds, after input validation; on the GPU measured with CUDA events,
so the set-up never waits for the device between phases) and a readable ``repr``. The backend follows the matrix:
SciPy in, NumPy vectors; cupyx in, CuPy vectors.

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Sections 4.3-4.4.
"""
from __future__ import annotations

import warnings
from functools import cached_property
from typing import Any

import numpy as np

from kernels.backend import get_array_module, is_device_array, sparse_linalg_module, zero_pool
from kernels.factor import factor, identity_coverage, weight_coverage
from kernels.forest import forest_of_factor, linear_forest_arrays
from kernels.graph import contract_pairs
from kernels.timing import PhaseClock
from kernels.tridiag import (BlockTridiagonalSolver, TridiagonalSolver, extract_block_tridiagonal, extract_tridiagonal,
                             partner_entries)
from kernels.validation import validate_matrix

__all__ = [
    "Preconditioner",
    "JacobiPrecond",
    "TridiagonalPrecond",
    "AlgebraicTridiagonalPrecond",
    "AlgebraicBlockTridiagonalPrecond",
    "jacobi",
    "tridiagonal",
    "algebraic_tridiagonal",
    "algebraic_block_tridiagonal",
]


class Preconditioner:
    """Base class: holds backend, shape, dtype and the setup-time breakdown."""

    def __init__(self, A, clock=None):
        self.shape = A.shape
        self.dtype = np.dtype(A.dtype)
        self.xp = get_array_module(A)
        self.on_gpu = is_device_array(A)
        # subclasses mark the end of each set-up phase (``clock``: one started before)
        self._clock = PhaseClock(self.on_gpu) if clock is None else clock

    @property
    def setup_time(self) -> dict[str, float]:
        """Seconds per set-up phase (read once the set-up has run on the device)."""
        return self._clock.spans

    def _check_vector(self, x):
        if x.shape[0] != self.shape[0]:
            raise ValueError(f"vector of length {x.shape[0]} does not match preconditioner of size {self.shape[0]}")
        if get_array_module(x) is not self.xp:
            raise TypeError("vector and preconditioner live on different devices")

    def matvec(self, x) -> Any:
        """Apply the preconditioner ``M^{-1} x``; returns a new array."""
        raise NotImplementedError

    def __call__(self, x):
        return self.matvec(x)

    def aslinearoperator(self) -> Any:
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


class _FactorizedPrecond(Preconditioner):
    """A preconditioner applied through a factorized (block) tridiagonal ``self.solver``."""

    def matvec(self, x):
        self._check_vector(x)
        return self.solver.solve(x)

    @property
    def negative_pivots(self) -> int:
        """Pivots of the factorization with a negative real part (for a symmetric system:
        its negative eigenvalues); see :class:`kernels.tridiag.TridiagonalSolver`."""
        return self.solver.negative_pivots

    @property
    def indefinite(self) -> bool:
        """Whether the factorized system's pivots and diagonal differ in sign count: for an
        SPD matrix, a tridiagonal part that is not definite (Klein and Strzodka (2022) assume it is), on
        which BiCGStab may stall (bcsstk25: 289 negative pivots in the forest's order)."""
        return self.solver.negative_pivots != self.solver.negative_diagonal

    def _warn_indefinite(self, name):
        """Warn when the factorized system is :attr:`indefinite`."""
        if self.indefinite:
            neg, diag = self.solver.negative_pivots, self.solver.negative_diagonal
            warnings.warn(
                f"{name}: the factorized system has {neg} negative pivot(s) where its diagonal has {diag} "
                f"negative entr{'y' if diag == 1 else 'ies'}: it is indefinite where its diagonal is not (for a "
                f"symmetric matrix: {neg} negative eigenvalue(s)), and the Krylov solver may stall with this "
                f"preconditioner; jacobi(A) keeps the signs of the diagonal",
                RuntimeWarning,
                stacklevel=4,
            )


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
        A = validate_matrix(A)
        super().__init__(A)
        self.inv_diag = _safe_inverse_diagonal(A.diagonal(), self.xp)
        self._clock.mark("diagonal")

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


class TridiagonalPrecond(_FactorizedPrecond):
    """TriScalPrecond: the tridiagonal part of ``A`` in its original ordering, factorized once."""

    def __init__(self, A):
        A = validate_matrix(A)
        super().__init__(A)
        dl, d, du = extract_tridiagonal(A)
        self._clock.mark("extract")
        with zero_pool(self.on_gpu):
            self.solver = TridiagonalSolver(dl, d, du)
        self._clock.mark("factorize")
        self._warn_indefinite("TriScal")
        self.weight_coverage = identity_coverage(A)
        self.n_paths = 1

    def _describe(self):
        return f"coverage {self.weight_coverage:.2f}"


def _best_factor(A, n, m, **kw):
    """``m="auto"``: try m=1 and m=5, keep the factor of higher weight coverage."""
    if m != "auto":
        return factor(A, n=n, m=m, **kw), m
    best = None
    for m_try in (1, 5):
        f = factor(A, n=n, m=m_try, **kw)
        c = weight_coverage(A, f)
        if best is None or c > best[2]:
            best = (f, m_try, c)
    return best[0], best[1]


class AlgebraicTridiagonalPrecond(_FactorizedPrecond):
    """AlgTriScalPrecond: [0,2]-factor -> linear forest -> permutation -> tridiagonal
    coefficients from ``A`` (one pass over its entries, run during the forest, then a gather
    into the forest's order, on the GPU by the factorization itself) -> factorized once;
    apply = permute, solve, unpermute."""

    def __init__(self, A, *, iterations=5, m=5, k_m=0, p=0.5, seed=0):
        A = validate_matrix(A, finite=False)  # the factor tests the entries in its first round
        gpu = is_device_array(A)
        # The device idles until the factor's first kernels are queued: only the clock, which
        # must start before them, comes first; the base class's state follows them.
        clock = PhaseClock(gpu)
        with zero_pool(gpu):  # the set-up's counters and flags: one memset
            f, self.m = _best_factor(A, 2, m, iterations=iterations, k_m=k_m, p=p, seed=seed, entries=True,
                                     timed=False)
            super().__init__(A, clock)
            clock.mark("factor")
            # the extraction's entries of A: recorded by the GPU's factor rounds where the
            # factor is on A itself; else a pass over A, which needs the factor only, queued
            # while the forest's host waits for a count (its time is then in "forest", the
            # gather into the forest's order in "factorize")
            recorded = None if f.matrix_entries is None else (f.matrix_entries[0], f.weights, f.matrix_entries[1])
            entries = []
            self.forest = forest_of_factor(f, overlap=None if recorded is not None else
                                           lambda: entries.append(partner_entries(A, f.neighbors)))
            clock.mark("forest")
            self.solver = TridiagonalSolver.from_forest(A, self.forest.permutation, f.neighbors,
                                                        entries=entries[0] if entries else None,
                                                        factor_entries=recorded, wait=False)
        clock.mark("factorize")
        self._A = A
        del f, recorded, entries  # freed (to CuPy's pool) while the device factorizes
        self.solver.finish()  # the set-up's last wait, for the pivot counts
        self._warn_indefinite("AlgTriScal")

    @property
    def n_paths(self) -> int:
        """Paths of the linear forest (counted on first access)."""
        return self.forest.n_paths

    @cached_property
    def weight_coverage(self) -> float:
        """c_pi of the forest (Eq. 3-4), computed on first access: a diagnostic that would
        otherwise cost a third of the GPU setup."""
        return weight_coverage(self._A, self.forest)

    def _describe(self):
        return f"{self.n_paths} paths, coverage {self.weight_coverage:.2f}"


class AlgebraicBlockTridiagonalPrecond(_FactorizedPrecond):
    """AlgTriBlockPrecond: [0,1]-factor (matching) -> matched pairs coarsened to one vertex
    -> [0,2]-factor and linear forest of the coarse graph -> 2x2 block tridiagonal system
    on the fine graph (unmatched vertices padded with an uncoupled ghost equation, diagonal
    1 and right-hand side 1, as in Klein and Strzodka (2022)) -> factorized once (block Thomas on the CPU;
    on the GPU the partitioned 2x2 block solver of ``kernels.tridiag``). Every step runs on
    the backend of ``A``."""

    def __init__(self, A, *, iterations=5, m=5, k_m=0, p=0.5, seed=0):
        A = validate_matrix(A)
        super().__init__(A)
        clock = self._clock
        with zero_pool(self.on_gpu):  # the set-up's counters and flags: one memset
            # the matching reads A itself where |A| - diag(A) is symmetric (its first round tests
            # that), and the coarsening the same weights: no weight graph is built then
            f1, self.m = _best_factor(A, 1, m, iterations=iterations, k_m=k_m, p=p, seed=seed, validated=True,
                                      timed=False)
            # block members: (smaller, larger) of a pair, or (vertex, ghost -1)
            W, from_matrix = f1.weight_source()
            Wc, _, members = contract_pairs(W, f1.neighbors[:, 0], check=False, from_matrix=from_matrix)  # a matching
            clock.mark("matching+coarsen")
            # symmetry tested, not assumed: a coarse weight sums up to four fine weights, and the
            # two rows of a coarse edge add them in different orders (last-bit differences)
            f2 = factor(Wc, n=2, iterations=iterations, m=self.m, k_m=k_m, p=p, seed=seed, validated=True, timed=False)
            coarse = linear_forest_arrays(f2.neighbors, f2.weights)
            cperm, starts = coarse.permutation, coarse.path_start
            clock.mark("coarse forest")
            index = members[cperm]  # block k of the system = coarse vertex cperm[k]
            # every row in one block (a pair or a vertex and a ghost), the paths in order
            L, D, U, self.weight_coverage = extract_block_tridiagonal(A, index, starts, check=False)
            self.n_blocks = Wc.shape[0]
            self.n_paths = len(starts) - 1
            self.n_ghosts = self.n_blocks - (A.shape[0] - self.n_blocks)  # N = 2 * pairs + singles
            clock.mark("extract")
            self.solver = BlockTridiagonalSolver(L, D, U, index)
        clock.mark("factorize")
        self._warn_indefinite("AlgTriBlock")

    def _describe(self):
        return f"{self.n_blocks} blocks ({self.n_ghosts} ghosts), {self.n_paths} paths, coverage {self.weight_coverage:.2f}"


def tridiagonal(A) -> TridiagonalPrecond:
    """TriScalPrecond: tridiagonal part of ``A`` in the original ordering (baseline).

    Examples
    --------
    >>> import matrices, precond
    >>> M = precond.tridiagonal(matrices.aniso1(30))
    >>> round(M.weight_coverage, 2)
    0.67
    """
    return TridiagonalPrecond(A)


def algebraic_tridiagonal(A, *, iterations: int = 5, m: int | str = 5, k_m: int = 0, p: float = 0.5,
                          seed: int = 0) -> AlgebraicTridiagonalPrecond:
    """AlgTriScalPrecond of Klein and Strzodka (SciPy in: CPU; cupyx in: GPU).

    Parameters
    ----------
    A : sparse matrix, square
    iterations, m, k_m, p, seed :
        Parameters of the [0,2]-factor (see :func:`precond.factor`); ``m="auto"`` tries
        m=1 and m=5 and keeps the higher weight coverage.

    Examples
    --------
    >>> import matrices, precond
    >>> A = matrices.aniso2(64)
    >>> M = precond.algebraic_tridiagonal(A)
    >>> res = precond.solve(A, A @ np.ones(A.shape[0]), M, rtol=1e-8)
    >>> res.converged, round(M.weight_coverage, 2)
    (True, 0.67)
    """
    return AlgebraicTridiagonalPrecond(A, iterations=iterations, m=m, k_m=k_m, p=p, seed=seed)


def algebraic_block_tridiagonal(A, *, iterations: int = 5, m: int | str = 5, k_m: int = 0, p: float = 0.5,
                                seed: int = 0) -> AlgebraicBlockTridiagonalPrecond:
    """AlgTriBlockPrecond of Klein and Strzodka: 2x2 block tridiagonal preconditioner (SciPy in: CPU;
    cupyx in: GPU).

    Examples
    --------
    >>> import matrices, precond
    >>> A = matrices.elasticity2d(16)
    >>> M = precond.algebraic_block_tridiagonal(A)
    >>> M.n_blocks <= A.shape[0]
    True
    """
    return AlgebraicBlockTridiagonalPrecond(A, iterations=iterations, m=m, k_m=k_m, p=p, seed=seed)
