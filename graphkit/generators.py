"""Vectorized graph generators for benchmarks (the kinds of graphs of paper 003)."""
from __future__ import annotations

import numpy as np

from .graph import Graph

__all__ = ["grid2d", "uniform_random", "rmat", "kronecker", "road_like"]


def _graph(n, u, v) -> Graph:
    """Simple undirected graph of the edge arrays (self-loops and duplicates dropped, quietly)."""
    from kernels.mis import csr_from_edges

    indptr, indices = csr_from_edges(n, u, v)
    return Graph(indptr, indices)


def _check(n, what="n"):
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{what} must be a positive integer, got {n!r}")
    return int(n)


def grid2d(rows, cols=None) -> Graph:
    """``rows x cols`` 4-neighbour grid graph.

    Examples
    --------
    >>> grid2d(3, 4)
    Graph(n=12, m=17)
    """
    rows = _check(rows, "rows")
    cols = _check(cols if cols is not None else rows, "cols")
    idx = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    u = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    v = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    return _graph(rows * cols, u, v)


def uniform_random(n, avg_degree=8.0, seed=0) -> Graph:
    """Erdos-Renyi-like graph with ``n * avg_degree / 2`` random edges (duplicates dropped)."""
    n = _check(n)
    rng = np.random.default_rng(seed)
    m = int(n * avg_degree / 2)
    dtype = np.int32 if n < 2**31 else np.int64
    return _graph(n, rng.integers(0, n, m, dtype=dtype), rng.integers(0, n, m, dtype=dtype))


def rmat(scale, edge_factor=16, a=0.57, b=0.19, c=0.19, seed=0) -> Graph:
    """R-MAT graph with ``2**scale`` vertices and about ``edge_factor * 2**scale`` edges
    (before dropping duplicates and self-loops); power-law degrees.

    Examples
    --------
    >>> G = rmat(10, 8, seed=1)
    >>> G.n
    1024
    """
    scale = _check(scale, "scale")
    if not (0 < a and 0 <= b and 0 <= c and a + b + c < 1):
        raise ValueError("R-MAT probabilities must satisfy a > 0, b, c >= 0, a + b + c < 1")
    from kernels.mis import rmat_edges

    m = int(edge_factor * (1 << scale))
    u, v = rmat_edges(scale, m, a, b, c, seed)  # per edge and level, one quadrant (Numba)
    perm = np.random.default_rng(seed).permutation(1 << scale)  # hide the recursion from vertex ids
    return _graph(1 << scale, perm[u], perm[v])


def kronecker(scale, edge_factor=16, seed=0) -> Graph:
    """Graph500-style Kronecker graph: R-MAT with (a, b, c) = (0.57, 0.19, 0.19)."""
    return rmat(scale, edge_factor, 0.57, 0.19, 0.19, seed)


def road_like(n, seed=0) -> Graph:
    """Road-network-like planar graph: a near-square grid with 30% of its edges removed
    and a few diagonal shortcuts; average degree about 2.6."""
    n = _check(n)
    rng = np.random.default_rng(seed)
    rows = max(1, int(np.sqrt(n)))
    cols = -(-n // rows)
    idx = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    u = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel(), idx[:-1, :-1].ravel()])
    v = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel(), idx[1:, 1:].ravel()])
    n_grid = (rows * (cols - 1)) + ((rows - 1) * cols)
    keep = np.concatenate([rng.random(n_grid) >= 0.3, rng.random(len(u) - n_grid) < 0.05])
    u, v = u[keep], v[keep]
    inside = (u < n) & (v < n)
    return _graph(n, u[inside], v[inside])
