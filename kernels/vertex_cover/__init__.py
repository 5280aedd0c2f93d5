"""Exact vertex cover: the branch-and-reduce engine and the GPU paper's searches.

``solver`` / ``search`` / ``reductions`` / ``lp`` / ``bounds`` / ``branching`` /
``packing`` / ``state``: the branch-and-reduce engine (reductions inside the search,
lower bounds, components), see :class:`BranchAndReduce`. ``paper``: the degree-array
branch-and-reduce of "Parallel Vertex Cover Algorithms on GPUs" on the CPU and the GPU.
"""
from .paper import (  # noqa: F401
    REMOVED,
    GpuConfig,
    _degree_bound_holds,
    adjacency_bitsets,
    clique_cover_bound_cpu,
    gpu_config,
    greedy_cover_cpu,
    lp_bound,
    reduce_cpu,
    search_cpu,
    search_gpu,
    SearchState,
)
from .solver import BranchAndReduce  # noqa: F401
