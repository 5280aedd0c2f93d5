"""Exact minimum and parameterized vertex cover (paper 000: branch-and-reduce on GPUs).

:func:`minimum_vertex_cover` and :func:`parameterized_vertex_cover` run the paper's
branch-and-reduce (degree-one, degree-two-triangle and high-degree rules, the two
stopping conditions, branching on the max-degree vertex) over degree arrays, either on
the CPU (sequential Numba search) or on the GPU (``method="hybrid"``: per-block local
stacks plus a global worklist; ``method="stackonly"``: sub-trees from a fixed depth).
:func:`maximum_independent_set` is the complement of a minimum cover.

Before searching, the root is reduced with the degree-one and degree-two-triangle rules
and the remaining graph is split into connected components, each solved on its own (an
extension of the paper, like the optional clique-cover lower bound on the CPU).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from kernels.backend import resolve_device

from .convert import as_graph
from .graph import Graph

__all__ = [
    "VertexCoverResult",
    "ParameterizedVertexCoverResult",
    "IndependentSetResult",
    "minimum_vertex_cover",
    "parameterized_vertex_cover",
    "maximum_independent_set",
    "is_vertex_cover",
]

METHODS = ("hybrid", "stackonly")
#: minimum_vertex_cover and parameterized_vertex_cover also take "auto" (the clique route)
MVC_METHODS = METHODS + ("auto",)
#: the clique route (method="auto"): components of at most this many vertices ...
CLIQUE_ROUTE_MAX_VERTICES = 1000
#: ... and at least this edge density (sparser ones have near-complete complements,
#: where the colouring bound is weak: MANN_a27's complement, density 0.01)
CLIQUE_ROUTE_MIN_DENSITY = 0.02


@dataclass(frozen=True)
class VertexCoverResult:
    """A vertex cover found by :func:`minimum_vertex_cover`.

    Attributes
    ----------
    cover : ndarray of int64
        Sorted vertex ids of the cover.
    size : int
        ``len(cover)``.
    optimal : bool
        True when the search proved that no smaller cover exists.
    lower_bound : int
        Best proven lower bound on the minimum cover size (``== size`` when optimal).
    time : float
        Wall-clock seconds.
    nodes : int
        Search-tree nodes visited (all workers, all components).
    worker_nodes : ndarray of int64
        Tree nodes per worker: one entry on the CPU, one per SM on the GPU.
    greedy_size : int
        Size of the paper's greedy cover that seeds the search.
    components : int
        Connected components searched after the root reduction.
    device, method : str
    """

    cover: np.ndarray = field(repr=False)
    size: int
    optimal: bool
    lower_bound: int
    time: float
    nodes: int
    worker_nodes: np.ndarray = field(repr=False)
    greedy_size: int
    components: int
    device: str
    method: str

    def __len__(self) -> int:
        return self.size

    @property
    def load_imbalance(self) -> float:
        """``max / mean`` tree nodes over the workers (1.0 is perfect balance)."""
        w = np.asarray(self.worker_nodes, dtype=np.float64)
        return float(w.max() / w.mean()) if len(w) and w.mean() > 0 else 1.0


@dataclass(frozen=True)
class ParameterizedVertexCoverResult:
    """Answer of :func:`parameterized_vertex_cover`: a cover of size ``<= k`` or a proof.

    Attributes
    ----------
    k : int
        The parameter.
    found : bool or None
        True: ``cover`` has at most ``k`` vertices. False: proved that no cover of size
        ``<= k`` exists. None: the time limit stopped the search before either.
    cover : ndarray of int64 or None
        Sorted cover (when ``found``).
    size : int or None
        ``len(cover)`` when found.
    proved : bool
        ``found is not None`` (the answer is definite).
    lower_bound : int
        ``k + 1`` when no cover exists, else a valid lower bound (0 if unknown).
    time, nodes, worker_nodes, device, method
        As in :class:`VertexCoverResult`.
    """

    k: int
    found: bool | None
    cover: np.ndarray | None = field(repr=False)
    size: int | None
    proved: bool
    lower_bound: int
    time: float
    nodes: int
    worker_nodes: np.ndarray = field(repr=False)
    device: str
    method: str

    def __bool__(self) -> bool:
        return bool(self.found)


@dataclass(frozen=True)
class IndependentSetResult:
    """A maximum independent set (complement of a minimum vertex cover).

    Attributes
    ----------
    vertices : ndarray of int64
        Sorted vertex ids.
    size : int
    optimal : bool
    upper_bound : int
        ``n - lower_bound`` of the cover (``== size`` when optimal).
    time, nodes, device, method
        As in :class:`VertexCoverResult`.
    """

    vertices: np.ndarray = field(repr=False)
    size: int
    optimal: bool
    upper_bound: int
    time: float
    nodes: int
    device: str
    method: str

    def __len__(self) -> int:
        return self.size


# ----------------------------------------------------------------------------- checks
def is_vertex_cover(G, cover) -> bool:
    """True when every edge of ``G`` has at least one endpoint in ``cover``.

    Parameters
    ----------
    G : Graph, networkx graph, sparse matrix or path
    cover : array_like of int
        Vertex ids (duplicates allowed). Ids outside ``0..n-1`` raise ``ValueError``.

    Examples
    --------
    >>> import numpy as np
    >>> from graphkit import Graph
    >>> G = Graph.from_edges(3, np.array([0, 1]), np.array([1, 2]))
    >>> is_vertex_cover(G, [1]), is_vertex_cover(G, [0])
    (True, False)
    """
    G = as_graph(G)
    c = np.asarray(cover)
    if c.size and not np.issubdtype(c.dtype, np.integer):
        raise TypeError(f"cover must hold integer vertex ids, got dtype {c.dtype}")
    c = c.astype(np.int64).ravel()
    if c.size and (c.min() < 0 or c.max() >= G.n):
        raise ValueError(f"cover holds vertex ids outside 0..{G.n - 1}")
    mark = np.zeros(G.n, dtype=bool)
    mark[c] = True
    u, v = G.edges()
    return bool(np.all(mark[u] | mark[v]))


# ----------------------------------------------------------------------------- helpers
def _check_args(device, method, time_limit, methods=METHODS):
    if method not in methods:
        raise ValueError(f"method must be one of {methods}, got {method!r}")
    if time_limit is not None:
        if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)):
            raise TypeError(f"time_limit must be a number of seconds or None, got {time_limit!r}")
        if not time_limit > 0:
            raise ValueError(f"time_limit must be positive, got {time_limit!r}")
    return resolve_device(device)


def _lb_mode(clique_bound):
    """Map ``clique_bound`` to the CPU search's bound mode (0 off, 1 always, 2 adaptive)."""
    if isinstance(clique_bound, str):
        if clique_bound != "auto":
            raise ValueError(f"clique_bound must be 'auto', True or False, got {clique_bound!r}")
        return 2
    if not isinstance(clique_bound, (bool, np.bool_)):
        raise TypeError(f"clique_bound must be 'auto', True or False, got {clique_bound!r}")
    return 1 if clique_bound else 0


def _check_kernelize(kernelize):
    if not (isinstance(kernelize, (bool, np.bool_)) or (isinstance(kernelize, str) and kernelize == "auto")):
        raise ValueError(f"kernelize must be 'auto', True or False, got {kernelize!r}")


def _use_kernel(kernelize, degrees):
    """``kernelize="auto"``: sparse graphs (average degree at most 32) of at most 200,000
    vertices (the reductions run in Python, about 5 s per million vertices)."""
    if kernelize == "auto":
        return 0 < len(degrees) <= 200_000 and int(np.sum(degrees)) <= 32 * len(degrees)
    return bool(kernelize)


def _kernelized(G: Graph):
    """(kernel graph, :class:`kernels.vc_kernelize.Kernel`) of ``G``; ``Kernel.lift`` maps
    a cover of the kernel graph back to ``G``."""
    from kernels.vc_kernelize import kernelize

    kernel = kernelize(G.indptr, G.indices)
    return Graph(kernel.indptr, kernel.indices), kernel


def _root(G: Graph):
    """Root degree array reduced by degree-one and degree-two-triangle, and its count."""
    from kernels.vertex_cover import reduce_cpu

    deg = G.degrees.astype(np.int32)
    count = reduce_cpu(G.indptr, G.indices, deg, 0, G.n + 1)
    return deg, count


def _components(G: Graph, deg):
    """Vertex lists of the connected components of the live part with at least one edge."""
    from scipy.sparse.csgraph import connected_components

    live = np.flatnonzero(deg > 0)
    if len(live) == 0:
        return []
    H = G.subgraph(live)
    ncomp, labels = connected_components(H.to_scipy(), directed=False)
    order = np.argsort(labels, kind="stable")
    bounds = np.searchsorted(labels[order], np.arange(ncomp + 1))
    return [live[order[bounds[i]:bounds[i + 1]]] for i in range(ncomp)]


def _search(H: Graph, deg, count, limit, *, pvc, dev, method, deadline, clique_bound, start_depth, config):
    """One search from a root; returns (best, best_deg, complete, nodes_per_worker).
    ``method="auto"`` takes the clique route where :func:`_clique_route` says so (from a
    root with ``count == 0``), else the Hybrid search."""
    from kernels import vertex_cover as kvc

    if method == "auto":
        if _clique_route(H):
            return _search_clique(H, dev, deadline, limit if pvc else None)
        method = "hybrid"
    if dev == "gpu":
        left = None if deadline is None else max(deadline - time.perf_counter(), 1e-3)
        r = kvc.search_gpu(H.indptr, H.indices, deg, count, limit, pvc=pvc, method=method,
                           start_depth=start_depth, config=config, time_limit=left)
        return r["best"], r["best_deg"], r["complete"], r["nodes_per_sm"]
    s = kvc.search_cpu(H.indptr, H.indices, deg, count, limit, pvc=pvc, use_lb=_lb_mode(clique_bound),
                       deadline=deadline)
    return s.best, s.best_deg, s.done, np.array([s.nodes], dtype=np.int64)


def _clique_route(H: Graph) -> bool:
    """``method="auto"``: solve this component through a maximum clique of its complement."""
    return H.n <= CLIQUE_ROUTE_MAX_VERTICES and 2 * H.m >= CLIQUE_ROUTE_MIN_DENSITY * H.n * (H.n - 1)


def _search_clique(H: Graph, dev, deadline, budget=None):
    """A minimum cover of ``H`` as the complement of a maximum clique of the complement
    graph (colouring branch and bound, :func:`graphkit.maximum_clique`); returns, like
    :func:`_search`, (size, marks with the cover negative, complete, nodes). With a
    ``budget`` (the decision version) only cliques of at least ``H.n - budget`` vertices
    are searched for on the CPU, and size -1 means no cover within the budget."""
    from kernels import cliques as kc

    from .clique_search import branch_and_bound_clique

    need = H.n - budget if budget is not None else 0
    if budget is not None and need <= 0:  # every vertex fits in the budget
        return H.n, np.full(H.n, -1, dtype=np.int32), True, np.zeros(1, dtype=np.int64)
    C = H.complement()
    if budget is not None and dev == "cpu":
        verts, complete, nodes = kc.max_clique_cpu(C.indptr, C.indices, need - 1, deadline or 0.0)
    else:
        left = None if deadline is None else max(deadline - time.perf_counter(), 1e-3)
        r = branch_and_bound_clique(C, time_limit=left, device=dev)
        verts, complete, nodes = r.indices, r.optimal, r.nodes
    marks = np.full(H.n, -1, dtype=np.int32)
    marks[verts] = 0
    size = H.n - len(verts)
    if budget is not None and size > budget:
        size = -1
    return size, marks, complete, np.array([nodes], dtype=np.int64)


def _add_load(acc, w):
    if acc is None:
        return np.asarray(w, dtype=np.int64).copy()
    if len(acc) < len(w):
        acc = np.concatenate([acc, np.zeros(len(w) - len(acc), dtype=np.int64)])
    acc[: len(w)] += np.asarray(w, dtype=np.int64)
    return acc


# ----------------------------------------------------------------------------- solvers
def minimum_vertex_cover(G, device="auto", method="hybrid", time_limit=None, *, clique_bound="auto",
                         kernelize="auto", start_depth=8, gpu_config=None) -> VertexCoverResult:
    """Exact minimum vertex cover by branch-and-reduce (paper 000).

    Parameters
    ----------
    G : Graph, networkx graph, sparse matrix or path
        Simple undirected graph.
    device : {"auto", "cpu", "gpu"}
        ``"auto"`` uses the GPU when one is usable.
    method : {"hybrid", "stackonly", "auto"}
        GPU work distribution: local stacks plus a global worklist (Hybrid) or sub-trees
        from depth ``start_depth`` (StackOnly). The CPU search is sequential either way.
        ``"auto"`` (beyond the paper) solves each component of at most
        ``CLIQUE_ROUTE_MAX_VERTICES`` vertices and edge density at least
        ``CLIQUE_ROUTE_MIN_DENSITY`` as the complement of a maximum clique of its
        complement graph (:func:`graphkit.maximum_clique`, colouring branch and bound, on
        the CPU or the GPU), and the rest with the Hybrid search: on one CPU core 12-90x
        faster on the DIMACS complements and 1.4-2.6x on small PACE instances than the
        paper's rules (``BENCHMARKS.md``).
    time_limit : float, optional
        Seconds; when reached, the best cover found is returned with ``optimal=False``.
    clique_bound : {"auto", True, False}
        CPU only: also prune with a greedy clique-cover lower bound (extension of the
        paper; fewer tree nodes, more work per node). ``"auto"`` evaluates it adaptively:
        at every node while it prunes, ever more rarely (down to every 64th node) while it
        does not. ``False`` runs the paper's rules only (the GPU kernels' algorithm).
    kernelize : {"auto", True, False}
        Before the search, reduce the graph with degree-two folding, domination and the
        LP (Nemhauser-Trotter) reduction (:mod:`kernels.vc_kernelize`; extension of the
        paper, on the CPU for either device). ``"auto"`` does so when the graph left by
        the root reduction has average degree at most 32 (sparse graphs, where these
        rules bite; the dense DIMACS complements are left to the paper's algorithm) and
        at most 200,000 vertices (the reductions run in Python and do not watch
        ``time_limit``).
    start_depth : int
        StackOnly sub-tree depth (the paper tries 8, 12 and 16).
    gpu_config : kernels.vertex_cover.GpuConfig, optional
        Override the launch configuration chosen by Section IV-E's rules.

    Returns
    -------
    VertexCoverResult

    Examples
    --------
    >>> import numpy as np
    >>> from graphkit import Graph
    >>> G = Graph.from_edges(5, np.array([0, 1, 2, 3, 4]), np.array([1, 2, 3, 4, 0]))  # C5
    >>> r = minimum_vertex_cover(G, device="cpu")
    >>> r.size, r.optimal, is_vertex_cover(G, r.cover)
    (3, True, True)
    """
    from kernels import vertex_cover as kvc

    G = as_graph(G)
    dev = _check_args(device, method, time_limit, MVC_METHODS)
    _lb_mode(clique_bound)
    _check_kernelize(kernelize)
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + float(time_limit)
    deg, count = _root(G)
    forced = np.flatnonzero(deg < 0)
    live = np.flatnonzero(deg > 0)
    kernel = None
    if len(live) and _use_kernel(kernelize, deg[live]):
        G, kernel = _kernelized(G.subgraph(live))
        count += kernel.forced
        deg = G.degrees.astype(np.int32)
    cover_parts = []
    lower = count
    greedy_total = count
    optimal = True
    nodes = 0
    load = None
    comps = _components(G, deg)
    for verts in comps:
        H = G.subgraph(verts)
        hdeg = H.degrees.astype(np.int32)
        ub, gdeg = kvc.greedy_cover_cpu(H.indptr, H.indices, hdeg, 0)
        greedy_total += ub
        best, best_deg = ub, gdeg
        if deadline is not None and time.perf_counter() > deadline:
            complete = False
        else:
            found, fdeg, complete, w = _search(H, hdeg, 0, ub - 1, pvc=False, dev=dev, method=method,
                                               deadline=deadline, clique_bound=clique_bound,
                                               start_depth=start_depth, config=gpu_config)
            nodes += int(np.sum(w))
            load = _add_load(load, w)
            if found >= 0 and found < best:
                best, best_deg = found, fdeg
        if complete:
            lower += best
        else:
            optimal = False
            lower += max(kvc.clique_cover_bound_cpu(H.indptr, H.indices, hdeg), kvc.lp_bound(H.indptr, H.indices))
        cover_parts.append(verts[np.flatnonzero(best_deg < 0)])
    cover = np.concatenate(cover_parts + [np.zeros(0, np.int64)]).astype(np.int64)
    if kernel is not None:
        cover = live[kernel.lift(cover)]
    cover = np.sort(np.concatenate([forced, cover]).astype(np.int64))
    if load is None:
        load = np.zeros(1, dtype=np.int64)
    size = len(cover)
    if lower >= size:  # the bounds met the cover: proved optimal even if the search stopped
        optimal = True
    return VertexCoverResult(cover=cover, size=size, optimal=optimal, lower_bound=size if optimal else min(lower, size),
                             time=time.perf_counter() - t0, nodes=nodes, worker_nodes=load,
                             greedy_size=int(greedy_total), components=len(comps), device=dev, method=method)


def parameterized_vertex_cover(G, k, device="auto", method="hybrid", time_limit=None, *, clique_bound="auto",
                               kernelize="auto", start_depth=8, gpu_config=None) -> ParameterizedVertexCoverResult:
    """Find a vertex cover with at most ``k`` vertices, or prove that none exists.

    The search stops at the first cover within the budget (on the GPU every block sees
    the found flag and exits). The high-degree rule and the edge-count stopping condition
    use ``k`` in place of the best size.

    Parameters
    ----------
    G : Graph, networkx graph, sparse matrix or path
    k : int
        Budget (non-negative).
    device, method, time_limit, clique_bound, kernelize, start_depth, gpu_config
        As in :func:`minimum_vertex_cover` (a kernelized graph is searched with the
        budget ``k`` minus the cover vertices the reductions fixed). With
        ``method="auto"`` a graph of at most ``CLIQUE_ROUTE_MAX_VERTICES`` vertices and
        density at least ``CLIQUE_ROUTE_MIN_DENSITY`` is decided by searching its
        complement for a clique of at least ``n - k`` vertices (on the CPU only for such
        cliques; on the GPU the maximum clique).

    Returns
    -------
    ParameterizedVertexCoverResult

    Examples
    --------
    >>> import numpy as np
    >>> from graphkit import Graph
    >>> G = Graph.from_edges(5, np.array([0, 1, 2, 3, 4]), np.array([1, 2, 3, 4, 0]))  # C5
    >>> parameterized_vertex_cover(G, 2, device="cpu").found
    False
    >>> r = parameterized_vertex_cover(G, 3, device="cpu")
    >>> r.found, r.size <= 3
    (True, True)
    """
    G = as_graph(G)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be an integer, got {k!r}")
    k = int(k)
    if k < 0:
        raise ValueError(f"k must be non-negative, got {k}")
    dev = _check_args(device, method, time_limit, MVC_METHODS)
    _lb_mode(clique_bound)
    _check_kernelize(kernelize)
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + float(time_limit)
    budget = k
    kernel = None
    if _use_kernel(kernelize, G.degrees):
        H, kernel = _kernelized(G)
        budget = k - kernel.forced
    else:
        H = G
    if budget < 0:  # the reductions alone fix more than k cover vertices
        return ParameterizedVertexCoverResult(k=k, found=False, cover=None, size=None, proved=True,
                                              lower_bound=k + 1, time=time.perf_counter() - t0, nodes=0,
                                              worker_nodes=np.zeros(1, np.int64), device=dev, method=method)
    deg = H.degrees.astype(np.int32)
    if H.m == 0:
        best, best_deg, complete, w = 0, deg, True, np.zeros(1, np.int64)
    else:
        best, best_deg, complete, w = _search(H, deg, 0, budget, pvc=True, dev=dev, method=method, deadline=deadline,
                                              clique_bound=clique_bound, start_depth=start_depth, config=gpu_config)
    elapsed = time.perf_counter() - t0
    if best >= 0:
        cover = np.flatnonzero(best_deg < 0).astype(np.int64)
        if kernel is not None:
            cover = kernel.lift(cover)
        return ParameterizedVertexCoverResult(k=k, found=True, cover=cover, size=len(cover), proved=True,
                                              lower_bound=0, time=elapsed, nodes=int(np.sum(w)),
                                              worker_nodes=np.asarray(w, np.int64), device=dev, method=method)
    found = False if complete else None
    return ParameterizedVertexCoverResult(k=k, found=found, cover=None, size=None, proved=complete,
                                          lower_bound=k + 1 if complete else 0, time=elapsed, nodes=int(np.sum(w)),
                                          worker_nodes=np.asarray(w, np.int64), device=dev, method=method)


def maximum_independent_set(G, device="auto", method="hybrid", time_limit=None, **kwargs) -> IndependentSetResult:
    """Maximum independent set: the complement of a minimum vertex cover.

    Parameters
    ----------
    G : Graph, networkx graph, sparse matrix or path
    device, method, time_limit, **kwargs
        Passed to :func:`minimum_vertex_cover`.

    Returns
    -------
    IndependentSetResult

    Examples
    --------
    >>> import numpy as np
    >>> from graphkit import Graph
    >>> G = Graph.from_edges(4, np.array([0, 1, 2]), np.array([1, 2, 3]))  # path P4
    >>> r = maximum_independent_set(G, device="cpu")
    >>> r.size, r.optimal
    (2, True)
    """
    G = as_graph(G)
    r = minimum_vertex_cover(G, device=device, method=method, time_limit=time_limit, **kwargs)
    mask = np.ones(G.n, dtype=bool)
    mask[r.cover] = False
    verts = np.flatnonzero(mask).astype(np.int64)
    return IndependentSetResult(vertices=verts, size=len(verts), optimal=r.optimal, upper_bound=G.n - r.lower_bound,
                                time=r.time, nodes=r.nodes, device=r.device, method=r.method)
