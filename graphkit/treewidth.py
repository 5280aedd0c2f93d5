"""Exact treewidth and tree decompositions (paper 002: van der Zanden & Bodlaender).

Pipeline of :func:`treewidth`:

1. **Safe reductions** (beyond the paper; as in PACE solvers): repeatedly eliminate
   *simplicial* vertices (neighbourhood is a clique; raises the lower bound to their
   degree) and *almost simplicial* vertices (all neighbours but one form a clique) whose
   degree is at most the current lower bound. Both are safe: the treewidth of the graph
   is the maximum of the lower bound and the treewidth of the reduced graph.
2. **Split** the reduced graph into connected components and these into atoms along
   clique minimal separators (MCS-M, Berry et al.); atoms are solved independently and
   their decompositions glued along the separators (safe: the treewidth is the maximum
   over the atoms).
3. **Bounds** per component: upper bound from the min-degree and min-fill heuristics,
   lower bound from degeneracy, minor-min-width and a maximum clique.
4. **Exact search** (Section 3 of the paper) for ``k`` from the lower bound upwards: a
   breadth-first sweep over sets ``S`` of eliminated vertices, with the three
   optimizations of the paper (a maximum clique is never eliminated, edges are added
   between pairs with more than ``k`` vertex-disjoint paths, the search stops once
   ``k + 1`` vertices remain). Duplicates are removed exactly with a hash set
   (``dedup="exact"``, the default, so ``optimal=True`` is a proof) or, as in the paper,
   with a Bloom filter (``dedup="bloom"``: a Monte Carlo method; a false positive can drop
   the state that leads to a solution, so only the widths certified by the lower bounds
   are reported as optimal).
5. The elimination ordering is read back from parent pointers stored with every state,
   and the tree decomposition is built from the ordering.

What can be solved: the number of states is the number of feasible sets ``S``, which
grows roughly like ``binomial(n, n/2)`` in the worst case; on one CPU core instances of
about 30-40 vertices (after preprocessing) with moderate treewidth finish in seconds,
on an H100 up to about 60 vertices (the paper's Table 1 instances). Larger graphs get the
heuristic upper bound and the certified lower bound with ``optimal=False`` (time limit
or wavefront overflow, reported in the result).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from kernels.backend import resolve_device

from .convert import as_graph
from .io import TreeDecomposition

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


@dataclass(frozen=True)
class TreewidthResult:
    """Result of :func:`treewidth`.

    Attributes
    ----------
    width : int
        Width of the returned decomposition / ordering.
    optimal : bool
        ``True`` when ``width`` is proven to be the treewidth.
    lower_bound, upper_bound : int
        Proven lower bound and the width found (``upper_bound == width``).
    ordering : ndarray
        Elimination ordering (all vertices) of width ``width``.
    decomposition : TreeDecomposition
        Tree decomposition built from ``ordering`` (one bag per vertex).
    status : str
        ``"optimal"``, ``"time_limit"``, ``"overflow"`` (a wavefront exceeded the state
        buffer) or ``"monte_carlo"`` (Bloom-filter search could not prove optimality).
    states_expanded : int
        Total number of states expanded over all components and values of ``k``.
    iterations : tuple of dict
        One record per (component, k): ``component`` size, ``k``, ``found``,
        ``expanded``, ``level_sizes``, ``overflow``, ``dropped``, ``device``, ``time``.
    reduced_size : int
        Largest component after the safe reductions.
    device, dedup : str
    time : float
        Wall time in seconds.
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

    @property
    def states_per_second(self) -> float:
        """States expanded per second of wall time."""
        return self.states_expanded / self.time if self.time > 0 else 0.0


# --------------------------------------------------------------------------- helpers
def _adjacency_sets(G) -> list:
    return [set(G.indices[G.indptr[v]: G.indptr[v + 1]].tolist()) for v in range(G.n)]


def _dense(adj: list, verts) -> np.ndarray:
    idx = {v: i for i, v in enumerate(verts)}
    A = np.zeros((len(verts), len(verts)), dtype=np.bool_)
    for i, v in enumerate(verts):
        for u in adj[v]:
            j = idx.get(u)
            if j is not None:
                A[i, j] = True
    return A


def _missing_pairs(adj, N, limit):
    """Up to ``limit`` non-adjacent pairs inside ``N``."""
    out = []
    Nl = list(N)
    for i, a in enumerate(Nl):
        na = adj[a]
        for b in Nl[i + 1:]:
            if b not in na:
                out.append((a, b))
                if len(out) >= limit:
                    return out
    return out


def _eliminate(adj, v):
    N = adj[v]
    for a in N:
        adj[a].discard(v)
        adj[a] |= N
        adj[a].discard(a)
    adj[v] = set()


def _reduce(adj, alive, low):
    """Simplicial / almost simplicial reductions in place; returns (eliminated order, low)."""
    order = []
    changed = True
    while changed:
        changed = False
        for v in list(alive):
            N = adj[v]
            d = len(N)
            if d > 64 and d > low:
                continue  # simplicial check too costly for the gain
            missing = _missing_pairs(adj, N, d if d <= low else 1)
            ok = False
            if not missing:
                low = max(low, d)
                ok = True
            elif d <= low:
                cand = set(missing[0])
                for pair in missing[1:]:
                    cand &= set(pair)
                    if not cand:
                        break
                ok = bool(cand)
            if ok:
                _eliminate(adj, v)
                alive.discard(v)
                order.append(v)
                changed = True
    return order, low


def ordering_width(G, ordering) -> int:
    """Width of an elimination ordering: the largest degree of a vertex when it is eliminated.

    Parameters
    ----------
    G : Graph or anything :func:`graphkit.as_graph` accepts
    ordering : sequence of int
        A permutation of the vertices.

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> graphkit.ordering_width(nx.cycle_graph(5), [0, 1, 2, 3, 4])
    2
    """
    G = as_graph(G)
    td = decomposition_from_ordering(G, ordering)
    return td.width


def decomposition_from_ordering(G, ordering) -> TreeDecomposition:
    """Tree decomposition of an elimination ordering: one bag per vertex.

    The bag of ``v`` is ``v`` and its neighbours eliminated after it in the filled graph;
    its parent is the bag of the first of those neighbours to be eliminated. Trees of
    different components are chained into one tree.

    Parameters
    ----------
    G : Graph or anything :func:`graphkit.as_graph` accepts
    ordering : sequence of int
        A permutation of ``range(G.n)``.

    Returns
    -------
    TreeDecomposition
        Bag ``i`` belongs to ``ordering[i]``; its width is the width of the ordering.

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> td = graphkit.decomposition_from_ordering(nx.path_graph(3), [0, 1, 2])
    >>> [b.tolist() for b in td.bags], td.edges.tolist()
    ([[0, 1], [1, 2], [2]], [[0, 1], [1, 2]])
    """
    G = as_graph(G)
    order = np.asarray(ordering, dtype=np.int64).ravel()
    n = G.n
    if order.size != n or (n and (order.min() < 0 or order.max() >= n or np.unique(order).size != n)):
        raise ValueError("ordering must be a permutation of the vertices 0..n-1")
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
    return TreeDecomposition(bags, E)


def is_tree_decomposition(G, td, width=None) -> bool:
    """Check that ``td`` is a tree decomposition of ``G`` (and of width ``width`` if given).

    Conditions: bag vertices are valid, every vertex is in a bag, both ends of every edge
    share a bag, the bag graph is a tree, and the bags holding any vertex form a connected
    subtree.

    Parameters
    ----------
    G : Graph or anything :func:`graphkit.as_graph` accepts
    td : TreeDecomposition
        Or any object with ``bags`` (sequence of vertex arrays) and ``edges`` (k x 2).
    width : int, optional
        Required width (largest bag size minus one).

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> td = graphkit.tree_decomposition(nx.cycle_graph(6))
    >>> graphkit.is_tree_decomposition(nx.cycle_graph(6), td, width=2)
    True
    """
    G = as_graph(G)
    if not hasattr(td, "bags") or not hasattr(td, "edges"):
        raise TypeError(f"td must have 'bags' and 'edges', got {type(td).__name__}")
    bags = [np.asarray(b, dtype=np.int64).ravel() for b in td.bags]
    nb = len(bags)
    E = np.asarray(td.edges, dtype=np.int64).reshape(-1, 2)
    n = G.n
    if n == 0:
        return E.shape[0] == max(0, nb - 1) and all(b.size == 0 for b in bags)
    if nb == 0:
        return False
    for b in bags:
        if b.size and (b.min() < 0 or b.max() >= n):
            return False
    if width is not None and max(b.size for b in bags) - 1 != width:
        return False
    # tree: nb - 1 edges, connected
    if E.shape[0] != nb - 1 or (E.size and (E.min() < 0 or E.max() >= nb)):
        return False
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    T = coo_matrix((np.ones(E.shape[0]), (E[:, 0], E[:, 1])), shape=(nb, nb)).tocsr()
    if connected_components(T, directed=False)[0] != 1:
        return False
    # vertex -> bags; every vertex covered, subtrees connected
    members = [[] for _ in range(n)]
    for i, b in enumerate(bags):
        for v in np.unique(b).tolist():
            members[v].append(i)
    if any(not m for m in members):
        return False
    bag_sets = [set(b.tolist()) for b in bags]
    u, v = G.edges()
    for a, c in zip(u.tolist(), v.tolist()):
        if not any(c in bag_sets[i] for i in members[a]):
            return False
    # subtree connectivity: edges of T inside the bag set of v must number |members| - 1
    count = np.zeros(n, dtype=np.int64)
    for a, c in E.tolist():
        for v in bag_sets[a] & bag_sets[c]:
            count[v] += 1
    sizes = np.asarray([len(m) for m in members])
    return bool(np.all(count == sizes - 1))


def treewidth_bounds(G):
    """Fast lower and upper bounds: ``(lower, upper, ordering)``.

    Lower bound: the largest of degeneracy and minor-min-width; upper bound: the better
    of the min-degree and min-fill elimination orderings (returned).

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> lo, hi, order = graphkit.treewidth_bounds(nx.complete_graph(5))
    >>> lo, hi
    (4, 4)
    """
    from kernels import treewidth as ktw

    G = as_graph(G)
    if G.n == 0:
        return -1, -1, np.zeros(0, dtype=np.int64)
    A = G.to_scipy().toarray() != 0
    lo = max(int(ktw.degeneracy(A)), int(ktw.minor_min_width(A)))
    o1, w1 = ktw.greedy_ordering(A, 0)
    o2, w2 = ktw.greedy_ordering(A, 1)
    return lo, int(min(w1, w2)), (o1 if w1 <= w2 else o2)


# --------------------------------------------------------------------------- clique separators
def _mcs_m(nbrs):
    """MCS-M (Berry, Blair, Heggernes, Peyton) with clique generators (MCS-M+).

    Returns the minimal elimination ordering (first eliminated first), ``madj`` (the
    neighbours of each vertex in the minimal triangulation that come later in the
    ordering) and the set of generators ``X``: for ``x`` in ``X``, ``madj[x]`` is a
    minimal separator of the triangulation.
    """
    import heapq

    n = len(nbrs)
    w = [0] * n
    numbered = [False] * n
    alpha = [0] * n
    H = [set(nb) for nb in nbrs]
    seq, gens = [], set()
    prev = -1
    for i in range(n, 0, -1):
        v = max((u for u in range(n) if not numbered[u]), key=lambda u: w[u])
        if w[v] <= prev:
            gens.add(v)
        prev = w[v]
        dist = {}
        heap = []
        for u in nbrs[v]:
            if not numbered[u]:
                dist[u] = -1
                heap.append((-1, u))
        heapq.heapify(heap)
        while heap:
            d, x = heapq.heappop(heap)
            if d > dist[x]:
                continue
            nd = max(d, w[x])
            for y in nbrs[x]:
                if numbered[y] or y == v:
                    continue
                if nd < dist.get(y, n + 1):
                    dist[y] = nd
                    heapq.heappush(heap, (nd, y))
        for u, d in dist.items():
            if d < w[u]:
                w[u] += 1
                H[u].add(v)
                H[v].add(u)
        numbered[v] = True
        alpha[v] = i
        seq.append(v)
    order = seq[::-1]
    madj = [{u for u in H[x] if alpha[u] > alpha[x]} for x in range(n)]
    return order, madj, gens


def _clique_atoms(nbrs):
    """Decomposition by clique minimal separators (Berry, Pogorelcnik, Simonet).

    Returns ``[(atom vertices, separator or None), ...]``; the separator of an atom is a
    clique contained in a later atom, the last atom has none. Every atom of a connected
    graph is solved on its induced subgraph; the treewidth is the maximum over atoms.
    """
    order, madj, gens = _mcs_m(nbrs)
    remaining = set(range(len(nbrs)))
    atoms = []
    for x in order:
        if x not in gens or x not in remaining:
            continue
        S = madj[x]
        if not S <= remaining or any(len(S & nbrs[a]) != len(S) - 1 for a in S):
            continue
        comp, stack = {x}, [x]
        while stack:
            y = stack.pop()
            for z in nbrs[y]:
                if z in remaining and z not in S and z not in comp:
                    comp.add(z)
                    stack.append(z)
        if len(comp) + len(S) >= len(remaining):
            continue  # S does not separate what is left
        atoms.append((sorted(comp | S), set(S)))
        remaining -= comp
    atoms.append((sorted(remaining), None))
    return atoms


def _ordering_from_bags(bags, edges, nverts):
    """Elimination ordering of width <= the decomposition's width (peel leaves towards a root)."""
    nb = len(bags)
    tree = [[] for _ in range(nb)]
    for a, b in edges:
        tree[a].append(b)
        tree[b].append(a)
    parent = [-1] * nb
    bfs, seen = [0], [False] * nb
    seen[0] = True
    for t in bfs:
        for u in tree[t]:
            if not seen[u]:
                seen[u] = True
                parent[u] = t
                bfs.append(u)
    done = np.zeros(nverts, dtype=bool)
    order = []
    for t in reversed(bfs):
        keep = set(bags[parent[t]].tolist()) if parent[t] >= 0 else set()
        for v in bags[t].tolist():
            if not done[v] and v not in keep:
                done[v] = True
                order.append(v)
    return np.asarray(order, dtype=np.int64)


def _glue(atoms, atom_orders, A):
    """Glue the decompositions of the atoms along their separators; returns an ordering."""
    from .graph import Graph

    bags, edges = [], []
    starts = []
    for (verts, _), order in zip(atoms, atom_orders):
        verts = np.asarray(verts, dtype=np.int64)
        sub = A[np.ix_(verts, verts)]
        rows, cols = np.nonzero(np.triu(sub, 1))
        td = decomposition_from_ordering(Graph.from_edges(verts.size, rows, cols), order)
        starts.append(len(bags))
        bags.extend(verts[b] for b in td.bags)
        edges.extend((a + starts[-1], b + starts[-1]) for a, b in td.edges.tolist())
    for i, (verts, S) in enumerate(atoms[:-1]):
        lo, hi = starts[i], starts[i + 1]
        mine = next(t for t in range(lo, hi) if S <= set(bags[t].tolist()))
        other = None
        for j in range(i + 1, len(atoms)):
            if S <= set(atoms[j][0]):
                end = starts[j + 1] if j + 1 < len(atoms) else len(bags)
                other = next(t for t in range(starts[j], end) if S <= set(bags[t].tolist()))
                break
        edges.append((mine, other))
    return _ordering_from_bags(bags, edges, A.shape[0])


# --------------------------------------------------------------------------- component solver
def _solve_component(A, low, dev, dedup, deadline, max_states, use_clique, use_paths, use_mmw, rule, records):
    """Solve one connected component (dense ``A``); returns (order, width, lower, status)."""
    from kernels import treewidth as ktw

    s = A.shape[0]
    o1, w1 = ktw.greedy_ordering(A, 0)
    o2, w2 = ktw.greedy_ordering(A, 1)
    ub, ub_order = (int(w1), o1) if w1 <= w2 else (int(w2), o2)
    lb = int(ktw.degeneracy(A))
    if use_mmw:
        lb = max(lb, int(ktw.minor_min_width(A)))
    C = ktw.max_clique(A) if use_clique else np.zeros(0, dtype=np.int64)
    lb = max(lb, C.size - 1)
    if ub <= max(lb, low):
        return ub_order, ub, lb, "optimal"
    K = None
    if use_paths:
        indptr = np.concatenate([[0], np.cumsum(A.sum(axis=1))]).astype(np.int64)
        indices = np.nonzero(A)[1].astype(np.int64)
        K = ktw.vertex_connectivity_matrix(indptr, indices, ub)
        # LBP+ (Clautiaux et al.): if tw <= lb, adding the edges of pairs with more than lb
        # vertex-disjoint paths keeps tw <= lb; a larger degeneracy / MMW of that graph
        # therefore proves tw > lb.
        while lb < ub:
            Ak = A | (K >= lb + 1)
            if max(int(ktw.degeneracy(Ak)), int(ktw.minor_min_width(Ak)) if use_mmw else 0) > lb:
                lb += 1
            else:
                break
    start = max(lb, low)
    if ub <= start:
        return ub_order, ub, lb, "optimal"
    W = (s + 63) // 64
    cand_mask = np.ones(s, dtype=np.bool_)
    cand_mask[C] = False
    cand = ktw.to_bitsets(cand_mask[None, :])[0]
    mode = ktw.EXACT if dedup == "exact" else ktw.BLOOM
    comp_dev = dev if (dev == "cpu" or W <= 4) else "cpu"
    clock = time.perf_counter
    for k in range(start, ub):
        t0 = clock()
        Ak = A.copy()
        if K is not None:
            Ak |= K >= k + 1
        adj = ktw.to_bitsets(Ak)
        target = s - k - 1
        rec = {"component": s, "k": k, "device": comp_dev}
        if comp_dev == "gpu":
            r = ktw.search_gpu(adj, cand, k, target, mode=mode, max_states=max_states, deadline=deadline,
                               clock=clock, rule=rule)
            found, prefix, timed_out = r["found"], r["prefix"], r["timed_out"]
            overflow, dropped = r["overflow"], r["dropped"]
            rec.update(expanded=r["expanded"], level_sizes=r["level_sizes"])
        else:
            srch = ktw.LevelSearchCPU(adj, cand, k, target, mode=mode,
                                      max_states=max_states if max_states else 1 << 24, rule=rule)
            timed_out = False
            while not srch.done:
                if not srch.step(deadline, clock) or (deadline is not None and not srch.done and clock() > deadline):
                    timed_out = True
                    break
            found, prefix = srch.found, srch.prefix()
            overflow, dropped = srch.overflow, srch.dropped
            rec.update(expanded=srch.expanded, level_sizes=list(srch.level_sizes))
        rec.update(found=bool(found), overflow=bool(overflow), dropped=int(dropped), time=clock() - t0)
        records.append(rec)
        if found:
            rest = np.setdiff1d(np.arange(s), prefix, assume_unique=False)
            rest = np.concatenate([np.setdiff1d(rest, C), C]).astype(np.int64)
            order = np.concatenate([prefix, rest]).astype(np.int64)
            w = int(ktw.elimination_width(A, order))
            if w > k:
                raise RuntimeError(f"internal error: ordering of width {w} returned for k={k}")
            return order, k, k if dedup == "exact" else lb, "optimal" if dedup == "exact" or k <= lb else "monte_carlo"
        if timed_out:
            return ub_order, ub, k if dedup == "exact" else lb, "time_limit"
        if overflow:
            return ub_order, ub, k if dedup == "exact" else lb, "overflow"
        if dedup == "exact":
            lb = k + 1
    return ub_order, ub, ub if dedup == "exact" else lb, "optimal" if dedup == "exact" or ub <= lb else "monte_carlo"


def treewidth(G, device="auto", time_limit=None, *, dedup="exact", preprocess=True, clique=True,
              disjoint_paths=True, mmw=True, simplicial_rule=True, separators=True,
              max_states=None) -> TreewidthResult:
    """Exact treewidth with an elimination ordering and a tree decomposition.

    Parameters
    ----------
    G : Graph, networkx graph, scipy sparse matrix or path
    device : {"auto", "cpu", "gpu"}
        Where the exact search runs (reductions and bounds run on the CPU).
    time_limit : float, optional
        Seconds; when reached, the best decomposition found is returned with
        ``optimal=False`` and ``status="time_limit"``.
    dedup : {"exact", "bloom"}
        Duplicate removal of the search: exact hash set (proofs) or the paper's Bloom
        filter (Monte Carlo: a failed ``k`` is only probable, so the result is optimal
        only where the certified lower bound meets it).
    preprocess : bool
        Apply the simplicial / almost simplicial reductions.
    clique, disjoint_paths, mmw : bool
        The paper's optimizations: exclude a maximum clique, add edges between pairs
        with more than ``k`` vertex-disjoint paths, minor-min-width lower bound (with the
        disjoint-path edges also the LBP+ improvement of the lower bound).
    simplicial_rule : bool
        Beyond the paper: a state whose remaining graph has a simplicial or almost
        simplicial vertex of degree at most ``k`` is expanded by that vertex only (safe,
        and it cuts the number of states by orders of magnitude on sparse graphs).
        ``False`` gives the paper's plain search.
    separators : bool
        Split every component into atoms along clique minimal separators (MCS-M based,
        safe), solve the atoms separately and glue their decompositions.
    max_states : int, optional
        Largest wavefront (states in one level). Default: ``2**24`` on the CPU, half the
        free device memory on the GPU. A level that does not fit stops the search with
        ``status="overflow"`` (unless a solution is found in that very round).

    Returns
    -------
    TreewidthResult

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> res = graphkit.treewidth(nx.grid_2d_graph(4, 4), device="cpu")
    >>> res.width, res.optimal
    (4, True)
    >>> graphkit.is_tree_decomposition(nx.grid_2d_graph(4, 4), res.decomposition, width=4)
    True
    """
    if dedup not in DEDUP:
        raise ValueError(f"dedup must be one of {DEDUP}, got {dedup!r}")
    if time_limit is not None and not (isinstance(time_limit, (int, float)) and time_limit > 0):
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    if max_states is not None and (not isinstance(max_states, (int, np.integer)) or max_states < 1):
        raise ValueError(f"max_states must be a positive integer, got {max_states!r}")
    G = as_graph(G)
    dev = resolve_device(device)
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + float(time_limit)
    n = G.n
    if n == 0:
        return TreewidthResult(-1, True, -1, -1, "optimal", 0, 0, dev, dedup, 0.0, np.zeros(0, dtype=np.int64),
                               TreeDecomposition([], np.zeros((0, 2), dtype=np.int64)), ())
    adj = _adjacency_sets(G)
    alive = set(range(n))
    low = 0 if G.m == 0 else 1
    prefix: list = []
    if preprocess and G.m and n <= 4096:
        # a valid lower bound up front lets the almost-simplicial rule remove more
        from kernels import treewidth as ktw

        Afull = G.to_scipy().toarray() != 0
        low = max(low, int(ktw.degeneracy(Afull)), int(ktw.minor_min_width(Afull)) if mmw else 0)
        del Afull
    if preprocess:
        prefix, low = _reduce(adj, alive, low)
    rest = np.asarray(sorted(alive), dtype=np.int64)
    records: list = []
    orders = [np.asarray(prefix, dtype=np.int64)]
    lower = low
    statuses = []
    reduced = 0
    if rest.size:
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import connected_components

        A_all = _dense(adj, rest.tolist())
        ncomp, labels = connected_components(csr_matrix(A_all), directed=False)
        for c in range(ncomp):
            verts = np.flatnonzero(labels == c)
            A = A_all[np.ix_(verts, verts)]
            if separators and verts.size > 3:
                atoms = _clique_atoms([set(np.flatnonzero(row).tolist()) for row in A])
            else:
                atoms = [(list(range(verts.size)), None)]
            atom_orders = []
            for atom, _ in atoms:
                reduced = max(reduced, len(atom))
                Aa = A[np.ix_(atom, atom)]
                order, width, lb, status = _solve_component(Aa, low, dev, dedup, deadline, max_states, clique,
                                                            disjoint_paths, mmw, simplicial_rule, records)
                atom_orders.append(order)
                lower = max(lower, lb)
                statuses.append(status)
            order = atom_orders[0] if len(atoms) == 1 else _glue(atoms, atom_orders, A)
            orders.append(rest[verts[order]])
    ordering = np.concatenate(orders).astype(np.int64)
    td = decomposition_from_ordering(G, ordering)
    width = td.width
    lower = min(lower, width)
    status = "optimal"
    for s in ("monte_carlo", "overflow", "time_limit"):
        if s in statuses:
            status = s
    if lower == width:
        status = "optimal"
    expanded = int(sum(r["expanded"] for r in records))
    return TreewidthResult(width, status == "optimal", int(lower), int(width), status, expanded, int(reduced), dev,
                           dedup, time.perf_counter() - t0, ordering, td, tuple(records))


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
