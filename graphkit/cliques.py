"""Cliques: maximal clique enumeration (Bron-Kerbosch with pivoting), counting, checkers,
and the maximum clique.

A clique is a set of pairwise adjacent vertices; it is maximal when no other vertex is
adjacent to all of them, maximum when no clique is larger. On a labelled graph (networkx
input) the cliques are given in the graph's node names and the checkers take them.

References
----------
.. [1] J. Jenkins, I. Arkatkar, J. D. Owens, A. Choudhary and N. F. Samatova, "Lessons
   Learned from Exploring the Backtracking Paradigm on the GPU", Euro-Par 2011 Parallel
   Processing, LNCS 6853, Springer, 2011.
.. [2] E. Tomita and T. Seki, "An Efficient Branch-and-Bound Algorithm for Finding a
   Maximum Clique", DMTCS 2003, LNCS 2731, Springer, 2003.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from kernels.backend import resolve_device

from .clique_search import MaxCliqueResult, branch_and_bound_clique
from .convert import as_graph
from .graph import Graph
from .vertex_cover import minimum_vertex_cover

__all__ = ["maximal_clique_chunks", "maximal_cliques", "count_maximal_cliques", "CliqueCount",
           "is_clique", "is_maximal_clique", "maximum_clique", "MaxCliqueResult"]

MAXCLIQUE_METHODS = ("auto", "branch_and_bound", "vertex_cover")
#: ``method="auto"`` takes the vertex cover of the complement from this edge density on:
#: the complement is then sparse and reduces well.
VC_DENSITY = 0.95
#: ... up to this many vertices (the complement is built as a dense mask).
VC_MAX_VERTICES = 40_000


@dataclass(frozen=True)
class CliqueCount:
    """Maximal clique statistics: ``count``, ``histogram`` (index = clique size),
    ``max_size``, ``device``, ``time`` (s)."""

    count: int
    histogram: np.ndarray = field(repr=False)
    max_size: int
    device: str
    time: float


def _check_min_size(min_size):
    if isinstance(min_size, bool) or not isinstance(min_size, (int, np.integer)) or min_size < 1:
        raise ValueError(f"min_size must be a positive integer, got {min_size!r}")
    return int(min_size)


def maximal_clique_chunks(G, min_size: int = 1, device: str = "auto", chunk_cliques: int = 1 << 16, *,
                          progress=None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Stream the maximal cliques as ``(flat, offsets)`` chunks (CSR-like, NumPy).

    Clique ``i`` of a chunk is ``flat[offsets[i]:offsets[i + 1]]`` (sorted vertex ids; on a
    labelled graph the vertices' names, in the order of their ids).
    At most ``chunk_cliques`` cliques are held at once: the enumeration stops when its
    output buffer is full and resumes after the chunk has been consumed.

    Parameters
    ----------
    G : Graph, networkx graph, sparse matrix or path
    min_size : int
        Only cliques with at least this many vertices (pruned in the search).
    device : {"auto", "cpu", "gpu"}
    chunk_cliques : int
        Buffer capacity in cliques (the GPU buffer holds about 16 vertices per clique).
    progress : callable, optional
        CPU: ``progress(done, total)`` as in :func:`count_maximal_cliques`.

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> chunks = graphkit.maximal_clique_chunks(nx.path_graph(4), device="cpu")
    >>> sorted(sorted(flat[a:b].tolist()) for flat, off in chunks for a, b in zip(off[:-1], off[1:]))
    [[0, 1], [1, 2], [2, 3]]
    """
    G, min_size, dev, chunk_cliques = _check_enumeration(G, min_size, device, chunk_cliques)
    return _chunks(G, min_size, dev, chunk_cliques, progress)


def _check_enumeration(G, min_size, device, chunk_cliques):
    """Validate the arguments when the iterator is created, not at its first ``next()``."""
    min_size = _check_min_size(min_size)
    if isinstance(chunk_cliques, bool) or not isinstance(chunk_cliques, (int, np.integer)) or chunk_cliques < 1:
        raise ValueError(f"chunk_cliques must be a positive integer, got {chunk_cliques!r}")
    return as_graph(G), min_size, resolve_device(device), int(chunk_cliques)


def _chunks(G: Graph, min_size, dev, chunk_cliques, progress=None):
    if G.n == 0:
        return
    from kernels import cliques as kc

    if dev == "gpu":
        chunks = kc.mce_chunks_gpu(G, min_size, chunk_cliques)
    else:
        chunks = kc.mce_chunks_cpu(G.indptr, G.indices, min_size, chunk_cliques, progress=progress)
    for flat, offsets in chunks:
        yield (G.to_labels(flat) if G.labelled else flat), offsets


def maximal_cliques(G, min_size: int = 1, device: str = "auto", chunk_cliques: int = 1 << 16) -> Iterator[np.ndarray]:
    """Iterate over all maximal cliques (Bron-Kerbosch with pivoting, after Jenkins et al.).

    The top level is split by a degeneracy ordering (each vertex starts a sub-problem
    with its later neighbours as candidates and its earlier neighbours as *not*); the
    pivot maximizes the candidates it covers. Cliques are produced in chunks (see
    :func:`maximal_clique_chunks`), so memory stays bounded however many there are.

    Parameters
    ----------
    G : Graph, networkx graph, sparse matrix or path
    min_size : int
        Only cliques with at least this many vertices.
    device : {"auto", "cpu", "gpu"}
    chunk_cliques : int
        Cliques per internal chunk.

    Yields
    ------
    ndarray
        One maximal clique: its sorted vertex ids (int64), or on a labelled graph its
        vertices' names.

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> G = nx.Graph([(0, 1), (1, 2), (0, 2), (2, 3)])
    >>> sorted(c.tolist() for c in graphkit.maximal_cliques(G, device="cpu"))
    [[0, 1, 2], [2, 3]]
    >>> sorted(c.tolist() for c in graphkit.maximal_cliques(nx.path_graph("abc"), device="cpu"))
    [['a', 'b'], ['b', 'c']]
    """
    return _cliques(maximal_clique_chunks(G, min_size, device, chunk_cliques))


def _cliques(chunks):
    for flat, off in chunks:
        if flat.dtype.kind in "iu":
            flat = flat.astype(np.int64, copy=False)
        for i in range(len(off) - 1):
            yield flat[off[i]:off[i + 1]]


def count_maximal_cliques(G, min_size: int = 1, device: str = "auto", *, progress=None) -> CliqueCount:
    """Count the maximal cliques by size without transferring them.

    Parameters
    ----------
    G : Graph, networkx graph, sparse matrix or path
    min_size : int
    device : {"auto", "cpu", "gpu"}
    progress : callable, optional
        Called as ``progress(done, total)`` a few times a second. CPU: top-level
        sub-problems (one per vertex) started; GPU: tasks (sub-problems, the largest split
        per branch) finished. Both return to Python that often, so Ctrl-C stops them
        within a second (plus one GPU launch of about a quarter second).

    Returns
    -------
    CliqueCount

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> res = graphkit.count_maximal_cliques(nx.complete_graph(5), device="cpu")
    >>> res.count, res.max_size, res.histogram.tolist()
    (1, 5, [0, 0, 0, 0, 0, 1])
    """
    min_size = _check_min_size(min_size)
    G = as_graph(G)
    dev = resolve_device(device)
    t0 = time.perf_counter()
    if G.n == 0:
        return CliqueCount(0, np.zeros(1, np.int64), 0, dev, 0.0)
    from kernels import cliques as kc

    if dev == "gpu":
        hist = kc.mce_count_gpu(G, min_size, progress=progress)
    else:
        hist, _ = kc.mce_count_cpu(G.indptr, G.indices, min_size, progress=progress)
    nz = np.nonzero(hist)[0]
    top = int(nz[-1]) if len(nz) else 0
    hist = np.asarray(hist[:top + 1], dtype=np.int64)
    return CliqueCount(int(hist.sum()), hist, top, dev, time.perf_counter() - t0)


def _vertex_array(G: Graph, vertices):
    """``vertices`` (names on a labelled graph) as int64 vertex ids, checked."""
    if G.labelled:
        vertices = G.to_ids(vertices)
    c = np.asarray(vertices)
    if c.ndim != 1:
        raise ValueError("vertices must be a 1-D sequence of vertex ids")
    if len(c) and not np.issubdtype(c.dtype, np.integer):
        raise TypeError(f"vertex ids must be integers, got dtype {c.dtype}")
    c = c.astype(np.int64)
    if len(c) and (c.min() < 0 or c.max() >= G.n):
        raise ValueError(f"vertex ids must be in [0, {G.n})")
    return c


def is_clique(G, vertices) -> bool:
    """Whether ``vertices`` are pairwise adjacent (duplicates are not a clique); on a
    labelled graph ``vertices`` are names.

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> graphkit.is_clique(nx.complete_graph(4), [0, 2, 3]), graphkit.is_clique(nx.path_graph(3), [0, 2])
    (True, False)
    """
    G = as_graph(G)
    return _is_clique_ids(G, _vertex_array(G, vertices))


def _is_clique_ids(G: Graph, c) -> bool:
    if len(np.unique(c)) != len(c):
        return False
    if len(c) <= 1:
        return True
    sub = G.subgraph(c)
    return sub.m == len(c) * (len(c) - 1) // 2


def is_maximal_clique(G, vertices) -> bool:
    """Whether ``vertices`` form a clique that no other vertex extends; on a labelled graph
    ``vertices`` are names.

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> G = nx.Graph([(0, 1), (1, 2), (0, 2), (2, 3)])
    >>> graphkit.is_maximal_clique(G, [0, 1, 2]), graphkit.is_maximal_clique(G, [0, 1])
    (True, False)
    """
    G = as_graph(G)
    c = _vertex_array(G, vertices)
    if not _is_clique_ids(G, c):
        return False
    if len(c) == 0:
        return G.n == 0
    # vertices adjacent to every member
    count = np.zeros(G.n, np.int64)
    for v in c:
        count[G.indices[G.indptr[v]:G.indptr[v + 1]]] += 1
    return not np.any(count == len(c))


def _clique_progress(progress):
    """``(callback(nodes, best), bar)`` for the branch and bound (kernels.console.search_progress)."""
    from kernels.console import search_progress

    report, bar = search_progress(progress, "maximum clique", {"best": "best"})
    if report is None:
        return None, None
    t0 = time.perf_counter()
    return (lambda nodes, best: report({"best": best, "nodes": nodes, "elapsed": time.perf_counter() - t0})), bar


def maximum_clique(G, method: str = "auto", time_limit: float | None = None, device: str = "auto", *,
                   progress=None) -> MaxCliqueResult:
    """A maximum clique.

    Parameters
    ----------
    G : Graph, networkx or igraph graph, sparse matrix or path
    method : {"auto", "branch_and_bound", "vertex_cover"}
        ``"branch_and_bound"``: per-vertex sub-problems in reverse degeneracy order with
        a greedy-colouring bound (bitsets). ``"vertex_cover"``: minimum vertex cover of
        the complement (:func:`graphkit.minimum_vertex_cover`; moderate ``n`` only).
        ``"auto"`` is the vertex cover route for graphs of edge density 0.95 or more
        (their complement is sparse: measured faster on MANN_a27) and the branch and
        bound otherwise (measured faster on every other DIMACS graph).
        On the GPU the search is split two levels deep into work items (one warp
        each) that share the best size; a short CPU search gives the starting bound.
        With ``device="auto"`` and a usable GPU, the CPU search runs up to
        20,000 nodes first and the GPU takes over only when that did not finish
        (the result's ``device`` tells which one answered).
    time_limit : float, optional
        Seconds; when reached the best clique found is returned with ``optimal=False``.
    device : {"auto", "cpu", "gpu"}
    progress : bool or callable, optional
        ``True``: a progress line on stderr (tqdm, on a terminal only); a callable gets a
        dict (``best``, ``nodes``, ``elapsed``) about twice a second. The CPU searches
        report; the GPU branch and bound is one kernel launch and does not.

    Returns
    -------
    MaxCliqueResult
        ``vertices`` in the graph's names (networkx input), ``indices`` the vertex ids.

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> res = graphkit.maximum_clique(nx.complete_graph(4), device="cpu")
    >>> res.size, res.vertices.tolist(), res.optimal
    (4, [0, 1, 2, 3], True)
    >>> graphkit.maximum_clique(nx.Graph([(10, 20), (20, 30), (10, 30), (30, 40)]), device="cpu").vertices.tolist()
    [10, 20, 30]
    """
    if method not in MAXCLIQUE_METHODS:
        raise ValueError(f"method must be one of {MAXCLIQUE_METHODS}, got {method!r}")
    if time_limit is not None:
        if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not time_limit > 0:
            raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    G = as_graph(G)
    if method == "auto":
        dense = G.n > 1 and 2 * G.m >= VC_DENSITY * G.n * (G.n - 1) and G.n <= VC_MAX_VERTICES
        method = "vertex_cover" if dense else "branch_and_bound"
    if method == "branch_and_bound":
        report, bar = _clique_progress(progress)
        try:
            return branch_and_bound_clique(G, time_limit=time_limit, device=device, progress=report)
        finally:
            if bar is not None:
                bar.close()
    dev = resolve_device(device)
    # A limit is meant for the search: compile (or load) the vertex-cover pipeline before
    # the clock starts, as minimum_vertex_cover itself does (a cold cache takes minutes).
    if time_limit is not None:
        from kernels.vertex_cover.exact import compile_once

        compile_once()
    t0 = time.perf_counter()
    if G.n == 0:
        return MaxCliqueResult(G.to_labels(np.zeros(0, np.int64)), 0, True, method, dev, 0.0, 0, np.zeros(0, np.int64))
    if method == "vertex_cover":
        complement = G.complement()
        res = minimum_vertex_cover(Graph(complement.indptr, complement.indices), device=dev, time_limit=time_limit,
                                   progress=progress)
        mask = np.ones(G.n, bool)
        mask[np.asarray(res.cover, dtype=np.int64)] = False  # vertex ids: the complement has no labels
        verts = np.nonzero(mask)[0].astype(np.int64)
        return MaxCliqueResult(G.to_labels(verts), len(verts), bool(res.optimal), method, dev, time.perf_counter() - t0,
                               int(res.nodes), verts)
