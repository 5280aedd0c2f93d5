"""Tests of graphkit.treewidth: the public API, the GPU paper's search (method="bfs", van der
Zanden and Bodlaender), shared instances."""
from __future__ import annotations

import csv
import io
import importlib
import itertools
from contextlib import redirect_stdout

import networkx as nx
import numpy as np
import pytest

import graphkit
from graphkit.io import TreeDecomposition, read_graph, read_tree_decomposition
from graphkit.treewidth import decomposition_from_ordering, is_tree_decomposition, treewidth
from kernels import treewidth as ktw

# ---------------------------------------------------------------- independent references


def brute_force_orderings(G: nx.Graph) -> int:
    """Treewidth as the minimum width over all elimination orderings (tiny graphs)."""
    nodes = list(G.nodes)
    if not nodes:
        return -1
    best = len(nodes) - 1
    for perm in itertools.permutations(nodes):
        H = {v: set(G[v]) for v in nodes}
        width = 0
        for v in perm:
            N = H.pop(v)
            width = max(width, len(N))
            if width >= best:
                break
            for a in N:
                H[a].discard(v)
                H[a] |= N - {a}
        best = min(best, width)
    return best


def subset_dp(G: nx.Graph) -> int:
    """Treewidth by the recursive min-max dynamic program over vertex subsets (Bodlaender et al.)."""
    nodes = list(G.nodes)
    n = len(nodes)
    if n == 0:
        return -1
    idx = {v: i for i, v in enumerate(nodes)}
    nbr = [0] * n
    for u, v in G.edges:
        nbr[idx[u]] |= 1 << idx[v]
        nbr[idx[v]] |= 1 << idx[u]

    def q(S, v):  # vertices outside S + v reachable from v through S
        seen, stack, out = 1 << v, [v], 0
        while stack:
            x = stack.pop()
            m = nbr[x] & ~seen
            seen |= m
            while m:
                y = (m & -m).bit_length() - 1
                m &= m - 1
                if S >> y & 1:
                    stack.append(y)
                else:
                    out += 1
        return out

    full = (1 << n) - 1
    tw = {0: -1}
    for size in range(1, n + 1):
        for comb in itertools.combinations(range(n), size):
            S = sum(1 << i for i in comb)
            best = n
            for v in comb:
                R = S & ~(1 << v)
                best = min(best, max(tw[R], q(R, v)))
            tw[S] = best
    return max(tw[full], 0) if n else -1


def random_graph(n, p, seed):
    return nx.gnp_random_graph(n, p, seed=seed)


# ---------------------------------------------------------------- small families


@pytest.mark.parametrize(
    "G, expected",
    [
        (nx.path_graph(1), 0),
        (nx.path_graph(2), 1),
        (nx.path_graph(7), 1),
        (nx.cycle_graph(3), 2),
        (nx.cycle_graph(9), 2),
        (nx.complete_graph(6), 5),
        (nx.star_graph(6), 1),
        (nx.balanced_tree(2, 4), 1),
        (nx.grid_2d_graph(2, 2), 2),
        (nx.grid_2d_graph(3, 3), 3),
        (nx.grid_2d_graph(4, 4), 4),
        (nx.grid_2d_graph(5, 5), 5),
        (nx.grid_2d_graph(3, 7), 3),
        (nx.petersen_graph(), 4),
        (nx.empty_graph(4), 0),
        (nx.disjoint_union(nx.complete_graph(4), nx.cycle_graph(5)), 3),
    ],
)
def test_known_families(G, expected):
    res = treewidth(G, device="cpu")
    assert res.width == expected
    assert res.optimal and res.status == "optimal"
    assert res.lower_bound == res.upper_bound == expected
    assert sorted(res.ordering_indices.tolist()) == list(range(G.number_of_nodes()))
    assert set(res.ordering.tolist()) == set(G.nodes)
    assert is_tree_decomposition(G, res.decomposition, width=expected)
    assert graphkit.ordering_width(G, res.ordering) == expected


def test_results_use_the_input_labels():
    G = nx.path_graph([10, 20, 30, 40])
    res = treewidth(G)
    assert res.width == 1 and res.optimal
    assert sorted(res.ordering.tolist()) == [10, 20, 30, 40]
    assert all(set(b.tolist()) <= {10, 20, 30, 40} for b in res.decomposition.bags)
    assert is_tree_decomposition(G, res.decomposition, width=1)
    assert all(set(b.tolist()) <= {0, 1, 2, 3} for b in res.decomposition_indices.bags)
    H = nx.grid_2d_graph(3, 4)
    res = treewidth(H)
    assert all(isinstance(v, tuple) for b in res.decomposition.bags for v in b)
    assert is_tree_decomposition(H, res.decomposition, width=3)
    assert graphkit.ordering_width(H, res.ordering) == 3
    td = decomposition_from_ordering(H, res.ordering)
    assert is_tree_decomposition(H, td, width=3)
    # a bag naming a vertex that does not exist
    bad = TreeDecomposition([np.array([(9, 9)], dtype=object)] + list(res.decomposition.bags[1:]),
                            res.decomposition.edges)
    assert not is_tree_decomposition(H, bad)


def test_empty_graph():
    res = treewidth(nx.Graph(), device="cpu")
    assert res.width == -1 and res.optimal and res.ordering.size == 0
    assert is_tree_decomposition(nx.Graph(), res.decomposition)


@pytest.mark.parametrize("opts", [
    {},
    {"preprocess": False},
    {"separators": False},
    {"preprocess": False, "separators": False},
    {"method": "bfs"},
    {"method": "bfs", "preprocess": False, "separators": False, "clique": False, "disjoint_paths": False,
     "mmw": False, "simplicial_rule": False},
    {"method": "bfs", "preprocess": False, "simplicial_rule": False},
    {"method": "bfs", "dedup": "bloom"},
])
def test_random_graphs_against_subset_dp(opts):
    for seed in range(12):
        n = 8 + seed % 5
        G = random_graph(n, 0.25 + 0.05 * (seed % 6), seed)
        exp = subset_dp(G)
        res = treewidth(G, device="cpu", **opts)
        assert res.width == exp, (seed, opts)
        assert is_tree_decomposition(G, res.decomposition, width=exp)
        assert graphkit.ordering_width(G, res.ordering) <= exp
        if opts.get("dedup") != "bloom":
            assert res.optimal
        assert res.method == opts.get("method", "pid")
        if res.optimal:
            assert res.phase in ("bounds", "pid", "bfs")


def test_subset_dp_matches_brute_force():
    for seed in range(6):
        G = random_graph(7, 0.4, 100 + seed)
        assert subset_dp(G) == brute_force_orderings(G)


@pytest.mark.parametrize("rule", [False, True])
def test_decision_search_exact(rule):
    """The level search answers "tw <= k?" correctly for every k (no bounds, no clique)."""
    for seed in range(10):
        n = 9 + seed % 4
        G = random_graph(n, 0.35, 200 + seed)
        tw = subset_dp(G)
        A = nx.to_numpy_array(G, nodelist=range(n)) != 0
        adj = ktw.to_bitsets(A)
        cand = ktw.to_bitsets(np.ones((1, n), dtype=bool))[0]
        for k in range(0, n):
            srch = ktw.LevelSearchCPU(adj, cand, k, n - k - 1, rule=rule)
            while not srch.done:
                srch.step()
            assert srch.found == (k >= tw), (seed, k, tw)
            if srch.found:
                prefix = srch.prefix()
                order = np.concatenate([prefix, np.setdiff1d(np.arange(n), prefix)])
                assert ktw.elimination_width(A, order) <= k


@pytest.mark.parametrize("length", [24, 47])
def test_decision_search_multiword(length):
    """Bitsets of 2 and 3 words: the 3 x length grid has width 3; k=2 fails, k=3 succeeds."""
    G = nx.convert_node_labels_to_integers(nx.grid_2d_graph(3, length))
    n, tw = G.number_of_nodes(), 3
    A = nx.to_numpy_array(G, nodelist=range(n)) != 0
    adj = ktw.to_bitsets(A)
    assert adj.shape == (n, (n + 63) // 64)
    cand = ktw.to_bitsets(np.ones((1, n), dtype=bool))[0]
    for k, expect in ((2, False), (3, True)):
        srch = ktw.LevelSearchCPU(adj, cand, k, n - k - 1, rule=True)
        while not srch.done:
            srch.step()
        assert srch.found == expect
        if expect:
            prefix = srch.prefix()
            order = np.concatenate([prefix, np.setdiff1d(np.arange(n), prefix)])
            assert ktw.elimination_width(A, order) <= k
    res = treewidth(G, device="cpu", preprocess=False, method="bfs")
    assert res.width == tw and res.optimal


def test_rule_reduces_states_and_levels_are_duplicate_free():
    G = nx.grid_2d_graph(4, 5)
    n = G.number_of_nodes()
    A = nx.to_numpy_array(G) != 0
    adj = ktw.to_bitsets(A)
    cand = ktw.to_bitsets(np.ones((1, n), dtype=bool))[0]
    sizes = {}
    for rule in (False, True):
        srch = ktw.LevelSearchCPU(adj, cand, 4, n - 5, rule=rule)
        while not srch.done:
            srch.step()
            rows = {bytes(r) for r in srch.states}
            assert len(rows) == srch.states.shape[0]  # exact mode: no duplicates
        assert srch.found
        sizes[rule] = srch.expanded
    assert sizes[True] < sizes[False]


def test_bloom_matches_exact_level_sizes_on_small_graph():
    G = nx.petersen_graph()
    A = nx.to_numpy_array(G) != 0
    adj = ktw.to_bitsets(A)
    cand = ktw.to_bitsets(np.ones((1, 10), dtype=bool))[0]
    out = []
    for mode in (ktw.EXACT, ktw.BLOOM):
        srch = ktw.LevelSearchCPU(adj, cand, 4, 5, mode=mode, rule=False)
        while not srch.done:
            srch.step()
        out.append(srch.level_sizes)
    assert out[0] == out[1]  # 10-vertex sets: no false positive at 32 bits per state


def test_overflow_is_reported():
    G = nx.grid_2d_graph(5, 6)
    res = treewidth(G, device="cpu", max_states=8, preprocess=False, separators=False, simplicial_rule=False,
                    method="bfs")
    assert res.status in ("overflow", "optimal")
    assert any(r["overflow"] for r in res.iterations)
    assert is_tree_decomposition(G, res.decomposition, width=res.width)
    assert res.lower_bound <= 5 <= res.width


def test_time_limit_returns_best_found():
    G = nx.random_regular_graph(3, 300, seed=1)
    for method in ("pid", "bfs"):
        res = treewidth(G, device="cpu", time_limit=1.0, method=method)
        assert not res.optimal and res.status == "time_limit"
        assert res.lower_bound < res.width
        assert is_tree_decomposition(G, res.decomposition, width=res.width)


def test_bounds():
    G = nx.grid_2d_graph(4, 4)
    lo, hi, order = graphkit.treewidth_bounds(G)
    assert lo <= 4 <= hi
    assert graphkit.ordering_width(G, order) == hi
    A = nx.to_numpy_array(nx.complete_graph(5)) != 0
    assert ktw.minor_min_width(A) == 4 and ktw.degeneracy(A) == 4


def test_vertex_connectivity_matrix():
    G = nx.grid_2d_graph(3, 3)
    H = nx.convert_node_labels_to_integers(G)
    S = nx.to_scipy_sparse_array(H, format="csr")
    K = ktw.vertex_connectivity_matrix(S.indptr.astype(np.int64), S.indices.astype(np.int64), 10)
    for u in range(9):
        for v in range(u + 1, 9):
            if H.has_edge(u, v):
                assert K[u, v] == -1
            else:
                assert K[u, v] == nx.node_connectivity(H, u, v)
    # stopped (by another thread, in a race): rows not yet computed stay -1
    stop = np.ones(1, dtype=np.int64)
    K = ktw.vertex_connectivity_matrix(S.indptr.astype(np.int64), S.indices.astype(np.int64), 10, 0.0, stop)
    assert np.all(K == -1)


def test_max_clique_stops_when_told():
    G = nx.gnp_random_graph(100, 0.8, seed=1)
    A = nx.to_numpy_array(G) != 0
    assert ktw.max_clique(A).size == 19
    C = ktw.max_clique(A, stop=lambda: True)  # stopped at its first check, after 256 nodes
    assert C.size < 19 and all(G.has_edge(u, v) for u, v in itertools.combinations(C.tolist(), 2))


def test_max_clique():
    G = nx.disjoint_union(nx.complete_graph(5), nx.cycle_graph(6))
    A = nx.to_numpy_array(G) != 0
    C = ktw.max_clique(A)
    assert C.tolist() == [0, 1, 2, 3, 4]


def test_checker_rejects_invalid():
    G = nx.cycle_graph(5)
    td = treewidth(G, device="cpu").decomposition
    assert is_tree_decomposition(G, td)
    assert not is_tree_decomposition(G, td, width=3)
    # drop a vertex from every bag: edges no longer covered
    bad = TreeDecomposition([b[b != 0] for b in td.bags], td.edges)
    assert not is_tree_decomposition(G, bad)
    # not a tree: remove an edge
    assert not is_tree_decomposition(G, TreeDecomposition(td.bags, td.edges[:-1]))
    # disconnected occurrences of a vertex: path of bags {0,1} - {1,2} - {0}
    P = nx.path_graph(3)
    td2 = TreeDecomposition([np.array([0, 1]), np.array([1, 2]), np.array([0])], np.array([[0, 1], [1, 2]]))
    assert not is_tree_decomposition(P, td2)
    with pytest.raises(TypeError):
        is_tree_decomposition(G, [[0, 1]])


def test_decomposition_from_ordering_bad_input():
    with pytest.raises(ValueError):
        decomposition_from_ordering(nx.path_graph(3), [0, 1])
    with pytest.raises(ValueError):
        decomposition_from_ordering(nx.path_graph(3), [0, 1, 1])


def test_bad_arguments():
    G = nx.path_graph(3)
    with pytest.raises(ValueError):
        treewidth(G, method="magic")
    with pytest.raises(ValueError):
        treewidth(G, method="pid", device="gpu")
    with pytest.raises(ValueError):
        treewidth(G, max_memory=10)
    with pytest.raises(ValueError):
        treewidth(G, time_limit=True)
    with pytest.raises(ValueError):
        treewidth(G, dedup="cuckoo")
    with pytest.raises(ValueError):
        treewidth(G, time_limit=-1)
    with pytest.raises(ValueError):
        treewidth(G, max_states=0)
    with pytest.raises(ValueError):
        treewidth(G, device="tpu")


def test_tree_decomposition_convenience():
    G = nx.grid_2d_graph(3, 4)
    td = graphkit.tree_decomposition(G, device="cpu")
    assert is_tree_decomposition(G, td, width=3)


# ---------------------------------------------------------------- shared instances

QUICK = ["water.1.21.gr", "myciel4.1.23.gr", "queen5_5.1.25.gr", "queen6_6.1.36.gr", "grid-0016-4-4.gr",
         "grid-0036-6-6.gr", "RandomBoundedToleranceGraph_60.1.59.gr", "McGeeGraph.1.24.gr", "DoubleStarSnark.1.30.gr",
         "contiki_dhcpc_handle_dhcp.1.39.gr", "HarborthGraph.1.40.gr", "1ubq.1.47.gr", "ex008", "ex028", "ex051",
         "ex058", "ex068", "ex070", "ex075", "ex081", "ex096"]
SLOW = ["NonisotropicUnitaryPolarGraph_3_3.1.63.gr", "ex026", "ex031", "ex065", "ex107", "ex117", "ex145"]


def _answers(shared_data):
    with open(shared_data / "graphs" / "answers.csv") as fh:
        return {r["name"]: int(r["answer"]) for r in csv.DictReader(fh) if r["set"] in ("tw", "tw17")}


def _check_instance(shared_data, name, time_limit=None, device="cpu", method="auto"):
    ans = _answers(shared_data)
    key = name if name in ans else name.removesuffix(".gr")
    G = read_graph(shared_data / "graphs" / "treewidth" / (name if name.endswith(".gr") else name + ".gr"))
    res = treewidth(G, device=device, time_limit=time_limit, method=method)
    assert is_tree_decomposition(G, res.decomposition, width=res.width)
    if res.optimal:
        assert res.width == ans[key]
    else:
        assert res.lower_bound <= ans[key] <= res.width
    return res


@pytest.mark.parametrize("name", QUICK)
def test_shared_instances_quick(shared_data, name):
    res = _check_instance(shared_data, name)
    assert res.optimal


def test_grid_0025_file_is_not_a_5x5_grid(shared_data):
    """answers.csv lists 5 for grid-0025-5-5.gr, but the file's edges (labels 1, 11, 21
    merged with 0, 10, 20) do not form a 5x5 grid: the graph it holds has treewidth 4,
    proven by the minor-min-width bound and certified by the decomposition."""
    G = read_graph(shared_data / "graphs" / "treewidth" / "grid-0025-5-5.gr")
    assert not nx.is_isomorphic(G.to_networkx(), nx.grid_2d_graph(5, 5))
    res = treewidth(G, device="cpu")
    assert res.optimal and res.width == 4
    assert is_tree_decomposition(G, res.decomposition, width=4)


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_shared_instances_slow(shared_data, name):
    _check_instance(shared_data, name, time_limit=120)


def _bench_rows(shared_data):
    path = shared_data / "graphs" / "bench" / "answers.csv"
    if not path.exists():
        pytest.skip("bench set not available")
    with open(path) as fh:
        return [r for r in csv.DictReader(fh) if r["set"] == "tw17"]


@pytest.mark.slow
@pytest.mark.parametrize("index", range(159))
def test_pace2017_bench_instances(shared_data, index):
    """The bench set at 20 s each: a valid decomposition, bounds around the known width,
    optimal only with the known width."""
    row = _bench_rows(shared_data)[index]
    G = read_graph(shared_data / "graphs" / "bench" / row["file"])
    res = treewidth(G, time_limit=20)
    tw = int(row["answer"])
    assert is_tree_decomposition(G, res.decomposition, width=res.width)
    assert res.lower_bound <= tw <= res.width
    assert not res.optimal or res.width == tw


def test_cli_tw(shared_data, capsys):
    from graphkit.cli import main

    path = shared_data / "graphs" / "treewidth" / "myciel4.1.23.gr"
    assert main(["tw", str(path), "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    _, _, nbags, width, n = lines[0].split()
    assert (width, n) == ("11", "23")
    assert sum(1 for ln in lines if ln.startswith("b ")) == int(nbags)
    assert len(lines) == 1 + 2 * int(nbags) - 1


def test_cli_tw_roundtrip(shared_data, tmp_path):
    from graphkit.cli import main

    path = shared_data / "graphs" / "treewidth" / "water.1.21.gr"
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["tw", str(path), "--device", "cpu", "--time-limit", "30"]) == 0
    out = tmp_path / "water.td"
    out.write_text(buf.getvalue())
    G = read_graph(path)
    td, n = read_tree_decomposition(out, base=G.index_base)
    assert n == G.n
    assert is_tree_decomposition(G, td, width=9)


# ---------------------------------------------------------------- GPU


def _gpu_cpu_levels(G, k, rule, mode, target=None):
    n = G.number_of_nodes()
    A = nx.to_numpy_array(G, nodelist=sorted(G.nodes)) != 0
    adj = ktw.to_bitsets(A)
    cand = ktw.to_bitsets(np.ones((1, n), dtype=bool))[0]
    target = n - k - 1 if target is None else target
    srch = ktw.LevelSearchCPU(adj, cand, k, target, rule=rule, mode=mode)
    while not srch.done:
        srch.step()
    g = ktw.search_gpu(adj, cand, k, target, rule=rule, mode=mode)
    return srch, g, A


@pytest.mark.gpu
@pytest.mark.parametrize("rule", [False, True])
def test_gpu_levels_equal_cpu_small(rule):
    """Exact mode: identical level sizes, decisions and valid prefixes on both backends."""
    for seed in range(4):
        G = random_graph(12, 0.35, 7 + seed)
        for k in range(2, 7):
            cpu, gpu, A = _gpu_cpu_levels(G, k, rule, ktw.EXACT)
            assert cpu.level_sizes == gpu["level_sizes"], (seed, k, rule)
            assert cpu.found == gpu["found"]
            assert not gpu["overflow"]
            if gpu["found"]:
                order = np.concatenate([gpu["prefix"], np.setdiff1d(np.arange(12), gpu["prefix"])])
                assert ktw.elimination_width(A, order) <= k


@pytest.mark.gpu
@pytest.mark.parametrize("rule", [False, True])
@pytest.mark.parametrize("n", [70, 130, 250])
def test_gpu_levels_equal_cpu_multiword(rule, n):
    """2-, 3- and 4-word bitsets: the first levels agree with the CPU."""
    G = nx.random_regular_graph(3, n, seed=n)
    cpu, gpu, _ = _gpu_cpu_levels(G, 3, rule, ktw.EXACT, target=3)
    assert cpu.level_sizes == gpu["level_sizes"]
    assert gpu["found"] and cpu.found


@pytest.mark.gpu
@pytest.mark.parametrize("rows, cols, k, rule", [(4, 5, 4, False), (6, 6, 5, True), (5, 5, 4, False)])
def test_gpu_levels_in_many_launches_equal_cpu(rows, cols, k, rule):
    """Levels expanded in launches of 1,024 states (deadline checks) give the CPU's levels."""
    G = nx.grid_2d_graph(rows, cols)
    n = rows * cols
    A = nx.to_numpy_array(G, nodelist=sorted(G.nodes)) != 0
    adj = ktw.to_bitsets(A)
    cand = ktw.to_bitsets(np.ones((1, n), dtype=bool))[0]
    srch = ktw.LevelSearchCPU(adj, cand, k, n - k - 1, rule=rule, mode=ktw.EXACT)
    while not srch.done:
        srch.step()
    g = ktw.search_gpu(adj, cand, k, n - k - 1, rule=rule, first_launch=1024, launch_seconds=0.0)
    assert max(g["level_sizes"]) > 4 * 1024  # several launches per level
    assert g["level_sizes"] == srch.level_sizes and g["found"] == srch.found
    if g["found"]:
        order = np.concatenate([g["prefix"], np.setdiff1d(np.arange(n), g["prefix"])])
        assert ktw.elimination_width(A, order) <= k


@pytest.mark.gpu
def test_gpu_time_limit_within_a_level():
    """A deadline is honoured inside a level, not only between levels."""
    import time

    G = nx.random_regular_graph(4, 60, seed=3)
    n = 60
    A = nx.to_numpy_array(G, nodelist=sorted(G.nodes)) != 0
    adj = ktw.to_bitsets(A)
    cand = ktw.to_bitsets(np.ones((1, n), dtype=bool))[0]
    ktw.search_gpu(adj, cand, 12, 1)  # compiles the kernel
    t0 = time.perf_counter()
    g = ktw.search_gpu(adj, cand, 12, n - 13, deadline=t0 + 0.5, clock=time.perf_counter, first_launch=1024,
                       launch_seconds=0.05)
    assert time.perf_counter() - t0 < 0.5 + 1.0
    assert g["timed_out"] or g["found"] or g["level_sizes"][-1] == 0


@pytest.mark.gpu
def test_gpu_bloom_mode():
    G = nx.grid_2d_graph(4, 5)
    cpu, gpu, A = _gpu_cpu_levels(G, 4, False, ktw.BLOOM)
    assert gpu["found"] and cpu.found
    ex, gex, _ = _gpu_cpu_levels(G, 4, False, ktw.EXACT)
    # Bloom drops false positives and may keep a duplicate when two threads insert the same
    # state at once (kernels/cuda/treewidth.cu); on this filter size both effects are tiny.
    assert len(gpu["level_sizes"]) == len(gex["level_sizes"])
    for b, e in zip(gpu["level_sizes"], gex["level_sizes"]):
        assert abs(b - e) <= 0.02 * e, (gpu["level_sizes"], gex["level_sizes"])


@pytest.mark.gpu
def test_gpu_overflow_reported():
    G = nx.grid_2d_graph(5, 6)
    n = 30
    A = nx.to_numpy_array(G) != 0
    adj = ktw.to_bitsets(A)
    cand = ktw.to_bitsets(np.ones((1, n), dtype=bool))[0]
    g = ktw.search_gpu(adj, cand, 4, n - 5, rule=False, max_states=1024)
    assert g["overflow"] and g["dropped"] > 0


# the paper's graphs: its search on the GPU proves each in well under a second on an H200
PAPER_GPU = QUICK[:9] + ["NonisotropicUnitaryPolarGraph_3_3.1.63.gr"]


@pytest.mark.gpu
@pytest.mark.parametrize("name", PAPER_GPU)
def test_gpu_shared_instances(shared_data, name):
    res = _check_instance(shared_data, name, device="gpu", time_limit=60)
    assert res.optimal and res.device == "gpu" and res.method == "bfs"
    cpu = _check_instance(shared_data, name, device="cpu", method="bfs", time_limit=60) if name in QUICK[:8] else None
    if cpu is not None:
        assert cpu.width == res.width
        assert cpu.states_expanded == res.states_expanded


@pytest.mark.gpu
@pytest.mark.parametrize("name", QUICK[9:])
def test_gpu_auto_shared_instances(shared_data, name):
    """The PACE and paper graphs beyond the paper's search (it ran over 120 s on ex008):
    device='auto' (PID on the CPU) proves them."""
    res = _check_instance(shared_data, name, device="auto", time_limit=60)
    assert res.optimal


@pytest.mark.gpu
def test_gpu_treewidth_random_graphs():
    for seed in range(6):
        G = random_graph(11, 0.3, 300 + seed)
        exp = subset_dp(G)
        res = treewidth(G, device="gpu", preprocess=False, separators=False)
        assert res.width == exp
        assert is_tree_decomposition(G, res.decomposition, width=exp)


@pytest.mark.gpu
def test_gpu_races_pid_in_auto_mode(monkeypatch):
    """device='auto' with a GPU: PID races the GPU search; widths unchanged, the limit honoured,
    and where PID cannot finish (tables full) the GPU search does."""
    # the race wants a second core; a test runner pinned to one must not turn it off
    monkeypatch.setattr(importlib.import_module("graphkit.treewidth"), "_cores", lambda: 2)
    for seed in range(3):
        G = nx.gnp_random_graph(40, 0.75, seed=seed)
        cpu = treewidth(G, device="cpu")
        for res in (treewidth(G), treewidth(G, gpu_assist=True)):
            assert res.width == cpu.width and res.optimal
            assert is_tree_decomposition(G, res.decomposition, width=res.width)
        limited = treewidth(G, time_limit=0.5, gpu_assist=True)  # the clock starts after the warm-up
        assert limited.lower_bound <= cpu.width <= limited.width and limited.time < 1.0
    G = nx.gnp_random_graph(60, 0.9, seed=1)
    res = treewidth(G, gpu_assist=True, max_memory=1 << 20)
    assert res.optimal and res.width == treewidth(G, device="cpu").width and res.device == "gpu"
    assert [p["race"] for p in res.stats["pieces"]] == ["gpu"]
    assert any(it["device"] == "gpu" and it["found"] for it in res.iterations)


@pytest.mark.gpu
def test_gpu_auto_races_on_a_dense_pace_piece(shared_data, monkeypatch):
    """ex003's 91-vertex piece of width 44 (greedy 44, lower bound 42): the rule of
    device='auto' races the GPU search there, and the widths it refutes end the piece."""
    monkeypatch.setattr(importlib.import_module("graphkit.treewidth"), "_cores", lambda: 2)
    path = shared_data / "graphs" / "bench" / "tw" / "ex003.gr.xz"
    if not path.exists():
        pytest.skip("PACE 2017 bench instances not available")
    G = read_graph(path)
    res = treewidth(G, time_limit=30)
    assert res.optimal and res.width == 44
    assert is_tree_decomposition(G, res.decomposition, width=44)
    assert [p["race"] for p in res.stats["pieces"] if "race" in p]  # the race ran (who wins depends on the load)
