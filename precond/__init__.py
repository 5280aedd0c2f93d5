"""precond: algebraic (block) tridiagonal preconditioners from linear forests.

Setup once, apply many; usable as ``M=`` in ``scipy.sparse.linalg.bicgstab`` (CPU) and
``cupyx.scipy.sparse.linalg.bicgstab`` (GPU).
"""

__all__: list[str] = []

from .krylov import SolveResult, bicgstab, solve
from .preconditioners import (
    AlgebraicBlockTridiagonalPrecond,
    AlgebraicTridiagonalPrecond,
    JacobiPrecond,
    Preconditioner,
    TridiagonalPrecond,
    algebraic_block_tridiagonal,
    algebraic_tridiagonal,
    jacobi,
    tridiagonal,
)

__all__ += [
    "Preconditioner",
    "JacobiPrecond",
    "TridiagonalPrecond",
    "AlgebraicTridiagonalPrecond",
    "AlgebraicBlockTridiagonalPrecond",
    "jacobi",
    "tridiagonal",
    "algebraic_tridiagonal",
    "algebraic_block_tridiagonal",
    "bicgstab",
    "solve",
    "SolveResult",
]

from .factor import Factor, LinearForest, factor, greedy_factor, identity_coverage, linear_forest, weight_coverage

__all__ += ["Factor", "LinearForest", "factor", "greedy_factor", "weight_coverage", "identity_coverage", "linear_forest"]
