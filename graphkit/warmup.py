"""Warm-up: compile (or load from the caches) the kernels of the graph solvers before
anything is timed.

The first call of a Numba function in a process compiles it, or loads it from the cache
(``cache=True``: compiled once per machine into ``__pycache__``, then loaded in about a
second); the first use of a CUDA kernel compiles it with NVRTC, or loads CuPy's on-disk
cache. The ``time`` of a solver's result is the wall time of that call, so the first
call in a process includes this: call :func:`warm_up` once first where times matter.
"""
from __future__ import annotations

import time

__all__ = ["warm_up"]


def warm_up(device: str = "auto", problems=("mis", "cliques", "factor", "vertex_cover", "treewidth")) -> float:
    """Run each solver of ``problems`` once on small graphs on ``device``; returns the
    seconds it took.

    Examples
    --------
    >>> import graphkit
    >>> graphkit.warm_up(device="cpu", problems=("mis",)) >= 0
    True
    """
    import graphkit

    from .generators import grid2d, uniform_random

    known = {"mis", "cliques", "factor", "vertex_cover", "treewidth"}
    unknown = set(problems) - known
    if unknown:
        raise ValueError(f"unknown problems {sorted(unknown)}; choose from {sorted(known)}")
    t0 = time.perf_counter()
    G = uniform_random(200, 6.0, seed=1)
    small = grid2d(4, 5)
    if "mis" in problems:
        for method in ("ecl", "luby"):
            graphkit.maximal_independent_set(G, method=method, device=device, improve=method == "ecl")
        graphkit.greedy_coloring(small, device=device)
    if "cliques" in problems:
        list(graphkit.maximal_cliques(G, device=device))
        graphkit.count_maximal_cliques(G, device=device)
        graphkit.maximum_clique(G, method="branch_and_bound", device=device)
    if "factor" in problems:
        graphkit.matching(G, device=device)
        graphkit.linear_forest(G, device=device)
    if "vertex_cover" in problems:
        from kernels.vertex_cover.exact import warm_up as warm_up_vertex_cover

        warm_up_vertex_cover()
        graphkit.minimum_vertex_cover(small, device=device)
    if "treewidth" in problems:
        from kernels.backend import gpu_available
        from kernels.treewidth.solve import warm_up as warm_up_treewidth
        from kernels.treewidth.solve import warm_up_gpu as warm_up_treewidth_gpu

        warm_up_treewidth("pid")  # every PID table size and both O-block lookups
        if device != "cpu" and gpu_available():  # the GPU search that device="auto" races
            warm_up_treewidth_gpu()
        graphkit.treewidth(small, device=device)
    return time.perf_counter() - t0
