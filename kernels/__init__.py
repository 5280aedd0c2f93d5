"""kernels: the compute layer shared by ``precond`` and ``graphkit``.

Backend dispatch (NumPy/SciPy vs CuPy/cupyx, :mod:`.backend`), the CUDA source loader
(:mod:`.nvrtc`, sources in ``kernels/cuda/``), the one input validator
(:mod:`.validation`), and the CPU (NumPy/Numba) and GPU (CUDA) implementations of every
algorithm, one subpackage or module per algorithm: :mod:`.factor`, :mod:`.forest`,
:mod:`.tridiag`, :mod:`.graph`, :mod:`.matrix`, :mod:`.mis`, :mod:`.cliques`,
:mod:`.vertex_cover`, :mod:`.treewidth`. Twins are named ``<algorithm>_cpu`` and
``<algorithm>_gpu``, or run through a launcher object per device.
"""
from .version import __version__
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
    "__version__",
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

