"""Vectorized graph generators for benchmarks: grids, uniform random, R-MAT / Kronecker and
road-like graphs (the kinds of graphs of the ECL-MIS evaluation).

References
----------
.. [1] M. Burtscher, S. Devale, S. Azimi, J. Jaiganesh and E. Powers, "A High-Quality and
   Fast Maximal Independent Set Implementation for GPUs", ACM Transactions on Parallel
   Computing 5(2), 2018.
.. [2] D. Chakrabarti, Y. Zhan and C. Faloutsos, "R-MAT: A Recursive Model for Graph
   Mining", Proceedings of the 2004 SIAM International Conference on Data Mining, 2004.
"""
from __future__ import annotations

import numpy as np

from .graph import Graph

__all__ = ["grid2d", "uniform_random", "rmat", "kronecker", "road_like"]


def _graph(n, u, v) -> Graph:
    """Simple undirected graph of the edge arrays (self-loops and duplicates dropped, quietly)."""
    from kernels.graph import csr_from_edges

    indptr, indices = csr_from_edges(n, u, v)
    return Graph(indptr, indices)


def _check(n, what="n"):
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{what} must be a positive integer, got {n!r}")
    return int(n)


def grid2d(rows, cols=None) -> Graph:
    """``rows x cols`` 4-neighbour grid graph (vertex ``i * cols + j`` at row i, column j).

    Parameters
    ----------
    rows, cols : int
        Grid size (positive); ``cols`` defaults to ``rows``.

    Returns
    -------
    Graph

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
    """Erdos-Renyi-like graph: ``n * avg_degree / 2`` uniformly random vertex pairs,
    self-loops and duplicates dropped (so the average degree is slightly below ``avg_degree``).

    Parameters
    ----------
    n : int
        Number of vertices (positive).
    avg_degree : float
        Target average degree (>= 0).
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    Graph

    Examples
    --------
    >>> G = uniform_random(1000, 8, seed=1)
    >>> G.n, bool(7.5 < G.degrees.mean() <= 8)
    (1000, True)
    """
    n = _check(n)
    if not np.isfinite(avg_degree) or avg_degree < 0:
        raise ValueError(f"avg_degree must be a finite number >= 0, got {avg_degree!r}")
    rng = np.random.default_rng(seed)
    m = int(n * avg_degree / 2)
    dtype = np.int32 if n < 2**31 else np.int64
    return _graph(n, rng.integers(0, n, m, dtype=dtype), rng.integers(0, n, m, dtype=dtype))


def rmat(scale, edge_factor=16, a=0.57, b=0.19, c=0.19, seed=0) -> Graph:
    """R-MAT graph with ``2**scale`` vertices and ``edge_factor * 2**scale`` sampled edges
    (before dropping duplicates and self-loops); power-law degrees.

    Each edge picks, level by level, one quadrant of the adjacency matrix with probabilities
    ``a, b, c, d = 1 - a - b - c`` (quantized to 1/65536; sampled by a counter-based hash in
    Numba, so the graph depends only on the arguments); vertex ids are then randomly
    permuted so that ids carry no structure.

    Parameters
    ----------
    scale : int
        log2 of the number of vertices.
    edge_factor : float
        Sampled edges per vertex (the average degree is about twice this, less duplicates).
    a, b, c : float
        Quadrant probabilities, ``a > 0``, ``b, c >= 0``, ``a + b + c < 1``.
    seed : int

    Returns
    -------
    Graph

    Examples
    --------
    >>> G = rmat(10, 8, seed=1)
    >>> G.n
    1024
    """
    scale = _check(scale, "scale")
    if not (0 < a and 0 <= b and 0 <= c and a + b + c < 1):
        raise ValueError("R-MAT probabilities must satisfy a > 0, b, c >= 0, a + b + c < 1")
    if not np.isfinite(edge_factor) or edge_factor < 0:
        raise ValueError(f"edge_factor must be a finite number >= 0, got {edge_factor!r}")
    from kernels.graph import rmat_edges

    m = int(edge_factor * (1 << scale))
    u, v = rmat_edges(scale, m, a, b, c, seed)  # per edge and level, one quadrant (Numba)
    perm = np.random.default_rng(seed).permutation(1 << scale)  # hide the recursion from vertex ids
    return _graph(1 << scale, perm[u], perm[v])


def kronecker(scale, edge_factor=16, seed=0) -> Graph:
    """Graph500-style Kronecker (power-law) graph: :func:`rmat` with (a, b, c) = (0.57, 0.19, 0.19).

    Parameters
    ----------
    scale : int
        log2 of the number of vertices.
    edge_factor : float
        Sampled edges per vertex (Graph500 uses 16).
    seed : int

    Returns
    -------
    Graph

    Examples
    --------
    >>> kronecker(8, 4, seed=0).n
    256
    """
    return rmat(scale, edge_factor, 0.57, 0.19, 0.19, seed)


def road_like(n, seed=0) -> Graph:
    """Road-network-like planar graph: a near-square grid with 30% of its edges removed
    and a few diagonal shortcuts (5% of the cells); average degree about 2.9, at most 6.

    Parameters
    ----------
    n : int
        Number of vertices (positive); the grid's last row is cut at ``n``.
    seed : int

    Returns
    -------
    Graph

    Examples
    --------
    >>> G = road_like(10000, seed=1)
    >>> G.n, int(G.degrees.max()) <= 6
    (10000, True)
    """
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
