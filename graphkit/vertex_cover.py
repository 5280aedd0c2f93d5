"""Exact minimum vertex cover, parameterized vertex cover and maximum independent set.

A *vertex cover* of a graph is a set of vertices that touches every edge; a minimum one
has as few vertices as possible. Its complement is a maximum independent set (and a
maximum clique of the complement graph). The problem is NP-hard; real instances are
solved exactly by shrinking them with reduction rules and searching what is left.

:func:`minimum_vertex_cover` (``method="auto"``) runs the pipeline of
:mod:`kernels.vertex_cover.exact` on the CPU: branch-and-reduce with reductions inside
the search (degree one and two with folding, unconfined vertices, LP / crown, twins,
funnels, desks, packing constraints), LP / cycle / clique-cover lower bounds made
stronger by MaxSAT reasoning, branching on a maximum-degree vertex with its mirrors,
components solved separately; NuMVC local search for the first upper bound; and, on
kernels where the reductions do little, a clique-style branch and bound with MaxSAT
bounds in turns with it. ``method="hybrid"`` / ``"stackonly"`` run the algorithm of
"Parallel Vertex Cover Algorithms on GPUs" as published (the GPU kernels, or its
sequential CPU search with ``device="cpu"``). With a GPU (``device="gpu"``, or
``"auto"`` when one is usable) ``method="auto"`` runs the same pipeline and hands the GPU
what it is good at: the maximum clique of a dense kernel's complement (the colouring
branch and bound split over the warps; a short CPU run first settles the easy ones) and a
short Hybrid search on small sparse kernels.

Time limits are honoured to within a fraction of a second (the searches stop between
chunks) and return the best cover with a proven lower bound; ``KeyboardInterrupt`` stops
a run between chunks too. The limit counts the search, not the compilation: the first
call with a time limit in a process compiles the pipeline's Numba code (or loads it from
Numba's cache, about two seconds) before its clock starts (:func:`graphkit.warm_up` does
it ahead of time).

References
----------
T. Akiba and Y. Iwata, "Branch-and-reduce exponential/FPT algorithms in practice: a case
study of vertex cover", Theoretical Computer Science 609 (2016) 211-225.

D. Hespe, S. Lamm, C. Schulz and D. Strash, "WeGotYouCovered: the winning solver from the
PACE 2019 challenge, vertex cover track", Proc. CSC 2020, 1-11.

P. Yamout, K. Barada, A. Jaljuli, A. E. Mouawad and I. El Hajj, "Parallel vertex cover
algorithms on GPUs", Proc. IPDPS 2022, 201-211.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from kernels.backend import resolve_device
from kernels.console import search_progress

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

#: ``method`` values: the pipeline (``"auto"``, ``"branch_and_reduce"``: the same on the
#: CPU) and the GPU paper's algorithm (``"hybrid"``, ``"stackonly"``)
METHODS = ("auto", "branch_and_reduce", "hybrid", "stackonly")
PAPER_METHODS = ("hybrid", "stackonly")


def _compile_pipeline(time_limit, dev="cpu"):
    """With a time limit, compile (or load from the cache) the pipeline's searches (and on
    the GPU its kernels) once per process before the caller starts its clock: a cold
    Numba cache takes far longer than a typical limit, and the limit is meant for the
    search."""
    if time_limit is not None:
        from kernels.vertex_cover.exact import compile_once

        compile_once()
        if dev == "gpu":
            compile_once("gpu")


@dataclass(frozen=True)
class VertexCoverResult:
    """A vertex cover found by :func:`minimum_vertex_cover`.

    Attributes
    ----------
    cover : ndarray
        The cover, named as the input names its vertices (a networkx graph's nodes, else
        sorted vertex ids).
    size : int
        ``len(cover)``.
    optimal : bool
        True when the search proved that no smaller cover exists.
    lower_bound : int
        Best proven lower bound on the minimum cover size (``== size`` when optimal).
    time : float
        Wall-clock seconds.
    nodes : int
        Search-tree nodes (all searches, all workers).
    device, method : str
    kernel_size : int
        Vertices left by the reductions (-1 for the GPU paper's algorithm, which does
        not reduce first).
    solved_by : str
        What proved it: ``"reductions"``, ``"local_search"``, ``"branch_and_reduce"``,
        ``"clique_branch_and_bound"``, ``"gpu"``, ``"paper_cpu"``, or ``"time_limit"``.
    worker_nodes : ndarray of int64
        Tree nodes per worker: one entry on the CPU, one per SM on the GPU.
    indices : ndarray of int64
        The cover as sorted vertex ids.
    """

    cover: np.ndarray = field(repr=False)
    size: int
    optimal: bool
    lower_bound: int
    time: float
    nodes: int
    device: str
    method: str
    kernel_size: int = -1
    solved_by: str = ""
    worker_nodes: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64), repr=False)
    indices: np.ndarray | None = field(default=None, repr=False)

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
    cover : ndarray or None
        The cover (when ``found``), named as the input names its vertices.
    size : int or None
        ``len(cover)`` when found.
    proved : bool
        ``found is not None`` (the answer is definite).
    lower_bound : int
        ``k + 1`` when no cover exists, else a proven lower bound (0 if none).
    time, nodes, device, method, worker_nodes
        As in :class:`VertexCoverResult`.
    indices : ndarray of int64 or None
        The cover as vertex ids.
    """

    k: int
    found: bool | None
    cover: np.ndarray | None = field(repr=False)
    size: int | None
    proved: bool
    lower_bound: int
    time: float
    nodes: int
    device: str
    method: str
    worker_nodes: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64), repr=False)
    indices: np.ndarray | None = field(default=None, repr=False)

    def __bool__(self) -> bool:
        return bool(self.found)


@dataclass(frozen=True)
class IndependentSetResult:
    """A maximum independent set (complement of a minimum vertex cover).

    Attributes
    ----------
    vertices : ndarray
        Named as the input names its vertices.
    size : int
    optimal : bool
    upper_bound : int
        ``n - lower_bound`` of the cover (``== size`` when optimal).
    time, nodes, device, method
        As in :class:`VertexCoverResult`.
    indices : ndarray of int64
        The set as sorted vertex ids.
    """

    vertices: np.ndarray = field(repr=False)
    size: int
    optimal: bool
    upper_bound: int
    time: float
    nodes: int
    device: str
    method: str
    indices: np.ndarray | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return self.size


# ----------------------------------------------------------------------------- checks
def is_vertex_cover(G, cover) -> bool:
    """True when every edge of ``G`` has at least one endpoint in ``cover``.

    Parameters
    ----------
    G : Graph, networkx or igraph graph, sparse matrix or path
    cover : array_like
        Vertices (duplicates allowed), named as ``G`` names them (vertex ids for a graph
        without names; ids outside ``0..n-1`` raise ``ValueError``).

    Examples
    --------
    >>> import networkx as nx
    >>> is_vertex_cover(nx.path_graph(["a", "b", "c"]), ["b"]), is_vertex_cover(nx.path_graph(3), [0])
    (True, False)
    """
    G = as_graph(G)
    if G.labelled:
        c = G.to_ids(list(cover) if not isinstance(cover, np.ndarray) else cover)
    else:
        c = np.asarray(cover)
        if c.size and not np.issubdtype(c.dtype, np.integer):
            raise TypeError(f"cover must hold integer vertex ids, got dtype {c.dtype}")
    c = np.asarray(c, dtype=np.int64).ravel()
    if c.size and (c.min() < 0 or c.max() >= G.n):
        raise ValueError(f"cover holds vertex ids outside 0..{G.n - 1}")
    mark = np.zeros(G.n, dtype=bool)
    mark[c] = True
    u, v = G.edges()
    return bool(np.all(mark[u] | mark[v]))


# ----------------------------------------------------------------------------- helpers
def _check_args(device, method, time_limit):
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if time_limit is not None:
        if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)):
            raise TypeError(f"time_limit must be a number of seconds or None, got {time_limit!r}")
        if not time_limit > 0:
            raise ValueError(f"time_limit must be positive, got {time_limit!r}")
    return resolve_device(device)


def _paper_search(H: Graph, deg, count, limit, *, pvc, dev, method, deadline, start_depth, config):
    """The GPU paper's search from one root: (best, best_deg, complete, nodes_per_worker).
    On the GPU an instance the kernels cannot take runs on the CPU, with a warning."""
    from kernels import vertex_cover as kvc

    if dev == "gpu":
        left = None if deadline is None else max(deadline - time.perf_counter(), 1e-3)
        try:
            r = kvc.search_gpu(H.indptr, H.indices, deg, count, limit, pvc=pvc, method=method,
                               start_depth=start_depth, config=config, time_limit=left)
            return r["best"], r["best_deg"], r["complete"], r["nodes_per_sm"], "gpu"
        except kvc.GpuCapacityError as e:
            warnings.warn(f"vertex cover: the GPU search cannot take this instance ({e}); searching on the CPU",
                          RuntimeWarning, stacklevel=3)
    s = kvc.search_cpu(H.indptr, H.indices, deg, count, limit, pvc=pvc, use_lb=0, deadline=deadline)
    return s.best, s.best_deg, s.done, np.array([s.nodes], dtype=np.int64), "cpu"


def _paper_mvc(G: Graph, dev, method, deadline, start_depth, config):
    """Minimum cover by the GPU paper's algorithm (its rules and search), started only when
    its greedy cover is above the root's clique-cover / LP bound: a cover that meets a proven
    bound is optimal, whether the search ran to its end or stopped at the time limit."""
    from kernels import vertex_cover as kvc

    deg = G.degrees.astype(np.int32)
    ub, gdeg = kvc.greedy_cover_cpu(G.indptr, G.indices, deg, 0)
    best, best_deg = ub, gdeg
    if G.m == 0:
        return best_deg, True, ub, np.zeros(1, np.int64), dev, "reductions"
    lb = max(kvc.clique_cover_bound_cpu(G.indptr, G.indices, deg), kvc.lp_bound(G.indptr, G.indices))
    if ub <= lb:  # the paper's search would spend its whole budget failing to beat the bound
        return best_deg, True, ub, np.zeros(1, np.int64), dev, "lower_bound"
    found, fdeg, complete, w, used = _paper_search(G, deg, 0, ub - 1, pvc=False, dev=dev, method=method,
                                                   deadline=deadline, start_depth=start_depth, config=config)
    if 0 <= found < best:
        best, best_deg = found, fdeg
    solved_by = ("gpu" if used == "gpu" else "paper_cpu") if complete else \
        ("lower_bound" if best <= lb else "time_limit")
    complete = bool(complete) or best <= lb
    return best_deg, complete, best if complete else lb, w, used, solved_by


# ----------------------------------------------------------------------------- solvers
def minimum_vertex_cover(G, device="auto", method="auto", time_limit=None, *, progress=None, start_depth=8,
                         gpu_config=None) -> VertexCoverResult:
    """Exact minimum vertex cover.

    Parameters
    ----------
    G : Graph, networkx or igraph graph, sparse matrix or path
        Simple undirected graph.
    device : {"auto", "cpu", "gpu"}
        ``"auto"``: the GPU when one is usable. With ``method="auto"`` the GPU runs the
        pipeline's searches where they pay (dense kernels: the clique search on the
        kernel's complement; small sparse kernels: a short Hybrid search) and the CPU
        the rest; the result's ``device`` says whether the GPU took part.
    method : {"auto", "branch_and_reduce", "hybrid", "stackonly"}
        ``"auto"`` / ``"branch_and_reduce"``: the pipeline of
        :mod:`kernels.vertex_cover.exact` (see the module docstring). ``"hybrid"`` /
        ``"stackonly"``: the GPU paper's algorithm as published (per-block stacks plus a
        global worklist, or sub-trees from depth ``start_depth``), on the CPU its
        sequential search; the search starts only when the greedy cover is above the
        root's clique-cover / LP bound.
    time_limit : float, optional
        Seconds; when reached, the best cover found is returned with ``optimal=False``
        and a proven ``lower_bound``. The first call with a limit in a process compiles
        the pipeline before the clock starts (see the module docstring).
    progress : bool or callable, optional
        ``True``: a progress line on stderr (tqdm); a callable gets a dict (``best``,
        ``lower_bound``, ``nodes``, ``elapsed``) about twice a second.
    start_depth : int
        StackOnly sub-tree depth (the paper tries 8, 12 and 16).
    gpu_config : kernels.vertex_cover.GpuConfig, optional
        Override the GPU launch configuration (default: from the device's limits).

    Returns
    -------
    VertexCoverResult

    Examples
    --------
    >>> import networkx as nx
    >>> r = minimum_vertex_cover(nx.cycle_graph(5), device="cpu")
    >>> r.size, r.optimal, is_vertex_cover(nx.cycle_graph(5), r.cover)
    (3, True, True)
    >>> minimum_vertex_cover(nx.path_graph(["a", "b", "c", "d"]), device="cpu").cover.tolist()
    ['b', 'd']

    References
    ----------
    T. Akiba and Y. Iwata, "Branch-and-reduce exponential/FPT algorithms in practice: a
    case study of vertex cover", Theoretical Computer Science 609 (2016) 211-225.
    """
    G = as_graph(G)
    dev = _check_args(device, method, time_limit)
    if method not in PAPER_METHODS:
        _compile_pipeline(time_limit, dev)
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + float(time_limit)
    if method in PAPER_METHODS:
        best_deg, complete, lb, w, used, solved_by = _paper_mvc(G, dev, method, deadline, start_depth, gpu_config)
        ids = np.flatnonzero(np.asarray(best_deg) < 0).astype(np.int64)
        size = len(ids)
        return VertexCoverResult(cover=G.to_labels(ids), size=size, optimal=bool(complete),
                                 lower_bound=size if complete else int(min(lb, size)),
                                 time=time.perf_counter() - t0, nodes=int(np.sum(w)), device=used, method=method,
                                 kernel_size=-1, solved_by=solved_by, worker_nodes=np.asarray(w, np.int64),
                                 indices=ids)
    from kernels.vertex_cover.exact import solve

    cb, bar = search_progress(progress, "vertex cover", {"best": "best", "lb": "lower_bound"},
                              throttle_callable=False)
    try:
        left = None if deadline is None else max(deadline - time.perf_counter(), 1e-3)
        r = solve(G.indptr, G.indices, left, progress=cb, device=dev)
    finally:
        if bar is not None:
            bar.close()
    ids = np.sort(np.asarray(r.cover, dtype=np.int64))
    used = "gpu" if r.stats.get("gpu_launches") else "cpu"
    return VertexCoverResult(cover=G.to_labels(ids), size=r.size, optimal=r.optimal, lower_bound=r.lower_bound,
                             time=time.perf_counter() - t0, nodes=r.nodes, device=used, method="branch_and_reduce",
                             kernel_size=r.kernel_vertices, solved_by=r.solved_by,
                             worker_nodes=np.array([r.nodes], np.int64), indices=ids)


def parameterized_vertex_cover(G, k, device="auto", method="auto", time_limit=None, *, progress=None, start_depth=8,
                               gpu_config=None) -> ParameterizedVertexCoverResult:
    """Find a vertex cover with at most ``k`` vertices, or prove that none exists.

    Parameters
    ----------
    G : Graph, networkx or igraph graph, sparse matrix or path
    k : int
        Budget (non-negative; a budget of ``n`` or more is answered at once).
    device, method, time_limit, progress, start_depth, gpu_config
        As in :func:`minimum_vertex_cover`. The pipeline stops at the first cover within
        the budget (local search often finds one); the GPU paper's search stops every
        block as soon as one finds it.

    Returns
    -------
    ParameterizedVertexCoverResult

    Examples
    --------
    >>> import networkx as nx
    >>> parameterized_vertex_cover(nx.cycle_graph(5), 2, device="cpu").found
    False
    >>> r = parameterized_vertex_cover(nx.cycle_graph(5), 3, device="cpu")
    >>> r.found, r.size <= 3
    (True, True)
    """
    G = as_graph(G)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be an integer, got {k!r}")
    k = int(k)
    if k < 0:
        raise ValueError(f"k must be non-negative, got {k}")
    dev = _check_args(device, method, time_limit)
    if method not in PAPER_METHODS and k < G.n and G.m > 0:
        _compile_pipeline(time_limit, dev)
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + float(time_limit)

    def result(found, ids, nodes, lb, w=None, used=dev):
        ids = None if ids is None else np.sort(np.asarray(ids, dtype=np.int64))
        return ParameterizedVertexCoverResult(
            k=k, found=found, cover=None if ids is None else G.to_labels(ids), size=None if ids is None else len(ids),
            proved=found is not None, lower_bound=int(lb), time=time.perf_counter() - t0, nodes=int(nodes),
            device=used, method=method, worker_nodes=np.asarray(w if w is not None else [nodes], np.int64),
            indices=ids)

    # a budget of n or more: every non-isolated vertex is a cover (no search, no allocation
    # that grows with k)
    if k >= G.n or G.m == 0:
        ids = np.flatnonzero(G.degrees > 0) if G.m else np.zeros(0, np.int64)
        if len(ids) > k:  # cannot happen for k >= n
            ids = ids[:0]
        return result(True, ids, 0, 0)
    if method in PAPER_METHODS:
        deg = G.degrees.astype(np.int32)
        best, best_deg, complete, w, used = _paper_search(G, deg, 0, k, pvc=True, dev=dev, method=method,
                                                          deadline=deadline, start_depth=start_depth,
                                                          config=gpu_config)
        if best >= 0:
            return result(True, np.flatnonzero(np.asarray(best_deg) < 0), int(np.sum(w)), 0, w, used)
        return result(False if complete else None, None, int(np.sum(w)), k + 1 if complete else 0, w, used)
    from kernels.vertex_cover.exact import solve

    cb, bar = search_progress(progress, "vertex cover", {"best": "best", "lb": "lower_bound"},
                              throttle_callable=False)
    try:
        left = None if deadline is None else max(deadline - time.perf_counter(), 1e-3)
        r = solve(G.indptr, G.indices, left, bound=k + 1, progress=cb, device=dev)
    finally:
        if bar is not None:
            bar.close()
    used = "gpu" if r.stats.get("gpu_launches") else "cpu"
    if r.size <= k:
        return result(True, r.cover, r.nodes, 0, used=used)
    if r.optimal:
        return result(False, None, r.nodes, k + 1, used=used)
    return result(None, None, r.nodes, min(r.lower_bound, k), used=used)


def maximum_independent_set(G, device="auto", method="auto", time_limit=None, **kwargs) -> IndependentSetResult:
    """Maximum independent set: the complement of a minimum vertex cover.

    Parameters
    ----------
    G : Graph, networkx or igraph graph, sparse matrix or path
    device, method, time_limit, **kwargs
        Passed to :func:`minimum_vertex_cover`.

    Returns
    -------
    IndependentSetResult

    Examples
    --------
    >>> import networkx as nx
    >>> r = maximum_independent_set(nx.path_graph(4), device="cpu")
    >>> r.size, r.optimal
    (2, True)
    """
    G = as_graph(G)
    r = minimum_vertex_cover(G, device=device, method=method, time_limit=time_limit, **kwargs)
    mask = np.ones(G.n, dtype=bool)
    mask[r.indices] = False
    ids = np.flatnonzero(mask).astype(np.int64)
    return IndependentSetResult(vertices=G.to_labels(ids), size=len(ids), optimal=r.optimal,
                                upper_bound=G.n - r.lower_bound, time=r.time, nodes=r.nodes, device=r.device,
                                method=r.method, indices=ids)
