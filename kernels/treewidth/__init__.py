"""Treewidth kernels (CPU in Numba, GPU in CUDA).

Modules, one job each: :mod:`~kernels.treewidth.solve` (the exact pipeline),
:mod:`~kernels.treewidth.pid` (positive-instance driven dynamic programming),
:mod:`~kernels.treewidth.bfs` (breadth-first search over elimination prefixes, CPU and
GPU), :mod:`~kernels.treewidth.bounds` (greedy orderings, contraction lower bounds),
:mod:`~kernels.treewidth.preprocess` (reductions, clique minors for safe separators) and
:mod:`~kernels.treewidth._bits` (bitset primitives and a clock for compiled code).
"""
from .bfs import *  # noqa: F401,F403
from .bfs import __all__ as _bfs_all
from .pid import PIDSolver
from .solve import solve

__all__ = list(_bfs_all) + ["PIDSolver", "solve"]
