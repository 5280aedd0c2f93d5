"""Treewidth kernels: exact searches, bounds and preprocessing (CPU in Numba, GPU in CUDA)."""
from .bfs import *  # noqa: F401,F403
from .bfs import __all__ as _bfs_all

__all__ = list(_bfs_all)
