"""[0,n]-factors, matchings and linear forests of weighted graphs: the graph face of
:mod:`kernels.factor` and :mod:`kernels.forest`.

Edge weights are used as given (absolute values); an unweighted graph has all weights 1.
On a labelled graph (a networkx graph, an igraph graph with vertex names) the results
name the vertices with the graph's labels: :meth:`kernels.factor.Factor.edge_list`,
:meth:`kernels.forest.LinearForest.paths`, and :func:`matching` returns a dict.

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022.
"""
from __future__ import annotations

import numpy as np

from kernels.backend import resolve_device, to_device
from kernels.factor import Factor
from kernels.factor import factor as _matrix_factor
from kernels.forest import LinearForest, forest_of_factor

from .convert import as_graph
from .graph import Graph

__all__ = ["factor", "matching", "linear_forest"]


def _weight_matrix(G: Graph, device: str):
    A = G.to_scipy()
    A.data = np.abs(A.data)
    return to_device(A) if resolve_device(device) == "gpu" else A


def factor(G, n: int = 2, *, iterations: int = 5, m: int = 5, k_m: int = 0, p: float = 0.5, seed: int = 0,
           device: str = "auto") -> Factor:
    """Parallel [0,n]-factor of a weighted graph: every vertex keeps at most ``n`` partners,
    preferring heavy edges.

    Parameters
    ----------
    G : Graph, networkx or igraph graph, sparse matrix or path
    n : int, 1..4
    iterations, m, k_m, p, seed :
        Parameters of the rounds (see :func:`kernels.factor.factor`).
    device : {"auto", "cpu", "gpu"}

    Returns
    -------
    Factor
        ``neighbors`` (N x n, -1 empty) in the graph's vertex order; ``edge_list()`` names
        the edges with the graph's labels.

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> f = graphkit.factor(nx.cycle_graph(6), n=2, device="cpu", iterations=20, m=1)
    >>> int((f.neighbors >= 0).sum())
    12
    >>> graphkit.factor(nx.path_graph("abc"), n=1, device="cpu", iterations=10, m=1).edge_list()
    [('a', 'b')]
    """
    G = as_graph(G)
    f = _matrix_factor(_weight_matrix(G, device), n=n, iterations=iterations, m=m, k_m=k_m, p=p, seed=seed,
                       symmetric=True)
    f.labels = G.labels
    return f


def matching(G, *, iterations: int = 5, m: int = 5, k_m: int = 0, p: float = 0.5, seed: int = 0,
             device: str = "auto"):
    """Heavy matching (a [0,1]-factor).

    Returns
    -------
    ndarray or dict
        ``mate`` with ``mate[v]`` the partner of vertex ``v`` or -1; on a labelled graph a
        dict ``{label: partner's label}`` of the matched vertices (both directions).

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> mate = graphkit.matching(nx.path_graph(4), device="cpu", iterations=10, m=1)
    >>> [int(x) for x in mate]
    [1, 0, 3, 2]
    >>> graphkit.matching(nx.path_graph(["a", "b", "c"]), device="cpu", iterations=10, m=1)
    {'a': 'b', 'b': 'a'}
    """
    f = factor(G, n=1, iterations=iterations, m=m, k_m=k_m, p=p, seed=seed, device=device)
    mate = f.neighbors[:, 0]
    if f.labels is None:
        return mate
    pairs = f.edge_list()
    return {**{a: b for a, b in pairs}, **{b: a for a, b in pairs}}


def linear_forest(G, *, iterations: int = 5, m: int = 5, k_m: int = 0, p: float = 0.5, seed: int = 0,
                  device: str = "auto") -> LinearForest:
    """Heavy linear forest (vertex-disjoint paths) of a weighted graph, from a [0,2]-factor
    with every cycle broken at its weakest edge.

    Returns
    -------
    LinearForest
        ``paths()`` lists the paths, named with the graph's labels.

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> lf = graphkit.linear_forest(nx.cycle_graph(5), device="cpu", iterations=10, m=1)
    >>> lf.n_paths
    1
    >>> graphkit.linear_forest(nx.path_graph(["x", "y", "z"]), device="cpu").paths()
    [['x', 'y', 'z']]
    """
    f = factor(G, n=2, iterations=iterations, m=m, k_m=k_m, p=p, seed=seed, device=device)
    return forest_of_factor(f, labels=f.labels)
