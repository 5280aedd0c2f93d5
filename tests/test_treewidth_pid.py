"""Tests of the exact treewidth kernels: PID search, bounds, reductions, safe separators."""
from __future__ import annotations

import importlib
import importlib.util
import itertools
import time

import networkx as nx
import numpy as np
import pytest

import graphkit
from graphkit.treewidth import is_tree_decomposition, treewidth
from kernels.treewidth import bounds, pid, preprocess
from kernels.treewidth._bits import monotonic
from kernels.treewidth.solve import bitsets_from_csr
from helpers import compiled_during
from test_treewidth import subset_dp


def _csr(G):
    G = nx.convert_node_labels_to_integers(G)
    n = G.number_of_nodes()
    indptr, indices = [0], []
    for v in range(n):
        indices += sorted(G[v])
        indptr.append(len(indices))
    return G, np.asarray(indptr, dtype=np.int64), np.asarray(indices, dtype=np.int64)


def _bits(G):
    G, indptr, indices = _csr(G)
    return G, bitsets_from_csr(indptr, indices, G.number_of_nodes())


def _td(bags, edges):
    return graphkit.TreeDecomposition([np.asarray(b) for b in bags], np.asarray(edges, dtype=np.int64).reshape(-1, 2))


def _connected_random(rng, lo, hi):
    while True:
        n = int(rng.integers(lo, hi + 1))
        G = nx.gnp_random_graph(n, float(rng.uniform(0.15, 0.7)), seed=int(rng.integers(1 << 30)))
        if nx.is_connected(G):
            return G


# ---------------------------------------------------------------- PID decision procedure


@pytest.mark.parametrize("oblocks", ["sieve", "index"])
def test_pid_decides_every_k_like_the_subset_dp(oblocks):
    rng = np.random.default_rng(1)
    for _ in range(40):
        G, indptr, indices = _csr(_connected_random(rng, 3, 11))
        tw = subset_dp(G)
        s = pid.PIDSolver(indptr, indices, oblocks=oblocks)
        for k in range(G.number_of_nodes()):
            st = s.decide(k)
            assert st == (pid.FOUND if k >= tw else pid.EXHAUSTED), (k, tw, list(G.edges))
            if st == pid.FOUND:
                bags, edges = s.bags()
                assert is_tree_decomposition(G, _td(bags, edges))
                assert max(len(b) for b in bags) - 1 <= k
                break


def _sieve_case(rng, n, no, tmax):
    """``no`` O-blocks ``(T, O)`` of random sets on ``n`` vertices (distinct T, O outside T)."""
    W = (n + 63) // 64
    ob_sets = np.zeros((no, 2, W), dtype=np.uint64)
    seen = set()
    j = 0
    while j < no:
        T = tuple(sorted(rng.choice(n, int(rng.integers(1, tmax + 1)), replace=False).tolist()))
        if T in seen:
            continue
        seen.add(T)
        rest = np.setdiff1d(np.arange(n), T)
        O = rest[rng.random(rest.size) < 0.6]
        for v in T:
            ob_sets[j, 0, v >> 6] |= np.uint64(1) << np.uint64(v & 63)
        for v in O.tolist():
            ob_sets[j, 1, v >> 6] |= np.uint64(1) << np.uint64(v & 63)
        j += 1
    return ob_sets


@pytest.mark.parametrize("n", [40, 64, 150])
def test_sieve_finds_exactly_the_combinable_oblocks(n):
    """The O-block sieve (a trie over T with per-node common parts) returns exactly the
    O-blocks that a scan of all of them accepts, and prunes: on queries with a small
    margin it visits far fewer nodes than there are O-blocks."""
    rng = np.random.default_rng(n)
    no = 1500
    ob_sets = _sieve_case(rng, n, no, 8)
    W = ob_sets.shape[2]
    tr = np.empty((2 * no + pid._TR_STEP, pid._T_COLS), dtype=np.int32)
    tr_must = np.empty((tr.shape[0], W), dtype=np.uint64)
    tr_root = np.full(1, -1, dtype=np.int32)
    cnt = np.zeros(pid._C_NCOUNT, dtype=np.int64)
    for j in range(no):
        pid._tr_insert(ob_sets, j, n, tr, tr_root, tr_must, cnt)
    assert cnt[pid._C_NTR] == 2 * no - 1
    Tsets = [set(np.flatnonzero(np.unpackbits(ob_sets[j, 0].view(np.uint8), bitorder="little")).tolist())
             for j in range(no)]
    Osets = [set(np.flatnonzero(np.unpackbits(ob_sets[j, 1].view(np.uint8), bitorder="little")).tolist())
             for j in range(no)]
    out = np.empty(no, dtype=np.int64)
    stk = np.empty(n + 2, dtype=np.int64)
    visited = []
    for q in range(200):
        Cs = set(rng.choice(n, int(rng.integers(1, 6)), replace=False).tolist())
        Ss = set(rng.choice(np.setdiff1d(np.arange(n), list(Cs)), int(rng.integers(1, 10)), replace=False).tolist())
        m = int(rng.integers(0, 4))
        C = np.zeros(W, dtype=np.uint64)
        S = np.zeros(W, dtype=np.uint64)
        for v in Cs:
            C[v >> 6] |= np.uint64(1) << np.uint64(v & 63)
        for v in Ss:
            S[v >> 6] |= np.uint64(1) << np.uint64(v & 63)
        before = int(cnt[pid._C_VNODE])
        got = pid._tr_query(C, S, m, n, tr, tr_root, tr_must, ob_sets, out, stk, cnt)
        visited.append((m, int(cnt[pid._C_VNODE]) - before))
        c0 = min(Cs)
        want = sorted(j for j in range(no) if not (Tsets[j] & Cs) and c0 in Osets[j] and len(Tsets[j] - Ss) <= m
                      and not Ss <= Tsets[j])
        assert sorted(out[:got].tolist()) == want, (q, m)
    tight = [v for m, v in visited if m == 0]
    assert tight and sum(tight) / len(tight) < 0.25 * no  # a scan: 2 * no - 1 nodes


@pytest.mark.parametrize("G, tw", [
    (nx.grid_2d_graph(5, 6), 5),
    (nx.petersen_graph(), 4),
    (nx.complete_bipartite_graph(4, 6), 4),
    (nx.circular_ladder_graph(9), 4),
    (nx.hypercube_graph(4), 6),
    (nx.convert_node_labels_to_integers(nx.grid_2d_graph(3, 40)), 3),  # three-word bitsets
])
@pytest.mark.parametrize("oblocks", ["sieve", "index"])
def test_pid_structured_graphs(G, tw, oblocks):
    G, indptr, indices = _csr(G)
    s = pid.PIDSolver(indptr, indices, oblocks=oblocks)
    assert s.decide(tw - 1) == pid.EXHAUSTED
    assert s.decide(tw) == pid.FOUND
    bags, edges = s.bags()
    assert is_tree_decomposition(G, _td(bags, edges), width=tw)


def test_pid_chooses_the_oblock_lookup_by_width_against_size():
    """The sieve when k + 1 is at least a tenth of the vertices, else the pair index;
    both give the same answers (the tests above run each on every graph)."""
    for G, tw, want in [(nx.grid_2d_graph(3, 40), 3, "index"), (nx.petersen_graph(), 4, "sieve"),
                        (nx.grid_2d_graph(6, 6), 6, "sieve")]:
        G, indptr, indices = _csr(G)
        s = pid.PIDSolver(indptr, indices)
        assert s.decide(tw - 1) == pid.EXHAUSTED and s.decide(tw) == pid.FOUND
        assert s.stats["lookup"] == want
    with pytest.raises(ValueError):
        pid.PIDSolver(indptr, indices, oblocks="trie")


def test_pid_deadline_then_resume():
    G, indptr, indices = _csr(nx.grid_2d_graph(6, 6))
    s = pid.PIDSolver(indptr, indices)
    assert s.decide(4) == pid.EXHAUSTED
    assert s.decide(5, deadline=monotonic() - 1.0) == pid.TIMEOUT
    assert s.decide(5) == pid.EXHAUSTED  # resumes where it stopped
    assert s.decide(6) == pid.FOUND
    with pytest.raises(ValueError):
        s.decide(3)


def test_pid_memory_limit_is_a_clean_stop():
    G, indptr, indices = _csr(nx.grid_2d_graph(7, 7))
    s = pid.PIDSolver(indptr, indices, max_memory=1 << 20)
    st = pid.EXHAUSTED
    k = 3
    while st == pid.EXHAUSTED:
        st = s.decide(k)
        k += 1
    assert st == pid.MEMORY and s.memory <= 1 << 20
    with pytest.raises(RuntimeError):
        s.bags()


def test_treewidth_reports_memory_status():
    G = nx.grid_2d_graph(9, 9)
    res = treewidth(G, max_memory=1 << 20)
    assert res.status == "memory" and not res.optimal
    assert res.lower_bound <= 9 <= res.width
    assert is_tree_decomposition(G, res.decomposition, width=res.width)


def test_huge_component_is_a_clear_memory_error():
    # a cycle: no vertex of degree one, so the whole of it reaches the dense representation
    G = graphkit.Graph.from_edges(40000, np.arange(40000), (np.arange(40000) + 1) % 40000)
    with pytest.raises(MemoryError, match="40000 vertices"):
        treewidth(G, max_memory=1 << 24)


# ---------------------------------------------------------------- bounds


def test_bounds_bracket_the_treewidth():
    rng = np.random.default_rng(2)
    for _ in range(30):
        G, A = _bits(_connected_random(rng, 4, 11))
        tw = subset_dp(G)
        for crit in (bounds.MIN_DEGREE, bounds.MIN_FILL):
            for seed in (-1, 3):
                order, w = bounds.elimination_ordering(A, crit, seed, -1)
                assert sorted(order.tolist()) == list(range(G.number_of_nodes()))
                assert bounds.ordering_width(A, order) == w >= tw
                assert graphkit.ordering_width(G, order) == w
        assert bounds.degeneracy(A) <= tw
        assert bounds.mmd_plus(A, -1) <= tw


def test_elimination_ordering_stops_early():
    _, A = _bits(nx.grid_2d_graph(6, 6))
    order, w = bounds.elimination_ordering(A, bounds.MIN_DEGREE, -1, 3)
    assert w > 3 and sorted(order.tolist()) == list(range(36))


def test_ordering_bags_form_a_decomposition():
    G, A = _bits(nx.petersen_graph())
    order, w = bounds.elimination_ordering(A, bounds.MIN_FILL, -1, -1)
    bags, parent = bounds.ordering_bags(A, order)
    rows = [np.flatnonzero(np.unpackbits(b.view(np.uint8), bitorder="little")) for b in bags]
    edges = [(i, int(p)) for i, p in enumerate(parent) if p >= 0]
    assert is_tree_decomposition(G, _td(rows, edges), width=w)


# ---------------------------------------------------------------- reductions and separators


def test_simplicial_rules_are_safe():
    rng = np.random.default_rng(3)
    for _ in range(40):
        G, A = _bits(nx.gnp_random_graph(int(rng.integers(4, 12)), float(rng.uniform(0.1, 0.5)),
                                         seed=int(rng.integers(1 << 30))))
        tw = subset_dp(G) if G.number_of_nodes() else -1
        low0 = int(bounds.mmd_plus(A, -1))
        B = A.copy()
        alive = np.ones(G.number_of_nodes(), dtype=np.bool_)
        removed, ptr, nbr, low = preprocess.simplicial_reduce(B, alive, low0)
        rest = np.flatnonzero(alive)
        H = nx.Graph()
        H.add_nodes_from(rest.tolist())
        for u in rest.tolist():
            for v in np.flatnonzero(np.unpackbits(B[u].view(np.uint8), bitorder="little")).tolist():
                H.add_edge(u, v)
        assert set(removed.tolist()) | set(rest.tolist()) == set(G.nodes)
        assert max(low, subset_dp(H) if H.number_of_nodes() else -1) == max(tw, low0)
        assert low <= max(tw, low0)


def test_clique_minor_is_a_real_minor():
    rng = np.random.default_rng(4)
    found = 0
    for _ in range(60):
        G, A = _bits(_connected_random(rng, 6, 14))
        n = G.number_of_nodes()
        S = rng.choice(n, size=int(rng.integers(2, 5)), replace=False)
        allowed = np.setdiff1d(np.arange(n), S)
        Sb = np.zeros(A.shape[1], dtype=np.uint64)
        Ab = np.zeros(A.shape[1], dtype=np.uint64)
        for v in S:
            Sb[v >> 6] |= np.uint64(1) << np.uint64(v & 63)
        for v in allowed:
            Ab[v >> 6] |= np.uint64(1) << np.uint64(v & 63)
        ok, owner = preprocess.clique_minor(A, Sb, Ab, 10000)
        if not ok:
            continue
        found += 1
        Ss = sorted(S.tolist())
        branch = [set(np.flatnonzero(owner == i).tolist()) for i in range(len(Ss))]
        for i, v in enumerate(Ss):
            assert v in branch[i] and nx.is_connected(G.subgraph(branch[i]))
            assert branch[i] - {v} <= set(allowed.tolist())
        for i, j in itertools.combinations(range(len(Ss)), 2):
            assert any(G.has_edge(a, b) for a in branch[i] for b in branch[j])
    assert found > 10


def _check_minor(G, S, owner):
    branch = [set(np.flatnonzero(owner == i).tolist()) for i in range(len(S))]
    for i, v in enumerate(sorted(S)):
        assert v in branch[i] and nx.is_connected(G.subgraph(branch[i]))
    for i, j in itertools.combinations(range(len(S)), 2):
        assert any(G.has_edge(a, b) for a in branch[i] for b in branch[j])


@pytest.mark.parametrize("case", ["narrow_root", "forced_common_neighbour"])
def test_clique_minor_where_a_blind_greedy_gets_stuck(case):
    # Shapes of separators of PACE instances (ex131, ex196) on which the greedy failed
    # although a minor exists, and the safe-separator cut kept a piece of 200 vertices:
    # narrow_root when a connecting path goes to the first branch set of the pair,
    # forced_common_neighbour when pairs that need a path come before pairs whose only
    # common neighbour a path may take.
    if case == "narrow_root":
        # S = {0, 1, 2, 3}: 0, 2, 3 a triangle, 1 reaches the rest only through 4 - 5, and 5
        # sees 0, 2, 3; the path 4 - 5 must go to 1 (its only way out), not to 0.
        G = nx.empty_graph(8)
        G.add_edges_from([(0, 2), (0, 3), (2, 3), (1, 4), (4, 5), (5, 0), (5, 2), (5, 3)])
        G.add_edges_from((x, s) for x in (6, 7) for s in (0, 2, 3))
        S = [0, 1, 2, 3]
    else:
        # S = {0, 1, 2}: 1 - 2 an edge; 3 is the only common neighbour of 0 and 2, and 1 reaches
        # 3 through 6; joining 3 to 0 first leaves 0 - 1 to the free vertex 6.
        G = nx.empty_graph(7)
        G.add_edges_from([(1, 2), (0, 3), (0, 4), (2, 3), (2, 5), (1, 6), (6, 3)])
        S = [0, 1, 2]
    G, A = _bits(G)
    n = G.number_of_nodes()
    Sb = np.zeros(A.shape[1], dtype=np.uint64)
    for v in S:
        Sb[v >> 6] |= np.uint64(1) << np.uint64(v & 63)
    allowed = np.zeros_like(Sb)
    for v in set(range(n)) - set(S):
        allowed[v >> 6] |= np.uint64(1) << np.uint64(v & 63)
    ok, owner = preprocess.clique_minor(A, Sb, allowed, 1000)
    assert ok
    _check_minor(G, S, owner)


def test_clique_minor_fails_without_room():
    G, A = _bits(nx.path_graph(3))
    Sb = np.array([np.uint64(0b101)], dtype=np.uint64)
    ok, _ = preprocess.clique_minor(A, Sb, np.zeros(1, dtype=np.uint64), 100)
    assert not ok
    ok, owner = preprocess.clique_minor(A, Sb, np.array([np.uint64(0b010)], dtype=np.uint64), 100)
    assert ok and owner.tolist()[1] in (0, 1)


def _glued(seed):
    """Random pieces glued along cliques of size 1-3 plus a few extra edges: safe separators."""
    rng = np.random.default_rng(seed)
    G = nx.gnp_random_graph(6, 0.5, seed=seed)
    nxt = 6
    for piece in range(3):
        size = int(rng.integers(1, 4))
        glue = [int(x) for x in rng.choice(list(G.nodes), size=size, replace=False)]
        H = nx.gnp_random_graph(6, 0.5, seed=seed * 10 + piece)
        mapping = {i: (glue[i] if i < size else nxt + i - size) for i in range(6)}
        nxt += 6 - size
        G.add_edges_from((mapping[a], mapping[b]) for a, b in H.edges)
        G.add_edges_from(itertools.combinations(glue, 2))
        G.add_nodes_from(mapping.values())
    return nx.convert_node_labels_to_integers(G)


def test_safe_separators_keep_the_width():
    for seed in range(12):
        G = _glued(seed)
        a = treewidth(G, preprocess=False, separators=True)
        b = treewidth(G, preprocess=False, separators=False)
        c = treewidth(G)
        assert a.width == b.width == c.width and a.optimal and b.optimal and c.optimal
        if G.number_of_nodes() <= 13:
            assert a.width == subset_dp(G)
        for r in (a, b, c):
            assert is_tree_decomposition(G, r.decomposition, width=r.width)


def _blobs(seed):
    """Random dense blobs in a chain, each joined to the next by a few edges."""
    rng = np.random.default_rng(seed)
    G = nx.Graph()
    off = 0
    prev = None
    for _ in range(int(rng.integers(3, 7))):
        sz = int(rng.integers(6, 14))
        H = nx.gnp_random_graph(sz, float(rng.uniform(0.25, 0.6)), seed=int(rng.integers(1 << 30)))
        G.add_nodes_from(range(off, off + sz))
        G.add_edges_from((u + off, v + off) for u, v in H.edges)
        if prev is not None:
            for _ in range(int(rng.integers(1, 4)) + 2):
                G.add_edge(int(rng.integers(prev, off)), int(rng.integers(off, off + sz)))
        prev = off
        off += sz
    return G


class _CutState:
    opt = {"minor_steps": 100_000}
    lb = 0
    times = {"bounds": 0.0}

    def expired(self):
        return False

    def compiled_deadline(self):
        return 0.0


@pytest.mark.parametrize("seed", [10, 20, 124])
def test_split_keeps_the_greedy_cut_with_the_smallest_part(seed):
    """Min-degree and min-fill give the same width on these graphs, but min-fill's
    decomposition cuts into smaller parts at safe separators: the split must take it
    (a choice by width alone kept min-degree's)."""
    solve = importlib.import_module("kernels.treewidth.solve")  # the package exports a function `solve`
    G = _blobs(seed)
    _, indptr, indices = _csr(G)
    adj = bitsets_from_csr(indptr, indices, G.number_of_nodes())
    state = _CutState()
    orders = solve._greedy_orders(adj, state)
    keys = [(solve._largest_open_part(solve._safe_cut(adj, o, state), 0), w) for o, w in orders]
    assert keys[0][1] == keys[1][1] and keys[1][0] < keys[0][0]
    key, cut = solve._choose_cut(adj, orders, state)
    assert key == keys[1]
    # the cut is a decomposition of the graph whose parts are at most that large
    bag_bits, edges, bfs, parent, safe, part, nparts = cut
    bags = [np.flatnonzero(np.unpackbits(b.view(np.uint8), bitorder="little")) for b in bag_bits]
    assert is_tree_decomposition(G, _td(bags, edges))
    for q in range(nparts):
        U = set().union(*(set(bags[x].tolist()) for x in range(len(bags)) if part[x] == q))
        assert len(U) <= key[0] or max(len(bags[x]) for x in range(len(bags)) if part[x] == q) <= 1


# ---------------------------------------------------------------- time limits (issue #41 item 7)


@pytest.fixture(scope="module")
def warm():
    """Compile or load every kernel of the pipeline before a time limit is measured."""
    G = nx.convert_node_labels_to_integers(nx.grid_2d_graph(5, 7))
    G.add_edges_from([(0, 40), (40, 41), (41, 42), (42, 40), (34, 43), (43, 44), (44, 34)])
    treewidth(G)
    treewidth(nx.grid_2d_graph(3, 3), time_limit=5)


def test_time_limit_on_a_large_grid(warm):
    G = nx.grid_2d_graph(40, 40)
    t0 = time.perf_counter()
    res = treewidth(G, time_limit=1)
    elapsed = time.perf_counter() - t0
    assert elapsed < 1.0 + 1.5, elapsed
    assert not res.optimal and res.status == "time_limit"
    assert res.lower_bound <= 40 <= res.width
    assert is_tree_decomposition(G, res.decomposition, width=res.width)


@pytest.mark.parametrize("limit", [0.05, 0.3])
def test_time_limit_on_a_random_graph(warm, limit):
    G = nx.gnm_random_graph(1500, 4500, seed=1)
    t0 = time.perf_counter()
    res = treewidth(G, time_limit=limit)
    assert time.perf_counter() - t0 < limit + 1.5
    assert is_tree_decomposition(G, res.decomposition, width=res.width)
    assert res.lower_bound <= res.width


def test_time_limit_on_a_large_grid_with_the_paper_search(warm):
    """method='bfs' used to compute all vertex-disjoint path counts before looking at the clock."""
    G = nx.grid_2d_graph(40, 40)
    t0 = time.perf_counter()
    res = treewidth(G, time_limit=1, method="bfs", device="cpu")
    assert time.perf_counter() - t0 < 1.0 + 1.5
    assert not res.optimal and res.lower_bound <= 40 <= res.width
    assert is_tree_decomposition(G, res.decomposition, width=res.width)


WARM_UP = """
import networkx as nx, graphkit
# the first limited call of each method warms up; nothing it triggers is counted
graphkit.treewidth(nx.path_graph(3), time_limit=5, device="cpu")
graphkit.treewidth(nx.path_graph(3), time_limit=5, method="bfs", device="cpu")
"""
WARM_WORK = """
cases = [(nx.grid_2d_graph(40, 40), 0.3, "auto"), (nx.gnm_random_graph(1500, 4500, seed=1), 0.3, "auto"),
         (nx.gnm_random_graph(40, 120, seed=3), 5, "auto"), (nx.random_regular_graph(5, 60, seed=2), 0.5, "auto"),
         (nx.grid_2d_graph(6, 6), 5, "bfs"), (nx.random_regular_graph(3, 24, seed=1), 0.5, "bfs")]
for G, limit, method in cases:
    graphkit.treewidth(G, time_limit=limit, method=method, device="cpu")
"""


def test_time_limited_solves_compile_nothing_after_the_warm_up():
    # the limit is for the solve: every Numba function a limited treewidth calls must be
    # compiled before its clock starts (a cold cache takes minutes on two cores); the
    # graphs reach the reductions, safe separators, components, PID tables that grow,
    # deadlines inside each phase, and the paper's search
    assert compiled_during(WARM_UP, WARM_WORK) == []


# ---------------------------------------------------------------- the forest part, in O(n + m)


def test_peel_low_degree():
    # a triangle with a path hanging from it, an isolated vertex, a separate edge
    G = graphkit.Graph.from_edges(9, [0, 1, 2, 2, 3, 4, 6], [1, 2, 0, 3, 4, 5, 7])
    order, parent, alive = preprocess.peel_low_degree(G.indptr.astype(np.int64), G.indices.astype(np.int64), G.n)
    assert sorted(order.tolist()) == [3, 4, 5, 6, 7, 8]
    assert np.flatnonzero(alive).tolist() == [0, 1, 2]
    par = dict(zip(order.tolist(), parent.tolist()))
    assert par[5] == 4 and par[4] == 3 and par[3] == 2 and par[8] == -1
    assert {par[6], par[7]} == {-1, 6} or {par[6], par[7]} == {-1, 7}
    pos = {v: i for i, v in enumerate(order.tolist())}
    assert all(p < 0 or p not in pos or pos[p] > pos[v] for v, p in par.items())


def test_forest_parts_and_many_components_against_subset_dp():
    rng = np.random.default_rng(5)
    for seed in range(10):
        H = nx.gnp_random_graph(8, 0.4, seed=seed)
        G = nx.disjoint_union(H, nx.cycle_graph(4))
        G = nx.disjoint_union(G, nx.complete_graph(3))
        exp = max(subset_dp(H), 2)
        # trees hanging from random vertices, isolated vertices
        nxt = G.number_of_nodes()
        for _ in range(8):
            G.add_edge(int(rng.integers(0, nxt)), nxt)
            nxt += 1
        G.add_nodes_from(range(nxt, nxt + 3))
        res = treewidth(G)
        assert res.width == exp and res.optimal, seed
        assert res.stats["peeled"] >= 11
        assert is_tree_decomposition(G, res.decomposition, width=exp)
        assert graphkit.ordering_width(G, res.ordering) == exp


def test_millions_of_isolated_vertices_in_proportional_time_and_memory(tmp_path):
    """3M vertices, two edges: ``graphkit tw`` peels them in O(n), with no dense step."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    path = tmp_path / "wide.gr"
    path.write_text("p td 3000000 2\n1 2\n2 3\n")
    code = ("import resource, sys\nfrom graphkit.cli import main\nrc = main(['tw', sys.argv[1]])\n"
            "print('maxrss', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\nsys.exit(rc)")
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    # the same pipeline on five vertices first, in its own process, so that the measured
    # process loads compiled code instead of compiling it
    small = tmp_path / "small.gr"
    small.write_text("p td 5 2\n1 2\n2 3\n")
    subprocess.run([sys.executable, "-c", code, str(small)], capture_output=True, env=env, cwd=root,
                   timeout=600, check=True)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env,
                          cwd=root, timeout=300)
    elapsed = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == "s td 3000000 2 3000000"  # one bag per vertex, width 1
    assert len(lines) == 1 + 3000000 + 2999999
    maxrss_kib = int(proc.stderr.split("maxrss")[-1].split()[0])
    # 0.63 GB when run alone; inside the whole default suite the same child peaked at 1.6 GB
    # (not explained yet), so the bound leaves room for that and still refuses a dense step
    assert maxrss_kib < 2.5 * 2**20, maxrss_kib
    assert elapsed < 90, elapsed  # about 10 s on a loaded 2-core machine (was minutes)


# ---------------------------------------------------------------- device="auto": PID races the search


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_race_keeps_widths_and_proofs(seed):
    """PID racing the breadth-first search (here on the CPU) on every piece: same widths, optimal."""
    from kernels.treewidth.solve import solve

    for n, p in ((30, 0.75), (24, 0.3), (40, 0.5)):
        G, indptr, indices = _csr(nx.gnp_random_graph(n, p, seed=seed))
        ref = treewidth(G, device="cpu")
        out = solve(indptr, indices, n, options={"gpu_race": "always", "assist_device": "cpu"})
        assert out["width"] == ref.width and out["status"] == "optimal"
        assert all("race" in r for r in out["pieces"] if r["method"] == "pid")  # the search was started
        # a wavefront too small for the search: PID alone proves it
        out = solve(indptr, indices, n, options={"gpu_race": "always", "assist_device": "cpu", "max_states": 2})
        assert out["width"] == ref.width and out["status"] == "optimal"


def test_race_search_finishes_a_piece_pid_cannot_hold():
    """PID's tables full (1 MiB): the search, still running, finishes the piece and proves it."""
    from kernels.treewidth.solve import solve

    G, indptr, indices = _csr(nx.gnp_random_graph(60, 0.9, seed=1))
    alone = solve(indptr, indices, 60, options={"max_memory": 1 << 20})
    assert alone["status"] == "memory"
    out = solve(indptr, indices, 60, options={"gpu_race": "always", "assist_device": "cpu", "max_memory": 1 << 20})
    assert out["status"] == "optimal" and out["width"] == treewidth(G, device="cpu").width
    assert [r["race"] for r in out["pieces"]] == ["gpu"]
    assert any("level_sizes" in it for it in out["iterations"])


def test_cancelled_search_stops_at_once():
    S = importlib.import_module("kernels.treewidth.solve")

    _, indptr, indices = _csr(nx.gnp_random_graph(40, 0.3, seed=3))
    adj = S.bitsets_from_csr(indptr, indices, 40)
    state = S._State(None, "pid", "cpu", dict(S._DEFAULTS))
    cancel = S._Cancel()
    cancel.set()
    t = time.perf_counter()
    assert S._exact_bfs(adj, state, 40, None, device="cpu", mode_exact=True, cancel=cancel) is None
    assert time.perf_counter() - t < 5.0 and state.status == "optimal"


def test_race_plan():
    """Which pieces race: at most 256 vertices; with "auto" only those whose greedy width
    leaves the search few levels (dense pieces of large width), after a head start."""
    S = importlib.import_module("kernels.treewidth.solve")

    state = S._State(None, "pid", "gpu", {"gpu_race": "auto"})
    assert S._race_plan(58, 35, state) == S._RACE_HEAD  # PACE pieces where the GPU won
    assert S._race_plan(91, 44, state) == S._RACE_HEAD
    assert S._race_plan(161, 79, state) is None  # 82 levels: no progress on the GPU
    assert S._race_plan(114, 32, state) is None  # sparse
    assert S._race_plan(58, 13, state) is None
    assert S._race_plan(257, 250, state) is None  # beyond the GPU search
    state.opt["gpu_race"] = "always"
    assert S._race_plan(256, 10, state) == 0.0 and S._race_plan(257, 250, state) is None
    state.opt["gpu_race"] = None
    assert S._race_plan(58, 35, state) is None


def test_auto_without_a_working_gpu_falls_back(monkeypatch):
    """device="auto" told a GPU is there when the search cannot run: a warning, then what PID
    alone gives (here PID's tables fill while it waits for the search)."""
    T = importlib.import_module("graphkit.treewidth")

    G = nx.gnp_random_graph(60, 0.9, seed=1)
    alone = treewidth(G, device="cpu", max_memory=1 << 20)
    monkeypatch.setattr(T, "resolve_device", lambda device: "gpu")
    monkeypatch.setattr(T, "_cores", lambda: 2)
    monkeypatch.setattr("kernels.treewidth.bfs.search_gpu", _broken_search)
    with pytest.warns(RuntimeWarning, match="GPU search failed"):
        res = treewidth(G, gpu_assist=True, max_memory=1 << 20)
    assert (res.width, res.status, res.device) == (alone.width, alone.status, "cpu")
    assert res.lower_bound >= alone.lower_bound  # the search's own bounds (clique, LBP+) may be higher
    assert is_tree_decomposition(G, res.decomposition, width=res.width)
    monkeypatch.setattr(T, "_cores", lambda: 1)  # no second core to drive a GPU: no race at all
    res = treewidth(G, gpu_assist=True)
    assert res.optimal and not any("race" in r for r in res.stats["pieces"])


def _broken_search(*args, **kwargs):
    raise RuntimeError("no CUDA device")


def _bench_module(monkeypatch):
    from pathlib import Path

    examples = Path(__file__).resolve().parents[1] / "examples"
    monkeypatch.syspath_prepend(str(examples))  # the script imports its neighbour _shared_data
    spec = importlib.util.spec_from_file_location("bench_treewidth", examples / "bench_treewidth.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_bench_core_plan_and_device_table(monkeypatch):
    """The PACE benchmark's shards (one core for "cpu", two where a GPU may race) and its
    side-by-side table of devices."""
    bench = _bench_module(monkeypatch)
    monkeypatch.setattr(bench.os, "cpu_count", lambda: 16)
    plan = bench._core_plan(["cpu", "auto"], 2, 3)
    assert plan == [("cpu", [3]), ("cpu", [4]), ("auto", [5, 6]), ("auto", [7, 8])]
    assert bench._core_plan(["auto"], 3, None) == [("auto", None)] * 3
    with pytest.raises(SystemExit):
        bench._core_plan(["cpu", "auto"], 5, 2)  # 15 cores from CPU 2
    rows = [{"name": "a", "n": 10, "tw": 3, "peer_seconds": 1.0, "by_device": {
                "cpu": {"optimal": True, "seconds": 2.0}, "auto": {"optimal": True, "seconds": 0.5, "device": "gpu",
                                                                    "races": ["gpu", "cpu", "gpu"]}}},
            {"name": "b", "n": 20, "tw": 5, "peer_seconds": None, "by_device": {
                "cpu": {"optimal": False, "seconds": 20.0}, "auto": {"optimal": True, "seconds": 30.0,
                                                                     "device": "cpu", "races": []}}}]
    table = bench.pace_device_table(rows, 20.0).splitlines()
    assert table[0] == "| instance | n | tw | cpu s | auto s | races | Tamaki s |"
    assert table[2] == "| a | 10 | 3 | 2.00 | 0.50 | 1 cpu, 2 gpu | 1.00 |"
    assert table[3] == "| b | 20 | 5 | >20 | >20 | - | >20 |"
    assert len(bench.pace_device_table(rows, 20.0, only_gpu=True).splitlines()) == 3
    summary = bench.pace_summary(rows, [20.0]).splitlines()
    assert summary[2].startswith("| cpu | 20 s | 2 | 1 | 1 | 1 | 2.00 | 1.00 |")
    assert summary[3].startswith("| auto | 20 s | 2 | 1 | 1 | 1 | 0.50 | 1.00 |")


def test_index_outgrowing_memory_hands_over_to_the_sieve():
    """A grid of width 7 on 84 vertices (the pair index's side of the lookup rule): with
    12 MiB the index cannot grow, and PID goes on with the sieve (the forced index stops)."""
    _, indptr, indices = _csr(nx.convert_node_labels_to_integers(nx.grid_2d_graph(7, 12)))

    def run(oblocks):
        s = pid.PIDSolver(indptr, indices, oblocks=oblocks, max_memory=12 << 20)
        k = 5
        while (st := s.decide(k)) == pid.EXHAUSTED:
            k += 1
        return s, k, st

    s, k, st = run("auto")
    assert (k, st) == (7, pid.FOUND) and s.sieve_forced and s.memory <= 12 << 20
    bags, edges = s.bags()
    G = nx.Graph()
    G.add_edges_from((u, int(v)) for u in range(84) for v in indices[indptr[u]:indptr[u + 1]])
    assert is_tree_decomposition(G, _td(bags, edges), width=7)
    s, k, st = run("index")
    assert st == pid.MEMORY and not s.sieve_forced
