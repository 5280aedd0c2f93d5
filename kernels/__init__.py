"""kernels: the compute layer shared by ``precond`` and ``graphkit``.

Backend dispatch (NumPy/SciPy vs CuPy/cupyx), the CUDA source loader, and the CPU
(NumPy/Numba) and GPU (CUDA) implementations of every algorithm.
"""
from .backend import (
    get_array_module,
    gpu_available,
    is_device_array,
    resolve_device,
    sparse_linalg_module,
    sparse_module,
    to_device,
    to_host,
)
from .tridiag import BlockTridiagonalSolver, TridiagonalSolver, tridiagonal_solve

__all__ = [
    "gpu_available",
    "is_device_array",
    "get_array_module",
    "resolve_device",
    "sparse_module",
    "sparse_linalg_module",
    "to_device",
    "to_host",
    "TridiagonalSolver",
    "BlockTridiagonalSolver",
    "tridiagonal_solve",
]


def __getattr__(name):  # lazy public solvers (importing them pulls in Numba)
    if name == "tridiagonal_solve":
        from .tridiag import tridiagonal_solve

        return tridiagonal_solve
    raise AttributeError(f"module 'kernels' has no attribute {name!r}")
