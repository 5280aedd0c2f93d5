"""graphkit's exact vertex cover, parameterized vertex cover and maximum independent set:
API, names, shared benchmark instances, time limits, bad input, CLI."""
from __future__ import annotations

import csv
import subprocess
import sys
import time

import networkx as nx
import numpy as np
import pytest

import graphkit
from graphkit import Graph, read_graph
from helpers import compiled_during
from graphkit.vertex_cover import (
    is_vertex_cover,
    maximum_independent_set,
    minimum_vertex_cover,
    parameterized_vertex_cover,
)


def random_graph(n, p, seed):
    rng = np.random.default_rng(seed)
    iu, ju = np.triu_indices(n, 1)
    keep = rng.random(len(iu)) < p
    return Graph.from_edges(n, iu[keep], ju[keep])


def answers(shared_data, which):
    with open(shared_data / "graphs" / "answers.csv") as fh:
        return {r["name"]: int(r["answer"]) for r in csv.DictReader(fh) if r["set"] == which}


def bench_answers(shared_data):
    path = shared_data / "graphs" / "bench" / "answers.csv"
    if not path.exists():
        pytest.skip("bench set absent")
    with open(path) as fh:
        return {r["file"]: int(r["answer"]) for r in csv.DictReader(fh) if r["set"] == "vc"}


# ------------------------------------------------------------------ exactness and API
def test_mvc_mis_and_pvc_agree_with_networkx():
    for seed in range(12):
        G = random_graph(24, [0.15, 0.3, 0.6][seed % 3], 100 + seed)
        _, omega = nx.max_weight_clique(G.complement().to_networkx(), weight=None)
        r = minimum_vertex_cover(G, device="cpu")
        assert r.optimal and r.size == G.n - omega == r.lower_bound and is_vertex_cover(G, r.cover)
        assert np.all(np.diff(r.cover) > 0) and r.method == "branch_and_reduce" and r.device == "cpu"
        mis = maximum_independent_set(G, device="cpu")
        assert mis.size == omega and mis.optimal and mis.upper_bound == omega
        u, v = G.edges()
        inset = np.zeros(G.n, bool)
        inset[mis.vertices] = True
        assert not np.any(inset[u] & inset[v])
        opt = r.size
        if opt:
            no = parameterized_vertex_cover(G, opt - 1, device="cpu")
            assert no.found is False and no.proved and no.cover is None and no.lower_bound == opt
        for k in (opt, opt + 1):
            yes = parameterized_vertex_cover(G, k, device="cpu")
            assert yes.found and yes.size <= k and is_vertex_cover(G, yes.cover)


def test_trivial_graphs_and_components():
    empty = Graph.from_edges(0, np.zeros(0, int), np.zeros(0, int))
    r = minimum_vertex_cover(empty, device="cpu")
    assert r.size == 0 and r.optimal
    iso = Graph.from_edges(5, np.zeros(0, int), np.zeros(0, int))
    assert minimum_vertex_cover(iso, device="cpu").size == 0
    assert maximum_independent_set(iso, device="cpu").size == 5
    # two disjoint 5-cycles, a K4 and a Petersen graph: 3 + 3 + 3 + 6
    c5 = [(i, (i + 1) % 5) for i in range(5)]
    outer = [(i, (i + 1) % 5) for i in range(5)] + [(i, i + 5) for i in range(5)]
    inner = [(5 + i, 5 + (i + 2) % 5) for i in range(5)]
    edges = (c5 + [(a + 5, b + 5) for a, b in c5] + [(10 + a, 10 + b) for a in range(4) for b in range(a + 1, 4)]
             + [(14 + a, 14 + b) for a, b in outer + inner])
    u, v = np.array(edges).T
    G = Graph.from_edges(24, u, v)
    r = minimum_vertex_cover(G, device="cpu")
    assert r.size == 15 and r.optimal and is_vertex_cover(G, r.cover)


def test_networkx_names_come_back():
    """Results on a networkx graph are named as its nodes; the checker takes names."""
    P = nx.path_graph([10, 20, 30, 40])
    r = minimum_vertex_cover(P, device="cpu")
    assert sorted(r.cover.tolist()) in ([10, 30], [20, 30], [20, 40]) and r.size == 2
    assert is_vertex_cover(P, r.cover) and not is_vertex_cover(P, [10, 40])
    assert sorted(r.indices.tolist()) in ([0, 2], [1, 2], [1, 3])
    S = nx.star_graph(["hub", "a", "b", "c"])
    assert minimum_vertex_cover(S, device="cpu").cover.tolist() == ["hub"]
    assert sorted(maximum_independent_set(S, device="cpu").vertices.tolist()) == ["a", "b", "c"]
    p = parameterized_vertex_cover(S, 1, device="cpu")
    assert p.found and p.cover.tolist() == ["hub"]
    with pytest.raises(KeyError):
        is_vertex_cover(S, ["nobody"])


def test_result_fields():
    G = random_graph(30, 0.2, 3)
    r = minimum_vertex_cover(G, device="cpu")
    text = repr(r)
    assert "size=" in text and "optimal=True" in text and "cover=" not in text
    assert r.nodes >= 0 and len(r.worker_nodes) == 1 and r.load_imbalance == 1.0
    assert 0 <= r.kernel_size <= G.n and r.solved_by in ("reductions", "branch_and_reduce",
                                                          "clique_branch_and_bound", "local_search")
    assert len(r) == r.size


# ------------------------------------------------------------------ time limits
def _hard_random(n=420, p=0.05, seed=9):
    """A random graph: the reductions barely touch it and proving optimality takes far
    longer than a second."""
    return random_graph(n, p, seed)


def test_time_limit_returns_best_cover_and_lower_bound():
    G = _hard_random()
    graphkit.warm_up(device="cpu", problems=("vertex_cover",))  # the first call loads compiled code
    t0 = time.perf_counter()
    r = minimum_vertex_cover(G, device="cpu", time_limit=1.0)
    wall = time.perf_counter() - t0
    assert wall < 1.0 + 1.0  # at most one chunk past the limit (shared machines: slack)
    assert is_vertex_cover(G, r.cover) and not r.optimal
    assert 0 < r.lower_bound < r.size and r.solved_by == "time_limit"
    t0 = time.perf_counter()
    p = parameterized_vertex_cover(G, r.lower_bound, device="cpu", time_limit=0.5)
    assert time.perf_counter() - t0 < 1.5
    assert p.found in (None, False) or (p.found and p.size <= r.lower_bound)


def test_time_limit_starts_after_compilation(monkeypatch):
    """The first call with a limit compiles (here: a slow stand-in) before its clock
    starts, once per process; calls without a limit never wait for it."""
    import kernels.vertex_cover.exact as exact

    calls = []
    exact.compile_once.cache_clear()
    monkeypatch.setattr(exact, "warm_up", lambda *device: (calls.append(1), time.sleep(1.0)))
    try:
        G = random_graph(30, 0.2, 3)
        r = minimum_vertex_cover(G, device="cpu")
        assert not calls and r.optimal
        r = minimum_vertex_cover(G, device="cpu", time_limit=0.5)
        assert calls == [1] and r.optimal and r.time < 0.9
        p = parameterized_vertex_cover(G, r.size, device="cpu", time_limit=0.5)
        assert calls == [1] and p.found
    finally:
        exact.compile_once.cache_clear()  # the stand-in compiled nothing: later tests compile for real


WARM_WORK = """
rng = np.random.default_rng(4)
# a sparse random graph (every phase runs: reductions, both searches, local search and
# the transversal search) and groups of cliques with random edges between them
edges = [(u, v) for u in range(300) for v in range(u + 1, 300) if rng.random() < 0.06]
G = graphkit.Graph.from_edges(300, [e[0] for e in edges], [e[1] for e in edges])
graphkit.minimum_vertex_cover(G, time_limit=0.5, device="cpu")
graphkit.parameterized_vertex_cover(G, 200, time_limit=0.3, device="cpu")
graphkit.maximum_independent_set(G, time_limit=0.3, device="cpu")
edges = [(u, v) for u in range(240) for v in range(u + 1, 240) if u // 12 == v // 12 or rng.random() < 0.3]
G = graphkit.Graph.from_edges(240, [e[0] for e in edges], [e[1] for e in edges])
graphkit.minimum_vertex_cover(G, time_limit=0.5, device="cpu")
"""


def test_time_limited_calls_compile_nothing_after_the_warm_up():
    # every Numba function a limited call reaches is compiled before its clock starts
    # (on a clean clone with a cold cache, compiling costs seconds)
    warm_up = "import numpy as np, graphkit\nfrom kernels.vertex_cover.exact import compile_once\ncompile_once()\n"
    assert compiled_during(warm_up, WARM_WORK) == []


def test_progress_reports_and_ctrl_c_stops_between_chunks():
    G = _hard_random()
    seen = []

    def progress(info):
        seen.append(info)
        if len(seen) == 3:
            raise KeyboardInterrupt

    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        minimum_vertex_cover(G, device="cpu", progress=progress)
    assert time.perf_counter() - t0 < 30 and len(seen) == 3
    assert seen[-1]["nodes"] >= seen[0]["nodes"] and seen[0]["best"] >= seen[0]["lower_bound"]


# ------------------------------------------------------------------ bad input (issue #41)
def test_bad_arguments():
    G = random_graph(6, 0.5, 1)
    with pytest.raises(ValueError):
        minimum_vertex_cover(G, device="cpu", method="bfs")
    with pytest.raises(ValueError):
        minimum_vertex_cover(G, device="tpu")
    with pytest.raises(ValueError):
        minimum_vertex_cover(G, device="cpu", time_limit=-1)
    with pytest.raises(TypeError):
        minimum_vertex_cover(G, device="cpu", time_limit="1")
    with pytest.raises(ValueError, match="method"):
        parameterized_vertex_cover(G, 2, device="cpu", method="greedy")
    with pytest.raises(ValueError):
        parameterized_vertex_cover(G, -1, device="cpu")
    with pytest.raises(TypeError):
        parameterized_vertex_cover(G, 2.5, device="cpu")
    with pytest.raises(TypeError):
        minimum_vertex_cover(object(), device="cpu")
    with pytest.raises(ValueError):
        is_vertex_cover(G, [0, 6])
    with pytest.raises(TypeError):
        is_vertex_cover(G, [0.5])


@pytest.mark.parametrize("method", ["auto", "hybrid"])
def test_huge_budget_allocates_nothing_big(method):
    """parameterized_vertex_cover(petersen, 2**31 - 1) answered at once (it tried to
    allocate a (k + 4) x n stack)."""
    petersen = nx.petersen_graph()
    t0 = time.perf_counter()
    r = parameterized_vertex_cover(petersen, 2**31 - 1, device="cpu", method=method)
    assert r.found and r.size <= 10 and is_vertex_cover(petersen, r.cover)
    assert time.perf_counter() - t0 < 5
    big = random_graph(3000, 0.002, 1)
    r = parameterized_vertex_cover(big, big.n, device="cpu", method=method)
    assert r.found and is_vertex_cover(big, r.cover)


def test_is_vertex_cover():
    G = Graph.from_edges(4, np.array([0, 1, 2]), np.array([1, 2, 3]))
    assert is_vertex_cover(G, [1, 2]) and is_vertex_cover(G, [1, 3])
    assert not is_vertex_cover(G, [0, 3]) and not is_vertex_cover(G, [])
    assert is_vertex_cover(Graph.from_edges(3, np.zeros(0, int), np.zeros(0, int)), [])


# ------------------------------------------------------------------ shared benchmark instances
DIMACS_FAST = ["johnson8-2-4", "johnson8-4-4", "hamming6-2", "hamming6-4", "MANN_a9", "MANN_a27", "c-fat200-1",
               "c-fat200-2", "c-fat500-1", "p_hat300-1", "p_hat300-2", "brock200_2", "keller4", "san200_0.7_1",
               "C125.9", "p_hat300-3", "sanr200_0.7"]
DIMACS_SLOW = ["hamming8-4", "johnson16-2-4", "brock200_4"]


@pytest.mark.parametrize("name", DIMACS_FAST)
def test_dimacs_complements(shared_data, name):
    omega = answers(shared_data, "dimacs")[name]
    G = read_graph(shared_data / "graphs" / "dimacs" / f"{name}.clq")
    H = G.complement()
    r = minimum_vertex_cover(H, device="cpu", time_limit=120)
    assert r.optimal and r.size == G.n - omega and is_vertex_cover(H, r.cover)
    clique = np.setdiff1d(np.arange(G.n), r.cover)  # an independent set of H: a clique of G
    assert G.subgraph(clique).m == len(clique) * (len(clique) - 1) // 2


@pytest.mark.slow
@pytest.mark.parametrize("name", DIMACS_SLOW)
def test_dimacs_complements_slow(shared_data, name):
    omega = answers(shared_data, "dimacs")[name]
    G = read_graph(shared_data / "graphs" / "dimacs" / f"{name}.clq")
    r = minimum_vertex_cover(G.complement(), device="cpu", time_limit=600)
    assert r.optimal and r.size == G.n - omega


def test_dimacs_pvc(shared_data):
    name = "p_hat300-1"
    omega = answers(shared_data, "dimacs")[name]
    H = read_graph(shared_data / "graphs" / "dimacs" / f"{name}.clq").complement()
    opt = H.n - omega
    assert parameterized_vertex_cover(H, opt - 1, device="cpu").found is False
    for k in (opt, opt + 1):
        r = parameterized_vertex_cover(H, k, device="cpu")
        assert r.found and r.size <= k and is_vertex_cover(H, r.cover)


#: shared PACE 2019 instances proved optimal in well under a second each
PACE_FAST = ["vc-exact_001", "vc-exact_002", "vc-exact_004", "vc-exact_005", "vc-exact_006", "vc-exact_007",
             "vc-exact_010", "vc-exact_024", "vc-exact_026", "vc-exact_028", "vc-exact_035", "vc-exact_037",
             "vc-exact_039"]
#: the others of the shared set (hard for every solver measured, or seconds)
PACE_HARD = ["vc-exact_016", "vc-exact_032", "vc-exact_038", "vc-exact_040", "vc-exact_092", "vc-exact_106",
             "vc-exact_194"]


@pytest.mark.filterwarnings("ignore:dropped")
def test_pace_instances(shared_data):
    """The fast PACE 2019 instances of the shared set against answers.csv."""
    ans = answers(shared_data, "vc")
    for name in PACE_FAST:
        G = read_graph(shared_data / "graphs" / "pace2019-vc" / f"{name}.gr")
        r = minimum_vertex_cover(G, device="cpu", time_limit=60)
        assert is_vertex_cover(G, r.cover), name
        assert r.optimal and r.size == ans[name] == r.lower_bound, (name, r.size, r.lower_bound)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:dropped")
@pytest.mark.parametrize("name", PACE_HARD)
def test_pace_hard_instances_bounds(shared_data, name):
    """The hard ones at 20 s: a valid cover and bounds that bracket the answer."""
    opt = answers(shared_data, "vc")[name]
    G = read_graph(shared_data / "graphs" / "pace2019-vc" / f"{name}.gr")
    r = minimum_vertex_cover(G, device="cpu", time_limit=20)
    assert is_vertex_cover(G, r.cover) and r.lower_bound <= opt <= r.size
    assert not r.optimal or r.size == opt


@pytest.mark.filterwarnings("ignore:dropped")
@pytest.mark.parametrize("name", ["vc-exact_005", "vc-exact_024"])
def test_pace_pvc(shared_data, name):
    opt = answers(shared_data, "vc")[name]
    G = read_graph(shared_data / "graphs" / "pace2019-vc" / f"{name}.gr")
    assert parameterized_vertex_cover(G, opt - 1, device="cpu", time_limit=60).found is False
    r = parameterized_vertex_cover(G, opt, device="cpu", time_limit=60)
    assert r.found and r.size <= opt and is_vertex_cover(G, r.cover)


BENCH_SAMPLE = ["vc-exact_011", "vc-exact_055", "vc-exact_099", "vc-exact_128", "vc-exact_176"]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:dropped")
@pytest.mark.parametrize("name", BENCH_SAMPLE)
def test_bench_instances(shared_data, name):
    """PACE 2019 bench instances (bench/vc, xz): solved within 60 s, answer as published."""
    ans = bench_answers(shared_data)
    G = read_graph(shared_data / "graphs" / "bench" / "vc" / f"{name}.gr.xz")
    r = minimum_vertex_cover(G, device="cpu", time_limit=60)
    assert is_vertex_cover(G, r.cover) and r.optimal and r.size == ans[f"vc/{name}.gr.xz"]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:dropped")
def test_whole_bench_set_bounds(shared_data):
    """Every bench instance at 20 s: a valid cover, and bounds that bracket the answer."""
    ans = bench_answers(shared_data)
    for f, opt in ans.items():
        G = read_graph(shared_data / "graphs" / "bench" / f)
        r = minimum_vertex_cover(G, device="cpu", time_limit=20)
        assert is_vertex_cover(G, r.cover) and r.lower_bound <= opt <= r.size, f
        assert not r.optimal or r.size == opt, f


# ------------------------------------------------------------------ maximum clique through the engine
def test_maximum_clique_vertex_cover_route():
    for seed in range(4):
        G = random_graph(40, 0.9, 50 + seed)
        a = graphkit.maximum_clique(G, method="vertex_cover", device="cpu")
        b = graphkit.maximum_clique(G, method="branch_and_bound", device="cpu")
        assert a.optimal and b.optimal and a.size == b.size


# ------------------------------------------------------------------ CLI
def test_cli_vc(tmp_path):
    G = random_graph(30, 0.2, 7)
    path = tmp_path / "g.gr"
    graphkit.write_graph(G, path, format="pace")
    res = subprocess.run([sys.executable, "-m", "graphkit.cli", "vc", str(path), "--device", "cpu"],
                         capture_output=True, text=True, check=True)
    out = res.stdout.split("\n")
    assert out[0].split()[:3] == ["s", "vc", "30"]
    k = int(out[0].split()[3])
    cover = np.array([int(x) - 1 for x in out[1:] if x.strip()])
    assert len(cover) == k == minimum_vertex_cover(G, device="cpu").size and is_vertex_cover(G, cover)
    # parameterized: k below the optimum prints no solution and exits 1
    res = subprocess.run([sys.executable, "-m", "graphkit.cli", "vc", str(path), "--device", "cpu",
                          "--k", str(k - 1)], capture_output=True, text=True)
    assert res.returncode == 1 and not res.stdout.startswith("s vc")


def test_cli_vc_time_limit_and_quiet(tmp_path):
    G = _hard_random()
    path = tmp_path / "hard.gr"
    graphkit.write_graph(G, path, format="pace")
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "graphkit.cli", "vc", str(path), "--device", "cpu",
                          "--time-limit", "1", "--quiet"], capture_output=True, text=True)
    assert res.returncode == 0 and time.perf_counter() - t0 < 60
    lines = res.stdout.split("\n")
    cover = np.array([int(x) - 1 for x in lines[1:] if x.strip()])
    assert is_vertex_cover(G, cover)
    assert "lower bound" in res.stderr and "it/s" not in res.stderr  # --quiet: no progress bar


# ------------------------------------------------------------------ the GPU route (device="gpu")
@pytest.mark.gpu
def test_gpu_clique_search_equals_cpu():
    """The clique search of dense kernels on the GPU: same sizes as on the CPU, from no
    start, from a known set, and deciding."""
    from kernels.vertex_cover.dense import ComplementCliqueSearch

    for seed, (n, p) in enumerate([(40, 0.6), (70, 0.4), (100, 0.3), (130, 0.2)]):
        G = random_graph(n, p, 50 + seed)
        cpu = ComplementCliqueSearch(G.indptr, G.indices)
        gpu = ComplementCliqueSearch(G.indptr, G.indices, device="gpu")
        assert cpu.solve() and gpu.solve() and gpu.gpu_launches <= 1
        assert gpu.size == cpu.size and len(gpu.independent_set()) == gpu.size
        assert graphkit.is_vertex_cover(G, np.setdiff1d(np.arange(n), gpu.independent_set()))
        start = ComplementCliqueSearch(G.indptr, G.indices, initial=cpu.independent_set()[:-1], device="gpu")
        assert start.solve() and start.improved and start.size == cpu.size
        below = ComplementCliqueSearch(G.indptr, G.indices, larger_than=cpu.size - 1, device="gpu")
        assert below.solve() and below.improved and below.size == cpu.size
        above = ComplementCliqueSearch(G.indptr, G.indices, larger_than=cpu.size, device="gpu")
        assert above.solve() and not above.improved


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["keller4", "p_hat300-3", "MANN_a27"])
def test_gpu_route_equals_cpu_on_dimacs_complements(shared_data, name):
    """device="gpu": the same optimum as the CPU pipeline and answers.csv, MVC and PVC
    (p_hat300-3: dense, the GPU clique search; MANN_a27: sparse kernel, the Hybrid try)."""
    omega = answers(shared_data, "dimacs")[name]
    H = read_graph(shared_data / "graphs" / "dimacs" / f"{name}.clq").complement()
    cpu = minimum_vertex_cover(H, device="cpu", time_limit=60)
    gpu = minimum_vertex_cover(H, device="gpu", time_limit=60)
    assert gpu.optimal and gpu.size == cpu.size == H.n - omega and graphkit.is_vertex_cover(H, gpu.cover)
    if name == "MANN_a27":  # a sparse kernel: the GPU's Hybrid search is tried first
        assert gpu.device == "gpu"
    opt = H.n - omega
    assert parameterized_vertex_cover(H, opt - 1, device="gpu", time_limit=60).found is False
    r = parameterized_vertex_cover(H, opt, device="gpu", time_limit=60)
    assert r.found and r.size <= opt and graphkit.is_vertex_cover(H, r.cover)
