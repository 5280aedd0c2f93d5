"""Warm-up: compile (or load from the caches) every kernel the preconditioners and the
Krylov solver use, before anything is timed.

The first call of a Numba function in a process compiles it, or loads it from the cache
(``cache=True``: compiled once per machine into ``__pycache__``, then loaded in about a
second); the first use of a CUDA kernel compiles it with NVRTC, or loads CuPy's on-disk
cache. Neither belongs in a reported set-up or solve time: call :func:`warm_up` once per
process first (the convergence study does the same per case with an untimed set-up and
a short solve).
"""
from __future__ import annotations

import time

import numpy as np

from kernels.backend import resolve_device, to_device

__all__ = ["warm_up"]


def warm_up(device: str = "auto", dtypes=(np.float64,), grid: int = 100) -> float:
    """Set up every preconditioner and run a short BiCGStab solve on small matrices
    (a ``grid x grid`` stencil: enough rows for every level of the GPU's partitioned
    solvers) on ``device``, in each of ``dtypes``; returns the seconds it took.

    Examples
    --------
    >>> import precond
    >>> precond.warm_up(device="cpu", grid=12) >= 0
    True
    """
    import matrices

    from . import krylov, preconditioners

    dev = resolve_device(device)
    t0 = time.perf_counter()
    for dtype in dtypes:
        for A in (matrices.aniso2(grid, dtype=dtype), matrices.elasticity2d(max(grid // 2, 4), dtype=dtype)):
            if dev == "gpu":
                A = to_device(A)
            xp = np if dev == "cpu" else __import__("cupy")
            b = A @ xp.ones(A.shape[0], dtype=A.dtype)
            for make in (preconditioners.jacobi, preconditioners.tridiagonal, preconditioners.algebraic_tridiagonal,
                         preconditioners.algebraic_block_tridiagonal):
                M = make(A)
                M.weight_coverage if hasattr(M, "weight_coverage") else None  # noqa: B018 - computes it
                krylov.solve(A, b, M, maxiter=16)
    return time.perf_counter() - t0
