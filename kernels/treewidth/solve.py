"""Exact treewidth pipeline: reductions, bounds, safe separators, exact search per piece.

:func:`solve` takes a graph (CSR) and returns a tree decomposition with a proven lower
bound. The pipeline, every phase of which watches the deadline:

0. Vertices of degree at most one are peeled off on the sparse graph in ``O(n + m)``
   (:func:`kernels.treewidth.preprocess.peel_low_degree`): isolated vertices and trees
   never reach the dense representation.
1. Connected components of the rest are solved one by one, largest first; the treewidth is their maximum, so one
   lower bound ``lb`` is shared by everything below (every graph handled is a minor of the
   input, so a bound proven on it holds for the input).
2. *Reductions*: simplicial and almost simplicial vertices are removed
   (:func:`kernels.treewidth.preprocess.simplicial_reduce`); their bags are attached at
   the end.
3. *Bounds*: min-fill and min-degree elimination orderings give an upper bound and a
   decomposition, MMD+ a lower bound. A piece whose upper bound does not exceed ``lb`` is
   done.
4. *Safe separators*: the edges of the greedy decomposition whose separator is a clique,
   or becomes one by contracting either side onto it, cut the decomposition into parts;
   each part, with its separators made cliques, is a minor of the graph and is solved on
   its own (reductions again, then the exact search), and the decompositions are glued at
   the separators.
5. *Exact search* on each remaining piece for ``k = lb, lb + 1, ...`` below its upper
   bound: positive-instance driven dynamic programming (``method="pid"``,
   :mod:`kernels.treewidth.pid`) or the breadth-first search over elimination prefixes of
   van der Zanden and Bodlaender (``method="bfs"``, :mod:`kernels.treewidth.bfs`, CPU or GPU).
   A failed ``k`` raises ``lb``; a success gives the piece's decomposition. With
   ``options["gpu_race"]`` (``device="auto"`` with a GPU), PID races the GPU search on the
   dense pieces where it pays (:class:`_GpuRace`).

At the deadline (or when the search tables fill ``max_memory``) every unsolved piece
keeps its greedy decomposition: the result is always a valid decomposition, with the
proven lower bound next to it.
"""
from __future__ import annotations

import time

import numpy as np

from . import bounds, pid, preprocess
from ._bits import bits_components, bits_csr, bits_induced, monotonic

__all__ = ["solve", "warm_up", "warm_up_gpu", "bitsets_from_csr", "PHASES"]

PHASES = ("trivial", "bounds", "pid", "bfs")


class _State:
    """What the pieces of one solve share: the lower bound, the clock, options, records."""

    def __init__(self, time_limit, method, device, options):
        self.t0 = time.perf_counter()
        self.end = None if time_limit is None else self.t0 + float(time_limit)
        self.lb = 0
        self.lb_source = "trivial"
        self.method = method
        self.device = device
        self.opt = options
        self.status = "optimal"  # becomes time_limit / memory / overflow / monte_carlo
        self.pieces = []
        self.exact_used = False
        self.gpu_used = False
        self.times = {"reduce": 0.0, "bounds": 0.0, "separators": 0.0, "exact": 0.0}
        self.largest_core = 0
        self.largest_part = 0
        self.parts = 0
        self.expanded = 0
        self.iterations = []
        self.races = []  # GPU threads cancelled after losing a race, joined before returning

    def expired(self):
        return self.end is not None and time.perf_counter() >= self.end

    def left(self):
        return float("inf") if self.end is None else self.end - time.perf_counter()

    def compiled_deadline(self):
        """The deadline on the clock of compiled code (0: none)."""
        if self.end is None:
            return 0.0
        return monotonic() + max(self.left(), 1e-6)

    def raise_lb(self, value, source):
        if value > self.lb:
            self.lb = int(value)
            self.lb_source = source

    def stop(self, status):
        if self.status == "optimal" or status == "time_limit":
            self.status = status


# --------------------------------------------------------------------------- bitset graphs
def _unpack(bits, n):
    return np.unpackbits(np.ascontiguousarray(bits).view(np.uint8), axis=-1, bitorder="little")[..., :n].astype(bool)


def bitsets_from_csr(indptr, indices, n):
    """``(n, W)`` uint64 bitset adjacency of a CSR graph (self loops dropped)."""
    W = max(1, (n + 63) // 64)
    adj = np.zeros((n, W), dtype=np.uint64)
    indptr = np.asarray(indptr, dtype=np.int64)
    cols = np.asarray(indices, dtype=np.int64)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    keep = rows != cols
    rows, cols = rows[keep], cols[keep]
    np.bitwise_or.at(adj, (rows, cols >> 6), np.left_shift(np.uint64(1), (cols & 63).astype(np.uint64)))
    return adj


def _induced(adj, verts):
    return bits_induced(adj, np.asarray(verts, dtype=np.int64))


def _components(adj):
    ncomp, labels = bits_components(adj)
    order = np.argsort(labels, kind="stable")
    splits = np.cumsum(np.bincount(labels, minlength=ncomp))[:-1]
    return np.split(order, splits)


def _csr(adj):
    return bits_csr(adj)


def _is_clique(adj, S, n):
    """Whether the vertex set ``S`` (bitset) is a clique of the bitset graph ``adj``."""
    Sv = np.flatnonzero(_unpack(S, n))
    if Sv.size <= 1:
        return True
    miss = S[None, :] & ~adj[Sv]
    miss[np.arange(Sv.size), Sv >> 6] &= ~np.left_shift(np.uint64(1), (Sv & 63).astype(np.uint64))
    return not miss.any()


def _make_clique(adj, verts):
    """Add every edge between the vertices ``verts`` to the bitset graph ``adj`` (in place)."""
    verts = np.asarray(verts, dtype=np.int64)
    rows = np.repeat(verts, verts.size)
    cols = np.tile(verts, verts.size)
    keep = rows != cols
    rows, cols = rows[keep], cols[keep]
    np.bitwise_or.at(adj, (rows, cols >> 6), np.left_shift(np.uint64(1), (cols & 63).astype(np.uint64)))


def _subset(a, b):
    return not np.any(a & ~b)


# --------------------------------------------------------------------------- decompositions
def _elimination_td(adj, order):
    """Compact tree decomposition of an elimination ordering: (bag bitsets, edges)."""
    bags, parent = bounds.ordering_bags(adj, np.asarray(order, dtype=np.int64))
    n = bags.shape[0]
    alive = np.ones(n, dtype=bool)
    rep = np.arange(n)

    def find(x):
        while rep[x] != x:
            rep[x] = rep[rep[x]]
            x = rep[x]
        return x

    par = parent.copy()
    for i in range(n):
        if not alive[i]:
            continue
        while par[i] >= 0:
            p = find(par[i])
            if p == i or not _subset(bags[p], bags[i]):
                par[i] = p
                break
            alive[p] = False
            rep[p] = i
            par[i] = par[p]
    keep = np.flatnonzero(alive)
    index = -np.ones(n, dtype=np.int64)
    index[keep] = np.arange(keep.size)
    edges = []
    roots = []
    for i in keep.tolist():
        if par[i] >= 0:
            edges.append((int(index[i]), int(index[find(par[i])])))
        else:
            roots.append(int(index[i]))
    for a, b in zip(roots[:-1], roots[1:]):
        edges.append((a, b))
    return bags[keep], edges


def _bag_lists(bag_bits, n):
    ptr, idx = bits_csr(bag_bits)
    return np.split(idx, ptr[1:-1])


def _single_bag(n):
    return [np.arange(n, dtype=np.int64)], []


def _attach_removed(bags, edges, removed, ptr, nbr):
    """Add the bags of the vertices removed by the reductions (in reverse order)."""
    if len(removed) == 0:
        return bags, edges
    bags = list(bags)
    edges = list(edges)
    index = {}
    sets = [set(b.tolist()) for b in bags]
    for i, s in enumerate(sets):
        for v in s:
            index.setdefault(v, []).append(i)
    pos = {int(v): i for i, v in enumerate(removed.tolist())}
    home = {}
    for i in range(len(removed) - 1, -1, -1):
        v = int(removed[i])
        N = nbr[ptr[i]: ptr[i + 1]].tolist()
        target = None
        if N:
            later = [u for u in N if u in pos]
            if later:
                target = home[min(later, key=pos.__getitem__)]
            else:
                Ns = set(N)
                for b in index.get(N[0], ()):
                    if Ns <= sets[b]:
                        target = b
                        break
                if target is None:  # pragma: no cover - the reductions guarantee a bag
                    raise RuntimeError("internal error: no bag holds the neighbourhood of a removed vertex")
        elif bags:
            target = 0
        me = len(bags)
        bags.append(np.asarray(sorted([v] + N), dtype=np.int64))
        sets.append(None)
        if target is not None:
            edges.append((target, me))
        home[v] = me
    return bags, edges


def _find_bag(bags_sets, S):
    for i, b in enumerate(bags_sets):
        if S <= b:
            return i
    return None


# --------------------------------------------------------------------------- the recursion
def _solve_graph(adj, state, depth):
    """Decomposition of the (possibly disconnected) bitset graph ``adj``: (bags, edges)."""
    n = adj.shape[0]
    if n == 0:
        return [], []
    comps = _components(adj)
    if len(comps) == 1:
        return _solve_connected(adj, state, depth)
    comps.sort(key=len, reverse=True)
    bags, edges, roots = [], [], []
    for comp in comps:
        b, e = _solve_connected(_induced(adj, comp), state, depth)
        off = len(bags)
        roots.append(off)
        bags.extend(comp[x] for x in b)
        edges.extend((a + off, c + off) for a, c in e)
    edges.extend(zip(roots[:-1], roots[1:]))
    return bags, edges


def _solve_connected(adj, state, depth):
    n = adj.shape[0]
    if n <= state.lb + 1 or n <= 2:
        state.raise_lb(n - 1 if n <= 2 else 0, "trivial")
        return _single_bag(n)
    removed = np.zeros(0, dtype=np.int64)
    ptr = nbr = None
    core_adj = adj
    core = np.arange(n)
    if state.opt["preprocess"]:
        t = time.perf_counter()
        A = adj.copy()
        alive = np.ones(n, dtype=np.bool_)
        removed, ptr, nbr, low = preprocess.simplicial_reduce(A, alive, max(state.lb, 1), state.compiled_deadline())
        # the simplicial degrees are clique sizes minus one in a minor of the input
        state.raise_lb(low if removed.size else state.lb, "reductions")
        core = np.flatnonzero(alive)
        core_adj = _induced(A, core) if removed.size else A
        state.times["reduce"] += time.perf_counter() - t
    state.largest_core = max(state.largest_core, core.size)
    if core.size == 0:
        bags, edges = [], []
    else:
        bags, edges = [], []
        comps = _components(core_adj) if removed.size else [np.arange(core.size)]
        roots = []
        for comp in sorted(comps, key=len, reverse=True):
            sub = core_adj if len(comps) == 1 else _induced(core_adj, comp)
            if depth == 0 and state.opt["separators"]:
                b, e = _split_and_solve(sub, state)
            else:
                b, e = _exact(sub, state)
            off = len(bags)
            roots.append(off)
            bags.extend(core[comp[x]] for x in b)
            edges.extend((a + off, c + off) for a, c in e)
        edges.extend(zip(roots[:-1], roots[1:]))
    return _attach_removed(bags, edges, removed, ptr, nbr)


def _greedy(adj, state):
    """Best greedy elimination ordering: (order, width)."""
    t = time.perf_counter()
    best = bounds.elimination_ordering(adj, bounds.MIN_DEGREE, -1, -1, 0.0)
    if not state.expired():
        o, w = bounds.elimination_ordering(adj, bounds.MIN_FILL, -1, best[1], state.compiled_deadline())
        if w < best[1]:
            best = (o, w)
    state.times["bounds"] += time.perf_counter() - t
    return best[0], int(best[1])


def _lower(adj, state, ub):
    t = time.perf_counter()
    state.raise_lb(int(bounds.mmd_plus(adj, ub, state.compiled_deadline())), "mmd+")
    state.times["bounds"] += time.perf_counter() - t


def _greedy_orders(adj, state):
    """Min-degree and min-fill orderings with their widths (min-fill complete unless the
    deadline turns it into min-degree)."""
    t = time.perf_counter()
    got = [bounds.elimination_ordering(adj, bounds.MIN_DEGREE, -1, -1, 0.0)]
    if not state.expired():
        got.append(bounds.elimination_ordering(adj, bounds.MIN_FILL, -1, -1, state.compiled_deadline()))
    state.times["bounds"] += time.perf_counter() - t
    return [(o, int(w)) for o, w in got]


def _safe_cut(adj, order, state):
    """The decomposition of the elimination ``order``, rooted at bag 0, with the tree edges
    that cross a safe separator (a clique, or one with a clique minor on both sides).

    Returns ``(bag_bits, edges, bfs, parent, safe, part, nparts)``: ``parent`` and ``bfs``
    (the bags in breadth-first order) root the tree, ``safe[x]`` marks the edge from bag
    ``x`` to its parent, and ``part`` numbers the components of the tree without the safe
    edges.
    """
    n = adj.shape[0]
    bag_bits, edges = _elimination_td(adj, order)
    nb = bag_bits.shape[0]
    # root the decomposition at bag 0; subtree unions
    tree = [[] for _ in range(nb)]
    for a, b in edges:
        tree[a].append(b)
        tree[b].append(a)
    parent = [-1] * nb
    seen = [False] * nb
    seen[0] = True
    bfs = [0]
    for x in bfs:
        for y in tree[x]:
            if not seen[y]:
                seen[y] = True
                parent[y] = x
                bfs.append(y)
    sub = bag_bits.copy()
    for x in reversed(bfs):
        if parent[x] >= 0:
            sub[parent[x]] |= sub[x]
    allv = np.zeros_like(bag_bits[0])
    allv |= sub[0]
    safe = [False] * nb  # safe[x]: the edge from x to its parent
    max_steps = int(state.opt["minor_steps"])
    for x in bfs[1:]:
        if state.expired():
            break
        p = parent[x]
        S = bag_bits[x] & bag_bits[p]
        below = sub[x] & ~S
        above = allv & ~sub[x]
        if _is_clique(adj, S, n):
            ok = True  # a clique separator
        else:
            deadline = state.compiled_deadline()
            ok = preprocess.clique_minor(adj, S, above, max_steps, deadline)[0] and preprocess.clique_minor(
                adj, S, below, max_steps, deadline)[0]
        safe[x] = ok
    # parts: components of the tree without the safe edges
    part = [-1] * nb
    nparts = 0
    for x in bfs:
        if parent[x] >= 0 and not safe[x]:
            part[x] = part[parent[x]]
        else:
            part[x] = nparts
            nparts += 1
    return bag_bits, edges, bfs, parent, safe, part, nparts


def _largest_open_part(cut, lb):
    """Vertices of the largest part of a cut whose greedy width is above ``lb`` (0: none)."""
    bag_bits, _, _, _, _, part, nparts = cut
    sizes = np.unpackbits(bag_bits.view(np.uint8), axis=1).sum(axis=1)
    union = np.zeros((nparts, bag_bits.shape[1]), dtype=bag_bits.dtype)
    width = np.full(nparts, -1)
    for x, q in enumerate(part):
        union[q] |= bag_bits[x]
        width[q] = max(width[q], sizes[x] - 1)
    counts = np.unpackbits(union.view(np.uint8), axis=1).sum(axis=1)
    return int(max((counts[q] for q in range(nparts) if width[q] > lb), default=0))


def _choose_cut(adj, orders, state):
    """Cut every greedy decomposition of ``orders`` (``(order, width)`` pairs) at its safe
    separators and keep the one whose largest part left to solve (greedy width above the
    lower bound) has the fewest vertices, the smaller width breaking ties: the exact
    search is exponential in the size of a part, not in the greedy width. Tamaki's solver
    chooses its greedy decomposition for the split the same way [1]_.

    Returns ``((largest open part, width), cut)`` with the cut of :func:`_safe_cut`.

    References
    ----------
    .. [1] H. Tamaki, "Positive-instance driven dynamic programming for treewidth",
       Journal of Combinatorial Optimization 37(4):1283-1311, 2019.
    """
    chosen = None
    for order, width in orders:
        if state.expired() and chosen is not None:
            break
        cut = _safe_cut(adj, order, state)
        key = (_largest_open_part(cut, state.lb), width)
        if chosen is None or key < chosen[0]:
            chosen = (key, cut)
    return chosen


def _split_and_solve(adj, state):
    """Cut a greedy decomposition at safe separators and solve the parts.

    Both greedy decompositions (min-degree, min-fill) are cut and the one with the
    smallest largest part left to solve is kept (:func:`_choose_cut`). When the parts
    cannot all be solved in time and their glued decomposition is wider than the best
    greedy one, the latter comes back.
    """
    n = adj.shape[0]
    orders = _greedy_orders(adj, state)
    best_order, ub = min(orders, key=lambda ow: ow[1])
    _lower(adj, state, ub)
    if ub <= state.lb or state.expired():
        if ub > state.lb:
            state.stop("time_limit")
        bag_bits, edges = _elimination_td(adj, best_order)
        return _bag_lists(bag_bits, n), edges
    t = time.perf_counter()
    key, cut = _choose_cut(adj, orders, state)
    state.largest_part = max(state.largest_part, key[0])
    bag_bits, edges, bfs, parent, safe, part, nparts = cut
    state.times["separators"] += time.perf_counter() - t
    if nparts == 1:
        bag_bits, edges = _elimination_td(adj, best_order)
        return _exact(adj, state, (_bag_lists(bag_bits, n), edges))
    nb = bag_bits.shape[0]
    state.parts += nparts
    members = [[] for _ in range(nparts)]
    for x in range(nb):
        members[part[x]].append(x)
    cuts = [(x, parent[x]) for x in bfs[1:] if safe[x]]
    info = []
    for q in range(nparts):
        U_bits = np.bitwise_or.reduce(bag_bits[members[q]], axis=0)
        U = np.flatnonzero(_unpack(U_bits, n))
        padj = _induced(adj, U)
        for x, p in cuts:
            if part[x] == q or part[p] == q:
                loc = np.searchsorted(U, np.flatnonzero(_unpack(bag_bits[x] & bag_bits[p], n)))
                _make_clique(padj, loc)
        width = max(int(_unpack(bag_bits[i], n).sum()) for i in members[q]) - 1
        info.append((U, padj, width))
    # lower bounds of the parts first: the largest one makes the others cheap
    if not state.expired():
        for U, padj, width in sorted(info, key=lambda t: -t[2]):
            if width > state.lb:
                _lower(padj, state, width)
            if state.expired():
                break
    new_bags = []
    new_edges = []
    offsets = [0] * nparts
    for q in sorted(range(nparts), key=lambda q: -info[q][2]):
        U, padj, width = info[q]
        offsets[q] = len(new_bags)
        if width <= state.lb or state.expired():
            if width > state.lb:
                state.stop("time_limit")
            local = {x: i for i, x in enumerate(members[q])}
            b = [np.flatnonzero(_unpack(bag_bits[x], n)) for x in members[q]]
            e = [(local[a], local[c]) for a, c in edges if a in local and c in local]
            new_bags.extend(b)
        else:
            b, e = _solve_graph(padj, state, 1)
            new_bags.extend(U[x] for x in b)
        new_edges.extend((a + offsets[q], c + offsets[q]) for a, c in e)
    # glue the parts at their separators
    sets = [set(b.tolist()) for b in new_bags]
    ranges = {}
    for q in range(nparts):
        ranges[q] = (offsets[q], offsets[q] + _part_size(q, offsets, len(new_bags)))
    for x, p in cuts:
        S = set(np.flatnonzero(_unpack(bag_bits[x] & bag_bits[p], n)).tolist())
        ends = []
        for q in (part[x], part[p]):
            lo, hi = ranges[q]
            i = _find_bag(sets[lo:hi], S)
            if i is None:  # pragma: no cover - a part's decomposition holds its separator cliques
                raise RuntimeError("internal error: separator not in a bag of its part")
            ends.append(lo + i)
        new_edges.append((ends[0], ends[1]))
    if max(len(b) for b in new_bags) - 1 > ub:  # parts left unsolved at the time limit
        bag_bits, edges = _elimination_td(adj, best_order)
        return _bag_lists(bag_bits, n), edges
    return new_bags, new_edges


def _part_size(q, offsets, total):
    later = [o for o in offsets if o > offsets[q]]
    return (min(later) if later else total) - offsets[q]


def _exact(adj, state, fallback=None):
    """Exact search on one connected piece; the greedy decomposition when it stops early."""
    n = adj.shape[0]
    if n <= state.lb + 1:
        return _single_bag(n)
    if fallback is None:
        order, ub = _greedy(adj, state)
        _lower(adj, state, ub)
        bag_bits, edges = _elimination_td(adj, order)
        fallback = (_bag_lists(bag_bits, n), edges)
    else:
        ub = max(len(b) for b in fallback[0]) - 1
    if ub <= state.lb:
        return fallback
    if state.expired():
        state.stop("time_limit")
        return fallback
    state.exact_used = True
    t = time.perf_counter()
    try:
        if state.method == "pid":
            return _exact_pid(adj, state, ub, fallback, race=_race_plan(n, ub, state))
        return _exact_bfs(adj, state, ub, fallback)
    finally:
        state.times["exact"] += time.perf_counter() - t


# device="auto" with a usable GPU: on the pieces where the paper's search can pay, PID on
# the CPU races it on the GPU. The search runs in a second thread while PID runs in time
# slices (its compiled kernel releases the GIL); the first to finish the piece wins, the other
# is cancelled, and each one's refutations of a width raise the lower bound both start from.
# The search needs a piece of at most 256 vertices (four 64-bit words per state). Its depth
# at width k is n - k - 1 levels, and it pays on dense pieces whose greedy width ub is a
# large fraction of n and leaves few levels: measured on the H200 on the pieces PID gets on
# the PACE 2017 set, it proved 58-91-vertex pieces with ub >= 0.48 n, n - ub <= 47, faster than
# PID (up to 10x: its LBP+ bound), and made no progress on 161-vertex pieces (n - ub = 82)
# or sparser ones, where PID ran up to 30% slower beside it. PID runs alone for a head
# start first: most pieces are done before the GPU would be asked. The thread that drives
# the GPU wants a second CPU core. With gpu_assist every piece of at most 256 vertices races
# from its start.
_RACE_MAX_N = 256
_RACE_MIN_RATIO = 0.45  # greedy width / piece size
_RACE_MAX_DEPTH = 50  # piece size - greedy width
_RACE_HEAD = 0.5  # seconds of PID alone on a piece before the GPU joins
_RACE_SLICE = 0.05  # PID's time slice while a race is on or pending (seconds)


def _race_plan(n, ub, state):
    """Seconds of PID alone before the GPU joins on a piece of ``n`` vertices and greedy
    width ``ub`` (None: no race)."""
    mode = state.opt.get("gpu_race")
    if not mode or n > _RACE_MAX_N:
        return None
    if mode == "always":
        return 0.0
    return _RACE_HEAD if ub >= _RACE_MIN_RATIO * n and n - ub <= _RACE_MAX_DEPTH else None


class _Cancel:
    """A cancellation seen by Python code (``is_set``) and by compiled kernels (``flag``)."""

    def __init__(self):
        import threading

        self.event = threading.Event()
        self.flag = np.zeros(1, dtype=np.int64)

    def set(self):
        self.flag[0] = 1
        self.event.set()

    def is_set(self):
        return self.event.is_set()


_LAUNCH = 0.25  # seconds of a GPU launch: the search looks at its deadline between launches
_RACE_LAUNCH = 0.1  # the same in a race: how long a cancelled search may still run
_NO_STOP = np.zeros(1, dtype=np.int64)  # the flag of a search that is never cancelled


class _GpuRace:
    """The breadth-first search on one piece in a second thread, cancellable.

    ``result`` is the decomposition it found (optimal for the piece: it refutes every
    smaller width first, or PID did), None when it stopped without one (cancelled,
    its wavefront overflowed, or the time is up); ``error`` an exception it raised.
    """

    def __init__(self, adj, state, ub):
        import threading

        self.cancel = _Cancel()
        self.result = None
        self.error = None
        self.thread = threading.Thread(target=self._run, args=(adj, state, ub), daemon=True,
                                       name="treewidth-gpu-race")
        self.thread.start()

    def _run(self, adj, state, ub):
        try:
            self.result = _exact_bfs(adj, state, ub, None, device=state.opt["assist_device"], mode_exact=True,
                                     cancel=self.cancel)
        except Exception as exc:  # noqa: BLE001 - reported by the main thread, which carries on with PID
            self.error = exc

    def done(self):
        return not self.thread.is_alive()

    def stop(self, state):
        """Cancel; the thread ends after its current launch (joined at the end of the solve)."""
        self.cancel.set()
        state.races.append(self.thread)


def _exact_pid(adj, state, ub, fallback, race=None):
    """PID on one piece for ``k = lb, lb + 1, ...`` below ``ub``; ``race``: seconds before the
    GPU search joins (see :class:`_GpuRace`), None for PID alone."""
    n = adj.shape[0]
    indptr, indices = _csr(adj)
    solver = pid.PIDSolver(indptr, indices, max_memory=state.opt["max_memory"])
    rec = {"piece": n, "method": "pid", "k": [], "ub": ub}
    state.pieces.append(rec)
    t_piece = time.perf_counter()
    gpu = None
    k = state.lb
    t = time.perf_counter()
    result = fallback
    while True:
        if race is not None and gpu is None and time.perf_counter() - t_piece >= race:
            gpu = _GpuRace(adj, state, ub)
            rec["race"] = "started"
        if gpu is not None and gpu.done():
            if gpu.result is not None:
                rec["race"] = "gpu"
                result = gpu.result
                break
            rec["race"] = "search stopped"
            if gpu.error is not None:
                rec["race"] = "search failed"
                _gpu_failed(state, n, gpu.error)
            race, gpu = None, None  # PID alone from here
        if state.lb > k:  # the GPU refuted k (or more)
            rec["k"].append((k, "exhausted", time.perf_counter() - t))
            k, t = state.lb, time.perf_counter()
        if k >= ub:
            if gpu is not None:
                rec["race"] = "bound"
            break  # every width below the greedy one refuted: the fallback is optimal
        left = state.left()
        if race is not None:
            pending = race - (time.perf_counter() - t_piece) if gpu is None else 0.0
            left = min(left, max(pending, _RACE_SLICE))
        st = solver.decide(k, monotonic() + max(left, 1e-6) if left != float("inf") else None)
        if st == pid.TIMEOUT and not state.expired():
            continue  # the end of a slice
        if st == pid.MEMORY and gpu is not None:
            gpu.thread.join(None if state.end is None else max(0.0, state.left()))
            continue  # the search may still finish the piece
        rec["k"].append((k, ("found", "exhausted", "time_limit", "memory")[st], time.perf_counter() - t))
        state.iterations.append({"component": n, "k": k, "found": st == pid.FOUND, "time": time.perf_counter() - t,
                                 "device": "cpu", **solver.stats})
        if st == pid.FOUND:
            result = solver.bags()
            if gpu is not None:
                rec["race"] = "cpu"
            break
        if st == pid.EXHAUSTED:
            state.raise_lb(k + 1, "pid")
            k, t = max(k + 1, state.lb), time.perf_counter()
            continue
        state.stop("time_limit" if st == pid.TIMEOUT else "memory")
        break
    if gpu is not None and not gpu.done():
        gpu.stop(state)
    rec.update(solver.stats)
    return result


def _gpu_failed(state, n, exc):
    import warnings

    warnings.warn(f"treewidth: the GPU search failed on a piece of {n} vertices ({exc!r}); continuing on the CPU",
                  RuntimeWarning, stacklevel=4)
    state.opt["gpu_race"] = None


def _exact_bfs(adj, state, ub, fallback, device=None, mode_exact=False, cancel=None):
    """The paper's breadth-first search over elimination prefixes on one piece.

    With ``mode_exact`` (the GPU side of a race with PID: exact deduplication whatever
    ``dedup``), a search that is cancelled (``cancel``, a :class:`_Cancel`, is set)
    or whose wavefront overflows returns None instead of ``fallback`` and leaves the status
    alone. Widths refuted elsewhere meanwhile (a larger ``state.lb``) are skipped.
    """
    from . import bfs as kb

    n = adj.shape[0]
    A = _unpack(adj, n)
    opt = state.opt
    stop = None if cancel is None else cancel.is_set
    C = kb.max_clique(A, deadline=state.end, stop=stop) if opt["clique"] else np.zeros(0, dtype=np.int64)
    state.raise_lb(C.size - 1, "clique")
    lb = state.lb
    K = None
    if opt["disjoint_paths"]:
        indptr, indices = _csr(adj)
        # only pairs with more than lb paths add edges (K >= k + 1 for k >= lb)
        K = kb.vertex_connectivity_matrix(indptr, indices, ub, state.compiled_deadline(),
                                          _NO_STOP if cancel is None else cancel.flag, state.lb + 1)
        # LBP+ (Clautiaux et al.): with tw <= lb the edges between pairs with more than lb
        # vertex-disjoint paths keep tw <= lb, so a larger bound on that graph proves tw > lb
        while lb < ub and not state.expired() and not (cancel is not None and cancel.is_set()):
            Ak = A | (K >= lb + 1)
            if max(int(kb.degeneracy(Ak)), int(kb.minor_min_width(Ak)) if opt["mmw"] else 0) > lb:
                lb += 1
            else:
                break
        state.raise_lb(lb, "lbp+")
    if ub <= state.lb:
        return fallback
    if state.expired():
        state.stop("time_limit")
        return fallback
    W = (n + 63) // 64
    cand_mask = np.ones(n, dtype=np.bool_)
    cand_mask[C] = False
    cand = kb.to_bitsets(cand_mask[None, :])[0]
    mode = kb.EXACT if (opt["dedup"] == "exact" or mode_exact) else kb.BLOOM
    device = device or state.device
    dev = device if (device == "cpu" or W <= 4) else "cpu"
    clock = time.perf_counter
    deadline = state.end
    k = state.lb
    if cancel is not None:
        def clock():  # a cancelled search, or one whose k PID has refuted, sees its deadline passed
            return float("inf") if cancel.is_set() or state.lb > k else time.perf_counter()

        deadline = time.perf_counter() + 1e9 if state.end is None else state.end
    while k < ub:
        if cancel is not None and cancel.is_set():
            return None
        t0 = time.perf_counter()
        Ak = A.copy()
        if K is not None:
            Ak |= K >= k + 1
        adjk = kb.to_bitsets(Ak)
        target = n - k - 1
        rec = {"component": n, "k": k, "device": dev}
        if dev == "gpu":
            r = kb.search_gpu(adjk, cand, k, target, mode=mode, max_states=opt["max_states"], deadline=deadline,
                              clock=clock, rule=opt["simplicial_rule"], launch_seconds=_LAUNCH if cancel is None else
                              _RACE_LAUNCH)
            found, prefix, timed_out = r["found"], r["prefix"], r["timed_out"]
            overflow, dropped = r["overflow"], r["dropped"]
            rec.update(expanded=r["expanded"], level_sizes=r["level_sizes"])
        else:
            srch = kb.LevelSearchCPU(adjk, cand, k, target, mode=mode,
                                     max_states=opt["max_states"] or 1 << 24, rule=opt["simplicial_rule"])
            timed_out = False
            while not srch.done:
                if not srch.step(deadline, clock) or (deadline is not None and not srch.done and clock() > deadline):
                    timed_out = True
                    break
            found, prefix = srch.found, srch.prefix()
            overflow, dropped = srch.overflow, srch.dropped
            rec.update(expanded=srch.expanded, level_sizes=list(srch.level_sizes))
        rec.update(found=bool(found), overflow=bool(overflow), dropped=int(dropped), time=time.perf_counter() - t0)
        state.iterations.append(rec)
        state.expanded += int(rec["expanded"])
        state.gpu_used = state.gpu_used or dev == "gpu"
        if found:
            rest = np.setdiff1d(np.arange(n), prefix)
            rest = np.concatenate([np.setdiff1d(rest, C), C]).astype(np.int64)
            order = np.concatenate([prefix, rest]).astype(np.int64)
            w = int(bounds.ordering_width(adj, order))
            if w > k:  # pragma: no cover - the search only returns feasible prefixes
                raise RuntimeError(f"internal error: ordering of width {w} returned for k={k}")
            if mode != kb.EXACT:
                state.stop("monte_carlo")
            bag_bits, edges = _elimination_td(adj, order)
            return _bag_lists(bag_bits, n), edges
        if cancel is not None and timed_out and not cancel.is_set() and state.lb > k:
            k = state.lb  # PID refuted this k meanwhile: on to the next
            continue
        if mode_exact and (overflow or (timed_out and not state.expired())):
            return None  # cancelled, or a wavefront too large: PID goes on alone
        if timed_out:
            state.stop("time_limit")
            return fallback
        if overflow:
            state.stop("overflow")
            return fallback
        if mode == kb.EXACT:
            state.raise_lb(k + 1, "bfs")
        k = max(k + 1, state.lb)
    return fallback


def _compact(bags, edges):
    """Merge every bag into a neighbour that contains it (same width, fewer bags)."""
    nb = len(bags)
    if nb <= 1:
        return list(bags), list(edges)
    sets = [set(b.tolist()) for b in bags]
    nbrs = [set() for _ in range(nb)]
    for a, b in edges:
        nbrs[a].add(b)
        nbrs[b].add(a)
    alive = [True] * nb
    for x in range(nb):
        for y in list(nbrs[x]):
            if alive[x] and sets[x] <= sets[y]:
                # x disappears into y: its other neighbours move to y
                for z in nbrs[x]:
                    if z != y:
                        nbrs[z].discard(x)
                        nbrs[z].add(y)
                        nbrs[y].add(z)
                nbrs[y].discard(x)
                nbrs[x] = set()
                alive[x] = False
                break
    keep = [x for x in range(nb) if alive[x]]
    index = {x: i for i, x in enumerate(keep)}
    new_edges = sorted({(min(index[a], index[b]), max(index[a], index[b])) for a in keep for b in nbrs[a]})
    return [np.asarray(sorted(sets[x]), dtype=np.int64) for x in keep], new_edges


def _ordering_from_bags(bags, edges):
    """Elimination ordering of the bags' vertices, of width at most the decomposition's
    (leaves are peeled towards a root; a vertex goes when its last bag does)."""
    nb = len(bags)
    if nb == 0:
        return np.zeros(0, dtype=np.int64)
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
    done = set()
    order = []
    for t in reversed(bfs):
        keep = set(bags[parent[t]].tolist()) if parent[t] >= 0 else set()
        for v in bags[t].tolist():
            if v not in done and v not in keep:
                done.add(v)
                order.append(v)
    return np.asarray(order, dtype=np.int64)


def _core_graph(indptr, indices, core, n):
    """CSR of the subgraph induced by ``core`` (sorted ids), relabelled ``0 .. len(core) - 1``."""
    pos = np.full(n, -1, dtype=np.int64)
    pos[core] = np.arange(core.size, dtype=np.int64)
    deg = np.diff(indptr)[core]
    starts = indptr[core]
    # entries of the core rows, gathered without a Python loop
    ptr = np.zeros(core.size + 1, dtype=np.int64)
    np.cumsum(deg, out=ptr[1:])
    src = np.repeat(starts - ptr[:-1], deg) + np.arange(ptr[-1], dtype=np.int64)
    cols = pos[indices[src]]
    rows = np.repeat(np.arange(core.size, dtype=np.int64), deg)
    keep = (cols >= 0) & (cols != rows)
    rows, cols = rows[keep], cols[keep]
    out_ptr = np.zeros(core.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=core.size), out=out_ptr[1:])
    return out_ptr, cols


def _solve_core(indptr, indices, core, n, state):
    """Decompose the subgraph induced by ``core`` component by component.

    Returns bags (arrays of original vertex ids) and edges (pairs of bag indices).
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    if core.size == 0:
        return [], []
    cptr, cidx = _core_graph(indptr, indices, core, n)
    nc = core.size
    A = csr_matrix((np.ones(cidx.size, dtype=np.int8), cidx, cptr), shape=(nc, nc))
    ncomp, labels = connected_components(A, directed=False)
    sizes = np.bincount(labels, minlength=ncomp)
    # components by decreasing size, each a contiguous block of one relabelled matrix
    rank = np.empty(ncomp, dtype=np.int64)
    rank[np.argsort(-sizes, kind="stable")] = np.arange(ncomp)
    perm = np.argsort(rank[labels], kind="stable")
    sizes = np.sort(sizes)[::-1]
    bounds_ = np.zeros(ncomp + 1, dtype=np.int64)
    np.cumsum(sizes, out=bounds_[1:])
    largest = int(sizes[0])
    need = 4 * largest * ((largest + 63) // 64) * 8
    if need > state.opt["max_memory"]:
        raise MemoryError(f"treewidth: a connected component of {largest} vertices needs about {need / 2**30:.1f} GiB "
                          f"for its dense bitset adjacency (max_memory={state.opt['max_memory'] / 2**30:.1f} GiB)")
    P = A[perm][:, perm].tocsr()
    P.sort_indices()
    verts = core[perm]
    bags, edges, roots = [], [], []
    for c in range(ncomp):
        lo, hi = int(bounds_[c]), int(bounds_[c + 1])
        if hi - lo <= state.lb + 1:
            # this one and all smaller components fit in one bag each
            rest = np.split(verts[lo:], bounds_[c + 1:-1] - lo)
            off = len(bags)
            bags.extend(rest)
            roots.extend(range(off, off + len(rest)))
            break
        sub = P[lo:hi, lo:hi]
        b, e = _solve_connected(bitsets_from_csr(sub.indptr, sub.indices, hi - lo), state, 0)
        off = len(bags)
        roots.append(off)
        bags.extend(verts[lo + x] for x in b)
        edges.extend((a + off, d + off) for a, d in e)
    edges.extend(zip(roots[:-1], roots[1:]))
    return bags, edges


# the options of solve() and their defaults
_DEFAULTS = {"preprocess": True, "separators": True, "gpu_race": None, "assist_device": "gpu",
             "max_memory": 2 << 30, "minor_steps": 100000, "clique": True,
             "disjoint_paths": True, "mmw": True, "simplicial_rule": True, "dedup": "exact", "max_states": None}


def solve(indptr, indices, n, *, time_limit=None, method="pid", device="cpu", options=None):
    """Tree decomposition of minimum width (best found within ``time_limit``).

    The vertices of degree at most one are removed first, repeatedly, on the sparse graph
    (:func:`kernels.treewidth.preprocess.peel_low_degree`, ``O(n + m)``); only the
    connected components of what is left (the 2-core) are handled as dense bitset graphs,
    largest first, and components that fit in one bag of the width already proven are not
    searched. Time and memory are thus proportional to the input outside the 2-core.

    Parameters
    ----------
    indptr, indices : ndarray
        CSR adjacency of a simple undirected graph with ``n`` vertices.
    time_limit : float, optional
        Seconds for the whole solve.
    method : {"pid", "bfs"}
        Exact search of the pieces left after preprocessing.
    device : {"cpu", "gpu"}
        Where ``method="bfs"`` runs.
    options : dict
        ``preprocess``, ``separators`` (bool), ``gpu_race`` (None, ``"auto"``: PID races the
        breadth-first search on ``assist_device`` on the pieces where it can pay, ``"always"``:
        on every piece of at most 256 vertices), ``max_memory`` (bytes for the PID tables),
        ``minor_steps``, and for ``bfs``: ``clique``, ``disjoint_paths``, ``mmw``,
        ``simplicial_rule``, ``dedup``, ``max_states``.

    Returns
    -------
    dict
        ``bag_ptr``, ``bag_vertices`` (the bags as CSR: bag ``i`` is
        ``bag_vertices[bag_ptr[i]:bag_ptr[i + 1]]``), ``edges`` (``k x 2`` bag indices),
        ``ordering`` (elimination ordering of width at most ``width``), ``width``,
        ``lower``, ``status``, ``phase`` and statistics.
    """
    opt = dict(_DEFAULTS)
    opt.update(options or {})
    state = _State(time_limit, method, device, opt)
    indptr = np.asarray(indptr, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    # the forest part first, on the sparse graph
    peeled, parent, alive = preprocess.peel_low_degree(indptr, indices, n)
    if np.any(parent >= 0) or peeled.size < n:
        state.raise_lb(1, "trivial")  # an edge
    core = np.flatnonzero(alive)
    try:
        bags, edges = _solve_core(indptr, indices, core, n, state)
    finally:
        for thread in state.races:  # cancelled: each ends after its current launch
            thread.join()
    bags, edges = _compact(bags, edges)
    core_order = _ordering_from_bags(bags, edges)
    nb = len(bags)
    # bags of the peeled vertices: {v} or {v, parent}, each hung below a bag holding its parent
    has = parent >= 0
    sizes = np.concatenate([np.fromiter((len(b) for b in bags), dtype=np.int64, count=nb), 1 + has.astype(np.int64)])
    bag_ptr = np.zeros(sizes.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=bag_ptr[1:])
    bag_vertices = np.empty(int(bag_ptr[-1]), dtype=np.int64)
    if nb:
        bag_vertices[: bag_ptr[nb]] = np.concatenate(bags)
    first = bag_ptr[nb:-1]
    bag_vertices[first] = peeled
    bag_vertices[first[has] + 1] = parent[has]
    home = np.full(n, -1, dtype=np.int64)  # a bag holding each vertex
    if nb:
        home[bag_vertices[: bag_ptr[nb]]] = np.repeat(np.arange(nb, dtype=np.int64), sizes[:nb])
    home[peeled] = nb + np.arange(peeled.size, dtype=np.int64)
    target = np.where(has, home[np.maximum(parent, 0)], -1)
    tops = np.flatnonzero(~has)  # peeled vertices removed alone: their trees' roots
    if nb == 0 and tops.size:
        target[tops[1:]] = nb + tops[0]  # the first one is the root of the whole tree
        child = np.delete(np.arange(peeled.size), tops[0])
    else:
        target[tops] = 0
        child = np.arange(peeled.size)
    peel_edges = np.stack([nb + child, target[child]], axis=1)
    tree = np.concatenate([np.asarray(edges, dtype=np.int64).reshape(-1, 2), peel_edges]).astype(np.int64)
    ordering = np.concatenate([peeled, core_order]).astype(np.int64)
    width = int(sizes.max()) - 1 if sizes.size else -1
    lower = min(state.lb, width)
    status = "optimal" if lower == width else state.status
    if status != "optimal":
        phase = None
    elif state.exact_used:
        phase = state.method
    else:
        phase = "bounds"
    return {"bag_ptr": bag_ptr, "bag_vertices": bag_vertices, "edges": tree, "ordering": ordering, "width": width,
            "lower": lower, "status": status, "phase": phase, "pieces": state.pieces, "iterations": state.iterations,
            "times": state.times, "largest_core": state.largest_core, "parts": state.parts,
            "largest_part": state.largest_part,
            "expanded": state.expanded, "lb_source": state.lb_source, "time": time.perf_counter() - state.t0,
            "peeled": int(peeled.size), "gpu_used": state.gpu_used}


# --------------------------------------------------------------------------- warm-up
_WARM = set()


def _csr_of_edges(n, edges):
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    rows = np.concatenate([e[:, 0], e[:, 1]])
    cols = np.concatenate([e[:, 1], e[:, 0]])
    order = np.lexsort((cols, rows))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    return indptr, cols[order]


def _warm_graphs(method):
    """Small graphs that together reach every compiled kernel of the pipeline with ``method``:
    ``(n, edges, options)``."""
    def grid(r, c, off=0):
        return [(off + i * c + j, off + i * c + j + 1) for i in range(r) for j in range(c - 1)] + [
            (off + i * c + j, off + (i + 1) * c + j) for i in range(r - 1) for j in range(c)]

    # a wheel and a ring of pendant triangles around it: after the simplicial rules, a
    # core of several components
    wheel = [(i, (i + 1) % 9) for i in range(9)] + [(9, i) for i in range(9)] + [(i, i + 10) for i in range(9)]
    wheel += [(i + 10, (i + 1) % 9 + 10) for i in range(9)]
    petersen = [(i, (i + 1) % 5) for i in range(5)] + [(i, i + 5) for i in range(5)] + [
        (5 + i, 5 + (i + 2) % 5) for i in range(5)]
    if method == "bfs":
        yield 19, wheel, {"dedup": "exact"}
        # a 5 x 7 grid without preprocessing: a level of a few thousand states outgrows
        # the first arrays, and the search finds the ordering
        for dedup in ("exact", "bloom"):
            yield 35, grid(5, 7), {"dedup": dedup, "preprocess": False, "separators": False}
        return
    # a 7 x 7 grid (PID grows every table) with a tree hanging from it, a triangle
    # glued at a corner (a clique separator), a second grid joined by two edges (a safe
    # separator that is no clique), and a separate 4-cycle with a chord
    edges = grid(7, 7) + [(0, 49), (49, 50), (50, 51), (48, 52), (52, 53), (53, 48)]
    edges += grid(4, 4, 54) + [(24, 54), (25, 55)]
    edges += [(70, 71), (71, 72), (72, 73), (73, 70), (70, 72)]
    yield 74, edges, {}
    yield 19, wheel, {}
    yield 10, petersen, {"preprocess": False, "separators": False}


def warm_up(method="pid"):
    """Compile (or load from Numba's cache) every CPU kernel :func:`solve` with ``method``
    can call, once per process.

    A time limit is meant for the search: a cold Numba cache takes seconds to minutes,
    far more than a typical limit, so a caller with a limit warms up before its clock
    starts. Solves a few fixed small graphs with a time limit (the deadline arguments
    then have the types of a limited solve).

    Parameters
    ----------
    method : {"pid", "bfs"}
        ``"bfs"`` also compiles the paper's search on the CPU with both duplicate filters.

    Examples
    --------
    >>> from kernels.treewidth.solve import warm_up
    >>> warm_up("pid")
    """
    if method in _WARM:
        return
    for n, edges, options in _warm_graphs(method):
        indptr, indices = _csr_of_edges(n, edges)
        solve(indptr, indices, n, time_limit=600.0, method=method, device="cpu", options=options)
        if method == "bfs":
            # the check of an ordering the search found: on these graphs the greedy
            # ordering is optimal already, so the search only proves lower bounds
            bounds.ordering_width(bitsets_from_csr(indptr, indices, n), np.arange(n, dtype=np.int64))
    if method == "pid":
        # PID from tables of 16 rows: every table grows (on large pieces the lookup of
        # O-blocks grows only after seconds of search), with either lookup
        n, edges, _ = next(_warm_graphs(method))
        adj = bitsets_from_csr(*_csr_of_edges(n, edges), n)
        for lookup in ("sieve", "index"):
            solver = pid.PIDSolver(*bits_csr(_induced(adj, np.arange(49))), capacity=16, oblocks=lookup)
            k = 5
            while solver.decide(k, monotonic() + 600.0) == pid.EXHAUSTED:
                k += 1
    monotonic()
    _WARM.add(method)


def warm_up_gpu():
    """Compile (or load from the caches) what the GPU search runs, once per process: its
    CUDA kernels, the CUDA context, and the CPU kernels of its bounds. A limited solve on
    the GPU (``method="bfs"``, or the race of ``device="auto"``) would otherwise spend that
    inside its limit; in a race, the compilation would also hold the GIL that PID's time
    slices need.

    Examples
    --------
    >>> from kernels.backend import gpu_available
    >>> from kernels.treewidth.solve import warm_up_gpu
    >>> if gpu_available():
    ...     warm_up_gpu()
    """
    if "gpu" in _WARM:
        return
    from . import bfs as kb

    # a 4-cycle: one level of the search with each filter and rule
    A = np.zeros((4, 4), dtype=np.bool_)
    for u in range(4):
        A[u, (u + 1) % 4] = A[(u + 1) % 4, u] = True
    adj = kb.to_bitsets(A)
    cand = kb.to_bitsets(np.ones((1, 4), dtype=np.bool_))[0]
    for mode in (kb.EXACT, kb.BLOOM):
        for rule in (True, False):
            kb.search_gpu(adj, cand, 2, 1, mode=mode, rule=rule)
    # the Petersen graph (treewidth 4) from a lower bound of 2, alone and as a race's side:
    # the clique, the LBP+ bound with its connectivity matrix, the search and its check
    n, edges, _ = list(_warm_graphs("pid"))[-1]
    bits = bitsets_from_csr(*_csr_of_edges(n, edges), n)
    for cancel in (None, _Cancel()):
        state = _State(600.0, "pid", "gpu", dict(_DEFAULTS))
        state.lb = 2
        _exact_bfs(bits, state, 5, None, device="gpu", mode_exact=cancel is not None, cancel=cancel)
    _WARM.add("gpu")
