"""precond: algebraic (block) tridiagonal preconditioners from linear forests.

Setup once, apply many; usable as ``M=`` in ``scipy.sparse.linalg.bicgstab`` (CPU) and
``cupyx.scipy.sparse.linalg.bicgstab`` (GPU). The factor and forest they are built from
are those of :mod:`kernels.factor` and :mod:`kernels.forest`, exported here for matrices.

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022.
"""
from kernels.version import __version__

__all__: list[str] = ["__version__"]

from .ilu import ILU0Precond, ILUTPrecond, ilu0, ilut
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
    "ILU0Precond",
    "ilu0",
    "ILUTPrecond",
    "ilut",
    "bicgstab",
    "solve",
    "SolveResult",
]

from .amg import AMGPrecond, amg, change_smoothers

__all__ += ["AMGPrecond", "amg", "change_smoothers"]

from kernels.factor import Factor, factor, greedy_factor, identity_coverage, weight_coverage
from kernels.forest import LinearForest, linear_forest

from .warmup import warm_up

__all__ += ["Factor", "LinearForest", "factor", "greedy_factor", "weight_coverage", "identity_coverage", "linear_forest",
            "warm_up"]
