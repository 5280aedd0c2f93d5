"""Maximal independent sets (ECL-MIS) and MIS-based greedy colouring.

An independent set holds no two adjacent vertices; it is maximal when every other vertex
has a neighbour in it. On a labelled graph (networkx input) the sets are given in the
graph's node names and the checkers take them.

References
----------
.. [1] M. Burtscher, S. Devale, S. Azimi, J. Jaiganesh and E. Powers, "A High-Quality and
   Fast Maximal Independent Set Implementation for GPUs", ACM Transactions on Parallel
   Computing 5(2), 2018.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from kernels.backend import resolve_device

from .convert import as_graph
from .graph import Graph

__all__ = ["MISResult", "maximal_independent_set", "is_independent_set", "is_maximal_independent_set",
           "ColoringResult", "greedy_coloring", "is_coloring"]

METHODS = ("ecl", "luby")


@dataclass(frozen=True)
class MISResult:
    """A maximal independent set: ``vertices`` (named as the input names them: a networkx
    graph's nodes, else sorted vertex ids), ``size``, ``method``, ``device``, ``time`` (s),
    ``swaps`` (local-search improvements, 0 unless ``improve=True``) and ``indices`` (the
    sorted vertex ids)."""

    vertices: np.ndarray = field(repr=False)
    size: int
    method: str
    device: str
    time: float
    swaps: int = 0  #: (1,2)-swaps applied by ``improve=True``
    indices: np.ndarray | None = field(default=None, repr=False)  #: the set as vertex ids (0-based)

    def __len__(self) -> int:
        return self.size


def _membership(G, method, seed, device):
    from kernels import mis

    dev = resolve_device(device)
    if dev == "gpu":
        indptr, indices, _ = G.device_arrays()
        if method == "ecl":
            member = mis.ecl_mis_gpu(indptr, indices, seed, nnz=int(G.indptr[-1]))
        else:
            member, _ = mis.luby_mis_gpu(indptr, indices, seed)
        return member.get(), dev
    if method == "ecl":
        return mis.ecl_mis_cpu(G.indptr, G.indices, seed), dev
    return mis.luby_mis_cpu(G.indptr, G.indices, seed), dev


def maximal_independent_set(G, method: str = "ecl", seed: int = 0, device: str = "auto",
                            improve: bool = False) -> MISResult:
    """A maximal independent set, deterministic for a given seed (same on CPU and GPU).

    Parameters
    ----------
    G : Graph, networkx or igraph graph, sparse matrix or path
    method : {"ecl", "luby"}
        ``"ecl"``: ECL-MIS with degree-based priorities (larger sets, one asynchronous
        kernel on the GPU). ``"luby"``: the random-permutation baseline with uniform
        priorities and synchronous rounds.
    seed : int
        Seed of the priority hash, in ``[0, 2**32)``.
    device : {"auto", "cpu", "gpu"}
    improve : bool
        Not part of the paper: afterwards apply (1,2)-swaps (replace one set vertex by two
        non-adjacent neighbours whose only set neighbour it is, then refill) until none
        applies, on the CPU (Numba; after a GPU run the set is copied to the host). Larger
        sets, still maximal and deterministic.

    Returns
    -------
    MISResult
        ``vertices`` (the graph's node names for networkx input, else sorted ids),
        ``indices`` (sorted ids), ``size``, ``method``, ``device``, ``time``, ``swaps``.

    Raises
    ------
    ValueError
        Unknown method, negative seed or unknown device.
    TypeError
        ``improve`` not a bool.

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> res = graphkit.maximal_independent_set(nx.path_graph(5), device="cpu")
    >>> res.vertices.tolist()
    [0, 2, 4]
    >>> star_of_triangles = nx.Graph([(0, 1), (0, 2), (1, 2), (1, 3), (2, 4), (3, 4)])
    >>> graphkit.maximal_independent_set(star_of_triangles, improve=True, device="cpu").size
    2
    >>> graphkit.maximal_independent_set(nx.path_graph([10, 20, 30, 40]), device="cpu").vertices.tolist()
    [10, 40]
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or not 0 <= seed < 2**32:
        raise ValueError(f"seed must be an integer in [0, 2**32), got {seed!r}")
    if not isinstance(improve, (bool, np.bool_)):
        raise TypeError(f"improve must be a bool, got {improve!r}")
    G = as_graph(G)
    t0 = time.perf_counter()
    if G.n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return MISResult(G.to_labels(empty), 0, method, resolve_device(device), 0.0, 0, empty)
    member, dev = _membership(G, method, int(seed), device)
    swaps = 0
    if improve:
        from kernels.mis import two_improve_cpu

        member, swaps = two_improve_cpu(G.indptr, G.indices, member)
    vertices = np.flatnonzero(member)
    return MISResult(G.to_labels(vertices), len(vertices), method, dev, time.perf_counter() - t0, swaps, vertices)


def _as_mask(G: Graph, vertices):
    """The membership mask of ``vertices`` (names on a labelled graph), checked."""
    mask = np.zeros(G.n, dtype=bool)
    vertices = G.to_ids(vertices) if G.labelled else np.asarray(vertices)
    if vertices.size and (vertices.dtype == bool or not np.issubdtype(vertices.dtype, np.integer)):
        raise TypeError(f"vertices must be integer vertex ids (use numpy.flatnonzero for a mask), got {vertices.dtype}")
    vertices = vertices.astype(np.int64).ravel()
    if vertices.size and (vertices.min() < 0 or vertices.max() >= G.n):
        raise ValueError("vertex id out of range")
    mask[vertices] = True
    return mask


def is_independent_set(G, vertices) -> bool:
    """True when no edge of ``G`` joins two of ``vertices``.

    Parameters
    ----------
    G : Graph, networkx or igraph graph, sparse matrix or path
    vertices : array_like
        0-based vertex ids (duplicates allowed), or the node names of a labelled graph.

    Raises
    ------
    ValueError
        A vertex id outside ``0..n-1``.
    TypeError
        Non-integer (or boolean) ``vertices``.

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> graphkit.is_independent_set(nx.path_graph(4), [0, 2]), graphkit.is_independent_set(nx.path_graph(4), [1, 2])
    (True, False)
    """
    G = as_graph(G)
    mask = _as_mask(G, vertices)
    u, v = G.edges()[:2]
    return not bool(np.any(mask[u] & mask[v]))


def is_maximal_independent_set(G, vertices) -> bool:
    """True when ``vertices`` is independent and every other vertex has a neighbour in it.

    Parameters
    ----------
    G : Graph, networkx or igraph graph, sparse matrix or path
    vertices : array_like
        0-based vertex ids, or the node names of a labelled graph.

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> graphkit.is_maximal_independent_set(nx.path_graph(4), [0, 2])
    True
    >>> graphkit.is_maximal_independent_set(nx.path_graph(5), [0, 2])  # vertex 4 could be added
    False
    """
    G = as_graph(G)
    if not is_independent_set(G, vertices):
        return False
    mask = _as_mask(G, vertices)
    rows = np.repeat(np.arange(G.n), G.degrees)
    covered = mask.copy()
    covered[rows[mask[G.indices]]] = True  # vertices with a neighbour in the set
    return bool(covered.all())


@dataclass(frozen=True)
class ColoringResult:
    """Vertex ``colors`` (0-based, one per vertex in the graph's vertex order: a networkx
    graph's ``G.nodes`` order), number of colours, ``time``; :meth:`as_dict` maps each
    vertex's name to its colour."""

    colors: np.ndarray = field(repr=False)
    n_colors: int
    time: float
    labels: object = field(default=None, repr=False)  #: the vertices' names (None: their ids)

    def as_dict(self) -> dict:
        """``{vertex: colour}``, vertices named by the graph's labels (networkx's
        ``greedy_color`` convention).

        Examples
        --------
        >>> import networkx as nx, graphkit
        >>> graphkit.greedy_coloring(nx.path_graph("abc"), device="cpu").as_dict()
        {'a': 0, 'b': 1, 'c': 0}
        """
        names = self.labels if self.labels is not None else range(len(self.colors))
        return {name: int(c) for name, c in zip(names, self.colors)}


def greedy_coloring(G, seed: int = 0, device: str = "auto") -> ColoringResult:
    """Colouring by repeated MIS (the motivating use of Burtscher et al.): colour k is a maximal
    independent set (ECL-MIS, seed ``seed + k``) of the vertices left after colours 0..k-1.

    Parameters
    ----------
    G : Graph, networkx or igraph graph, sparse matrix or path
    seed : int
    device : {"auto", "cpu", "gpu"}

    Returns
    -------
    ColoringResult
        ``colors`` (int64, 0-based), ``n_colors``, ``time``.

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> c = graphkit.greedy_coloring(nx.cycle_graph(5), device="cpu")
    >>> c.n_colors, graphkit.is_coloring(nx.cycle_graph(5), c.colors)
    (3, True)
    """
    G = as_graph(G)
    t0 = time.perf_counter()
    colors = np.full(G.n, -1, dtype=np.int64)
    remaining = np.arange(G.n)
    k = 0
    while len(remaining):
        H = G.subgraph(remaining)
        chosen = maximal_independent_set(H, "ecl", (seed + k) % 2**32, device).indices
        colors[remaining[chosen]] = k
        remaining = remaining[colors[remaining] < 0]
        k += 1
    return ColoringResult(colors, k, time.perf_counter() - t0, G.labels)


def is_coloring(G, colors) -> bool:
    """True when every vertex has a colour (an integer >= 0; integral floats count) and no
    edge joins two equal colours.

    Parameters
    ----------
    G : Graph, networkx or igraph graph, sparse matrix or path
    colors : array_like of int or dict
        One colour per vertex (in the graph's vertex order), or ``{vertex: colour}``.

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> graphkit.is_coloring(nx.path_graph(3), [0, 1, 0]), graphkit.is_coloring(nx.path_graph(3), [0, 0, 1])
    (True, False)
    """
    G = as_graph(G)
    if isinstance(colors, dict):
        names = G.labels if G.labelled else range(G.n)
        if len(colors) != G.n or any(name not in colors for name in names):
            return False
        colors = [colors[name] for name in names]
    colors = np.asarray(colors)
    if colors.shape != (G.n,):
        return False
    if colors.dtype.kind not in "biuf":
        raise TypeError(f"colours must be integers, got dtype {colors.dtype}")
    if G.n and (colors.min() < 0 or (colors.dtype.kind == "f" and not np.all(np.floor(colors) == colors))):
        return False  # negative, fractional or NaN: not a colour (0, 1, 2, ...)
    u, v = G.edges()[:2]
    return not bool(np.any(colors[u] == colors[v]))
