"""Exact treewidth and tree decompositions.

The treewidth of a graph ``G`` is the smallest width (largest bag size minus one) of a
tree decomposition of ``G``: a tree whose nodes carry bags of vertices such that every
vertex is in a bag, both ends of every edge share a bag, and the bags holding any vertex
form a connected subtree. Equivalently it is the smallest, over elimination orderings, of
the largest number of later neighbours a vertex has when the vertices are eliminated in
that order (each elimination making the remaining neighbourhood a clique).

:func:`treewidth` computes it exactly, with a decomposition and an ordering, by the pipeline
of the strongest published solvers (:mod:`kernels.treewidth.solve`): simplicial and almost
simplicial reductions, greedy upper bounds and contraction lower bounds, a split at safe
separators, and for each remaining piece an exact search for ``k`` rising from the lower
bound. The default search is Tamaki's positive-instance driven dynamic programming
(``method="pid"``, CPU, Numba); the breadth-first search over elimination prefixes of van der
Zanden and Bodlaender (``method="bfs"``, CPU or GPU, exact hash set or the paper's Bloom
filter) is kept for small dense pieces and for reproducing that paper. Every phase honours
``time_limit``: at the limit the best valid decomposition comes back with ``optimal=False``
and the proven lower bound.

References
----------
.. [1] H. Tamaki, "Positive-instance driven dynamic programming for treewidth", Journal of
   Combinatorial Optimization 37(4):1283-1311, 2019 (ESA 2017).
.. [2] T. C. van der Zanden and H. L. Bodlaender, "Computing treewidth on the GPU",
   IPEC 2017, LIPIcs 89, 29:1-29:13.
.. [3] H. L. Bodlaender and A. M. C. A. Koster, "Safe separators for treewidth", Discrete
   Mathematics 306(3):337-350, 2006.
.. [4] H. L. Bodlaender and A. M. C. A. Koster, "Treewidth computations I. Upper bounds" and
   "II. Lower bounds", Information and Computation 208(3):259-275, 2010 and
   209(7):1103-1119, 2011.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

import numpy as np

from kernels.backend import resolve_device

from .convert import as_graph
from .io import Bags, TreeDecomposition

__all__ = [
    "TreewidthResult",
    "treewidth",
    "tree_decomposition",
    "is_tree_decomposition",
    "treewidth_bounds",
    "decomposition_from_ordering",
    "ordering_width",
]

DEDUP = ("exact", "bloom")
METHODS = ("auto", "pid", "bfs")


@dataclass(frozen=True)
class TreewidthResult:
    """Result of :func:`treewidth`.

    Attributes
    ----------
    width : int
        Width of the returned decomposition (and of ``ordering``).
    optimal : bool
        ``True`` only when ``width`` is proven to be the treewidth.
    lower_bound, upper_bound : int
        Proven lower bound and the width found (``upper_bound == width``).
    status : str
        ``"optimal"``, ``"time_limit"``, ``"memory"`` (the exact search filled its
        ``max_memory``), ``"overflow"`` (a ``bfs`` wavefront exceeded ``max_states``) or
        ``"monte_carlo"`` (Bloom-filter search could not prove optimality).
    phase : str or None
        What proved optimality: ``"bounds"`` (greedy upper bound met a lower bound, after the
        reductions and safe separators), ``"pid"`` or ``"bfs"`` (the exact search); ``None``
        when not optimal.
    method : str
        Exact search used on the pieces (``"pid"`` or ``"bfs"``).
    states_expanded : int
        States expanded by the ``bfs`` search (0 for ``pid``).
    reduced_size : int
        Largest piece left after the reductions.
    device, dedup : str
    time : float
        Wall time in seconds.
    ordering : ndarray
        Elimination ordering (all vertices) of width at most ``width``; vertex names on a
        labelled graph (networkx or igraph input), ids otherwise.
    decomposition : TreeDecomposition
        Tree decomposition of width ``width``; its bags hold vertex names on a labelled graph.
    ordering_indices, decomposition_indices
        The same in vertex ids ``0 .. n-1``.
    iterations : tuple of dict
        One record per (piece, k) of the exact search.
    stats : dict
        Where the time went (``times``), the pieces and their exact-search statistics,
        the number of safe-separator parts, the vertices of the largest part left to the
        exact search after the split (``largest_part``) and what supplied the lower bound
        (``lower_bound_from``).
    """

    width: int
    optimal: bool
    lower_bound: int
    upper_bound: int
    status: str
    states_expanded: int
    reduced_size: int
    device: str
    dedup: str
    time: float
    ordering: np.ndarray = field(repr=False)
    decomposition: TreeDecomposition = field(repr=False)
    iterations: tuple = field(repr=False, default=())
    phase: str | None = None
    method: str = "pid"
    stats: dict = field(repr=False, default_factory=dict)
    ordering_indices: np.ndarray | None = field(repr=False, default=None)
    decomposition_indices: TreeDecomposition | None = field(repr=False, default=None)

    @property
    def states_per_second(self) -> float:
        """States expanded per second of wall time (``bfs``)."""
        return self.states_expanded / self.time if self.time > 0 else 0.0


# --------------------------------------------------------------------------- helpers
def _adjacency_sets(G) -> list:
    return [set(G.indices[G.indptr[v]: G.indptr[v + 1]].tolist()) for v in range(G.n)]


def ordering_width(G, ordering) -> int:
    """Width of an elimination ordering: the largest degree of a vertex when it is eliminated.

    Parameters
    ----------
    G : Graph or anything :func:`graphkit.as_graph` accepts
    ordering : sequence
        A permutation of the vertices (their names on a labelled graph, e.g. networkx input).

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> graphkit.ordering_width(nx.cycle_graph(5), [0, 1, 2, 3, 4])
    2
    """
    G = as_graph(G)
    td = decomposition_from_ordering(G, ordering)
    return td.width


def _ids(G, vertices):
    """Vertex ids of ``vertices`` (names on a labelled graph)."""
    return np.asarray(G.to_ids(vertices) if G.labelled else vertices)


def _sorted_unique(keys):
    keys = np.sort(keys)
    return keys[np.concatenate([[True], keys[1:] != keys[:-1]])] if keys.size else keys


def _named(G, td):
    """``td`` with its bags in the graph's vertex names (unchanged for an unlabelled graph)."""
    if not G.labelled or not len(td.bags):
        return td
    bags = td.bags if isinstance(td.bags, Bags) else Bags.from_list(td.bags)
    return TreeDecomposition(Bags(bags.ptr, G.to_labels(bags.vertices.astype(np.int64))), td.edges)


def decomposition_from_ordering(G, ordering) -> TreeDecomposition:
    """Tree decomposition of an elimination ordering: one bag per vertex.

    The bag of ``v`` is ``v`` and its neighbours eliminated after it in the filled graph;
    its parent is the bag of the first of those neighbours to be eliminated. Trees of
    different components are chained into one tree.

    Parameters
    ----------
    G : Graph or anything :func:`graphkit.as_graph` accepts
    ordering : sequence
        A permutation of the vertices: ``range(G.n)``, or the vertex names of a labelled
        graph (networkx input).

    Returns
    -------
    TreeDecomposition
        Bag ``i`` belongs to ``ordering[i]``; its width is the width of the ordering. Bags
        hold vertex names on a labelled graph.

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> td = graphkit.decomposition_from_ordering(nx.path_graph(3), [0, 1, 2])
    >>> [b.tolist() for b in td.bags], td.edges.tolist()
    ([[0, 1], [1, 2], [2]], [[0, 1], [1, 2]])
    """
    G = as_graph(G)
    order = np.asarray(_ids(G, ordering), dtype=np.int64).ravel()
    n = G.n
    if order.size != n or (n and (order.min() < 0 or order.max() >= n or np.unique(order).size != n)):
        raise ValueError("ordering must be a permutation of the vertices")
    adj = _adjacency_sets(G)
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    bags, edges, roots = [], [], []
    for i, v in enumerate(order.tolist()):
        higher = [u for u in adj[v] if pos[u] > i]
        for a in higher:
            adj[a].update(higher)
            adj[a].discard(a)
        bags.append(np.asarray(sorted([v] + higher), dtype=np.int64))
        if higher:
            edges.append((i, int(min(pos[u] for u in higher))))
        else:
            roots.append(i)
    for a, b in zip(roots[:-1], roots[1:]):
        edges.append((a, b))
    E = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    return _named(G, TreeDecomposition(bags, E))


def is_tree_decomposition(G, td, width=None) -> bool:
    """Check that ``td`` is a tree decomposition of ``G`` (and of width ``width`` if given).

    Conditions: bag vertices are valid, every vertex is in a bag, both ends of every edge
    share a bag, the bag graph is a tree, and the bags holding any vertex form a connected
    subtree.

    Parameters
    ----------
    G : Graph or anything :func:`graphkit.as_graph` accepts
    td : TreeDecomposition
        Or any object with ``bags`` (sequence of vertex arrays) and ``edges`` (k x 2). On a
        labelled graph (networkx input) the bags hold vertex names.
    width : int, optional
        Required width (largest bag size minus one).

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> td = graphkit.tree_decomposition(nx.cycle_graph(6))
    >>> graphkit.is_tree_decomposition(nx.cycle_graph(6), td, width=2)
    True
    >>> G = nx.grid_2d_graph(3, 3)
    >>> graphkit.is_tree_decomposition(G, graphkit.tree_decomposition(G), width=3)
    True
    """
    G = as_graph(G)
    if not hasattr(td, "bags") or not hasattr(td, "edges"):
        raise TypeError(f"td must have 'bags' and 'edges', got {type(td).__name__}")
    bags = td.bags if isinstance(td.bags, Bags) else Bags.from_list(td.bags)
    nb = len(bags)
    if G.labelled:
        try:
            verts = np.asarray(G.to_ids(list(bags.vertices)), dtype=np.int64) if bags.vertices.size else \
                np.zeros(0, dtype=np.int64)
        except KeyError:  # a name that is not a vertex
            return False
    else:
        try:
            verts = np.asarray(bags.vertices, dtype=np.int64).ravel()
        except (TypeError, ValueError):
            return False
    ptr = bags.ptr
    E = np.asarray(td.edges, dtype=np.int64).reshape(-1, 2)
    n = G.n
    if n == 0:
        return E.shape[0] == max(0, nb - 1) and verts.size == 0
    if nb == 0:
        return False
    if verts.size and (verts.min() < 0 or verts.max() >= n):
        return False
    sizes = np.diff(ptr)
    if width is not None and int(sizes.max()) - 1 != width:
        return False
    # tree: nb - 1 edges, connected
    if E.shape[0] != nb - 1 or (E.size and (E.min() < 0 or E.max() >= nb)):
        return False
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    T = coo_matrix((np.ones(E.shape[0]), (E[:, 0], E[:, 1])), shape=(nb, nb)).tocsr()
    if connected_components(T, directed=False)[0] != 1:
        return False
    # (bag, vertex) pairs without repeats inside a bag
    owner = np.repeat(np.arange(nb, dtype=np.int64), sizes)
    pairs = _sorted_unique(owner * n + verts)
    owner, verts = pairs // n, pairs % n
    members = np.bincount(verts, minlength=n)
    if np.any(members == 0):
        return False  # a vertex in no bag
    # the bags holding a vertex form a subtree iff the tree edges inside them number one less
    lo = np.searchsorted(pairs, np.arange(nb + 1, dtype=np.int64) * n)
    inside = np.zeros(n, dtype=np.int64)
    chunk = max(1, (1 << 22) // max(1, int(sizes.max())))  # tree edges per batch
    for c in range(0, E.shape[0], chunk):
        e = E[c: c + chunk]
        # the vertices of each edge's two bags, keyed by edge; a key seen twice is shared
        keys = []
        for side in (0, 1):
            x = e[:, side]
            cnt = lo[x + 1] - lo[x]
            idx = np.repeat(lo[x] - np.cumsum(np.concatenate([[0], cnt[:-1]])), cnt) + np.arange(cnt.sum())
            keys.append(np.repeat(np.arange(e.shape[0], dtype=np.int64), cnt) * n + verts[idx])
        k = np.sort(np.concatenate(keys))
        shared = k[1:][k[1:] == k[:-1]] % n
        inside += np.bincount(shared, minlength=n)
    if np.any(inside != members - 1):
        return False
    # both ends of every edge in one bag: the edges covered by the pairs inside each bag
    u, v = G.edges()
    u, v = np.asarray(u, dtype=np.int64), np.asarray(v, dtype=np.int64)
    keep = u != v
    want = _sorted_unique(np.minimum(u[keep], v[keep]) * n + np.maximum(u[keep], v[keep]))
    if want.size == 0:
        return True
    covered = np.zeros(want.size, dtype=bool)
    bsz = np.diff(lo)
    start = 0
    while start < nb:
        # a block of bags with at most ~4M vertex pairs
        cum = np.cumsum(bsz[start:] ** 2)
        stop = start + max(1, int(np.searchsorted(cum, 1 << 22, side="right")))
        for s in np.unique(bsz[start:stop]).tolist():
            if s < 2:
                continue
            rows = start + np.flatnonzero(bsz[start:stop] == s)
            M = verts[lo[rows][:, None] + np.arange(s)]
            a, c = np.triu_indices(s, 1)
            keys = (M[:, a] * n + M[:, c]).ravel()  # each bag's vertices are sorted: a < c
            pos = np.searchsorted(want, keys)
            ok = pos < want.size
            pos, keys = pos[ok], keys[ok]
            covered[pos[want[pos] == keys]] = True
        start = stop
    return bool(covered.all())


def treewidth_bounds(G):
    """Fast lower and upper bounds: ``(lower, upper, ordering)``.

    Lower bound: the larger of the degeneracy and the contraction bound MMD+; upper bound:
    the better of the min-degree and min-fill elimination orderings (returned).

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> lo, hi, order = graphkit.treewidth_bounds(nx.complete_graph(5))
    >>> lo, hi
    (4, 4)
    """
    from kernels.treewidth import bounds
    from kernels.treewidth.solve import bitsets_from_csr

    G = as_graph(G)
    if G.n == 0:
        return -1, -1, np.zeros(0, dtype=np.int64)
    adj = bitsets_from_csr(G.indptr.astype(np.int64), G.indices.astype(np.int64), G.n)
    lo = max(int(bounds.degeneracy(adj)), int(bounds.mmd_plus(adj, -1)))
    o1, w1 = bounds.elimination_ordering(adj, bounds.MIN_DEGREE, -1, -1)
    o2, w2 = bounds.elimination_ordering(adj, bounds.MIN_FILL, -1, -1)
    return lo, int(min(w1, w2)), G.to_labels(o1 if w1 <= w2 else o2)


def _cores():
    """CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def treewidth(G, device="auto", time_limit=None, *, method="auto", dedup="exact", preprocess=True,
              separators=True, clique=True, disjoint_paths=True, mmw=True, simplicial_rule=True,
              max_states=None, max_memory=None, gpu_assist=False) -> TreewidthResult:
    """Exact treewidth with a tree decomposition and an elimination ordering.

    Parameters
    ----------
    G : Graph, networkx graph, scipy sparse matrix or path
    device : {"auto", "cpu", "gpu"}
        Where the exact search runs. ``"cpu"``: PID. ``"gpu"``: the breadth-first search
        (``method="bfs"``) on the GPU. ``"auto"``: PID on the CPU; with a usable GPU and a
        second CPU core, on the pieces where the GPU can pay (at most 256 vertices, lower
        bound a large enough fraction of the size, still unsolved after a head start), PID
        races the breadth-first search on the GPU, run by a second thread: the first proof
        wins, the other is cancelled, and widths either refutes are skipped by the other.
        Widths never depend on the device. ``device`` of the result says whether the GPU
        was used.
    time_limit : float, optional
        Seconds for the whole computation; at the limit the best decomposition found comes
        back with ``optimal=False``, ``status="time_limit"`` and the proven lower bound.
        The kernels (CPU, and GPU where it may be used) are compiled or loaded from their
        caches before the clock starts, once per process.
    method : {"auto", "pid", "bfs"}
        Exact search on the pieces left by the preprocessing: positive-instance driven
        dynamic programming (``"pid"``, CPU) or the paper's breadth-first search over
        elimination prefixes (``"bfs"``, CPU or GPU). ``"auto"``: ``"bfs"`` when
        ``device="gpu"``, else ``"pid"``.
    dedup : {"exact", "bloom"}
        Duplicate removal of ``method="bfs"``: exact hash set (proofs) or the paper's Bloom
        filter (Monte Carlo: a failed ``k`` is only probable, so the result is optimal only
        where a certified lower bound meets it).
    preprocess : bool
        Apply the simplicial / almost simplicial reductions.
    separators : bool
        Split the greedy decomposition at safe separators and solve the parts separately.
    clique, disjoint_paths, mmw, simplicial_rule : bool
        Options of ``method="bfs"`` (the paper's optimizations): exclude a maximum clique
        from elimination, add edges between pairs with more than ``k`` vertex-disjoint
        paths (with the LBP+ lower bound), use the minor-min-width bound, and expand a
        state with a simplicial or almost simplicial candidate by that vertex only.
    max_states : int, optional
        Largest ``bfs`` wavefront; a level that does not fit stops with
        ``status="overflow"``.
    max_memory : int, optional
        Bytes the PID tables of one piece may take (default 2 GiB); a search that fills
        them stops with ``status="memory"``.
    gpu_assist : bool
        With ``device="auto"``, ``method="auto"`` and a usable GPU: race the GPU search on
        every piece of at most 256 vertices from its start, whatever its density (the
        default race takes only the pieces where the GPU measurably pays).

    Returns
    -------
    TreewidthResult

    Raises
    ------
    MemoryError
        A connected component too large for the dense bitset representation of the
        solver within ``max_memory`` (about ``n * n / 2`` bytes for ``n`` vertices).

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> res = graphkit.treewidth(nx.grid_2d_graph(4, 4), device="cpu")
    >>> res.width, res.optimal
    (4, True)
    >>> graphkit.is_tree_decomposition(nx.grid_2d_graph(4, 4), res.decomposition, width=4)
    True
    >>> res = graphkit.treewidth(nx.petersen_graph(), method="bfs", device="cpu")
    >>> res.width, res.optimal, res.method
    (4, True, 'bfs')

    References
    ----------
    .. [1] H. Tamaki, "Positive-instance driven dynamic programming for treewidth", Journal
       of Combinatorial Optimization 37(4):1283-1311, 2019.
    .. [2] T. C. van der Zanden and H. L. Bodlaender, "Computing treewidth on the GPU",
       IPEC 2017, LIPIcs 89, 29:1-29:13.
    """
    if dedup not in DEDUP:
        raise ValueError(f"dedup must be one of {DEDUP}, got {dedup!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if time_limit is not None and (isinstance(time_limit, bool) or not isinstance(time_limit, (int, float))
                                   or not time_limit > 0):
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    if max_states is not None and (not isinstance(max_states, (int, np.integer)) or max_states < 1):
        raise ValueError(f"max_states must be a positive integer, got {max_states!r}")
    if max_memory is not None and (not isinstance(max_memory, (int, np.integer)) or max_memory < 1 << 20):
        raise ValueError(f"max_memory must be an integer of at least 2**20 bytes, got {max_memory!r}")
    if method == "pid" and device == "gpu":
        raise ValueError("method='pid' runs on the CPU; use method='bfs' for the GPU")
    dev = resolve_device(device)
    # device="auto" with a usable GPU and a second core to drive it: PID races the GPU search
    # on the pieces where it can pay (every piece it can take with gpu_assist)
    race = None
    if method == "auto" and device == "auto" and dev == "gpu" and _cores() >= 2:
        race = "always" if gpu_assist else "auto"
    if method == "auto":
        method = "bfs" if device == "gpu" else "pid"
    if method == "pid":
        dev = "cpu"
    from kernels.treewidth.solve import solve, warm_up, warm_up_gpu

    if time_limit is not None:
        # the limit is for the solve: compile (or load) the CPU kernels before the clock
        # starts, once per process (a cold Numba cache takes far longer than most limits),
        # and the GPU kernels where the GPU may be used
        warm_up(method)
        if dev == "gpu" or race:
            warm_up_gpu()
    t0 = time.perf_counter()
    G = as_graph(G)

    left = None if time_limit is None else max(1e-3, float(time_limit) - (time.perf_counter() - t0))
    out = solve(G.indptr.astype(np.int64), G.indices.astype(np.int64), G.n, time_limit=left, method=method,
                device=dev, options={"preprocess": preprocess, "separators": separators, "gpu_race": race,
                                     "clique": clique,
                                     "disjoint_paths": disjoint_paths, "mmw": mmw, "simplicial_rule": simplicial_rule,
                                     "dedup": dedup, "max_states": max_states,
                                     "max_memory": int(max_memory) if max_memory else 2 << 30})
    td = TreeDecomposition(Bags(out["bag_ptr"], out["bag_vertices"]), out["edges"])
    ordering = out["ordering"]
    width = td.width
    stats = {"times": out["times"], "pieces": out["pieces"], "parts": out["parts"], "largest_part": out["largest_part"],
             "lower_bound_from": out["lb_source"], "peeled": out["peeled"]}
    if out["gpu_used"]:
        dev = "gpu"
    return TreewidthResult(width, out["status"] == "optimal", int(out["lower"]), int(width), out["status"],
                           int(out["expanded"]), int(out["largest_core"]), dev, dedup, time.perf_counter() - t0,
                           G.to_labels(ordering), _named(G, td), tuple(out["iterations"]), out["phase"], method,
                           stats, ordering, td)


def tree_decomposition(G, device="auto", time_limit=None, **kwargs) -> TreeDecomposition:
    """Tree decomposition of minimum width (best found within ``time_limit``).

    Shorthand for ``treewidth(G, ...).decomposition``; see :func:`treewidth`.

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> graphkit.tree_decomposition(nx.complete_graph(4)).width
    3
    """
    return treewidth(G, device=device, time_limit=time_limit, **kwargs).decomposition
