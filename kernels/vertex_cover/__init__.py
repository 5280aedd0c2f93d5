"""Exact vertex cover: the branch-and-reduce engine, its companions, the GPU paper's searches.

One module per job:

``exact``
    the CPU pipeline (kernel, local search, two exact searches in turns): :func:`solve`;
``solver`` / ``search``
    the branch-and-reduce engine (:class:`BranchAndReduce`) and its resumable frame loop;
``state``
    instances, undo, folds and alternatives; ``reductions`` the rules; ``lp`` the LP /
    crown reduction with its maintained matching; ``packing`` the packing constraints;
    ``bounds`` the lower bounds; ``branching`` the branching vertex and mirrors;
``maxsat``
    clique covers with MaxSAT absorption (bounds of both exact searches);
``mis_bnb``
    the clique-style branch and bound for independent sets of sparse kernels;
``local_search``
    NuMVC;
``paper``
    the degree-array branch-and-reduce of "Parallel Vertex Cover Algorithms on GPUs"
    (its sequential CPU search and the launch of its CUDA kernels).
"""
from .paper import (  # noqa: F401
    REMOVED,
    GpuCapacityError,
    GpuConfig,
    adjacency_bitsets,
    clique_cover_bound_cpu,
    degree_bound_holds,
    gpu_config,
    greedy_cover_cpu,
    bipartite_matching,
    lp_bound,
    reduce_cpu,
    search_cpu,
    search_gpu,
    SearchState,
)
from .exact import ExactResult, solve  # noqa: F401
from .solver import BranchAndReduce  # noqa: F401
