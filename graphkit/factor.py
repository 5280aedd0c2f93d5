"""[0,n]-factors, matchings and linear forests of weighted graphs (paper 001).

Thin graph-facing wrappers around :mod:`precond.factor`: edge weights are used as given
(absolute values); an unweighted graph has all weights 1.
"""
from __future__ import annotations

import numpy as np

from kernels.backend import resolve_device, to_device

from .graph import as_graph

__all__ = ["factor", "matching", "linear_forest"]


def _weight_matrix(G, device):
    G = as_graph(G)
    A = G.to_scipy()
    A.data = np.abs(A.data)
    return to_device(A) if resolve_device(device) == "gpu" else A


def factor(G, n=2, *, iterations=5, m=5, k_m=0, p=0.5, seed=0, device="auto"):
    """Parallel [0,n]-factor of a weighted graph: every vertex keeps at most ``n`` partners,
    preferring heavy edges. Returns a :class:`precond.Factor` (``neighbors`` N x n, -1 empty).

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> f = graphkit.factor(nx.cycle_graph(6), n=2, device="cpu", iterations=20, m=1)
    >>> int((f.neighbors >= 0).sum())
    12
    """
    from precond.factor import factor as _factor

    return _factor(_weight_matrix(G, device), n=n, iterations=iterations, m=m, k_m=k_m, p=p, seed=seed, symmetric=True)


def matching(G, *, iterations=5, m=5, k_m=0, p=0.5, seed=0, device="auto"):
    """Heavy matching (a [0,1]-factor): returns ``mate`` with ``mate[v]`` the partner or -1.

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> mate = graphkit.matching(nx.path_graph(4), device="cpu", iterations=10, m=1)
    >>> [int(x) for x in mate]
    [1, 0, 3, 2]
    """
    return factor(G, n=1, iterations=iterations, m=m, k_m=k_m, p=p, seed=seed, device=device).neighbors[:, 0]


def linear_forest(G, *, iterations=5, m=5, k_m=0, p=0.5, seed=0, device="auto"):
    """Heavy linear forest (vertex-disjoint paths) of a weighted graph, from a [0,2]-factor
    with every cycle broken at its weakest edge. Returns a :class:`precond.LinearForest`.

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> lf = graphkit.linear_forest(nx.cycle_graph(5), device="cpu", iterations=10, m=1)
    >>> lf.n_paths
    1
    """
    from precond.factor import factor as _factor
    from precond.factor import linear_forest as _linear_forest

    A = _weight_matrix(G, device)
    f = _factor(A, n=2, iterations=iterations, m=m, k_m=k_m, p=p, seed=seed, symmetric=True)
    return _linear_forest(A, f)
