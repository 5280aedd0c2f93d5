"""Exact minimum / parameterized vertex cover (paper 000): CPU search, GPU kernels, CLI."""
from __future__ import annotations

import csv
import itertools
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest

from graphkit import Graph, read_graph
from graphkit.vertex_cover import (
    is_vertex_cover,
    maximum_independent_set,
    minimum_vertex_cover,
    parameterized_vertex_cover,
)
from kernels.vertex_cover import _degree_bound_holds, clique_cover_bound_cpu, greedy_cover_cpu, reduce_cpu

# DIMACS complements solved in the default run (each well under a few seconds on 2 cores)
DIMACS_FAST = ["johnson8-2-4", "johnson8-4-4", "hamming6-2", "hamming6-4", "MANN_a9", "MANN_a27",
               "c-fat200-1", "c-fat200-2", "c-fat500-1", "p_hat300-1", "p_hat300-2", "brock200_2", "keller4",
               "san200_0.7_1", "C125.9"]
DIMACS_SLOW = ["hamming8-4", "johnson16-2-4", "brock200_4", "p_hat300-3", "sanr200_0.7"]


def random_graph(n, p, seed):
    rng = np.random.default_rng(seed)
    iu, ju = np.triu_indices(n, 1)
    keep = rng.random(len(iu)) < p
    return Graph.from_edges(n, iu[keep], ju[keep])


def brute_force_mvc(G):
    u, v = G.edges()
    for k in range(G.n + 1):
        for c in itertools.combinations(range(G.n), k):
            mark = np.zeros(G.n, bool)
            mark[list(c)] = True
            if np.all(mark[u] | mark[v]):
                return k
    return G.n


def answers(shared_data, which):
    with open(shared_data / "graphs" / "answers.csv") as fh:
        return {r["name"]: int(r["answer"]) for r in csv.DictReader(fh) if r["set"] == which}


# ------------------------------------------------------------------ reductions and bounds
def test_reduce_rules_on_small_graphs():
    # path 0-1-2-3: degree-one takes 1 (neighbour of 0) and then 2 or 3
    G = Graph.from_edges(4, np.array([0, 1, 2]), np.array([1, 2, 3]))
    deg = G.degrees.astype(np.int32)
    count = reduce_cpu(G.indptr, G.indices, deg, 0, 10)
    assert count == 2 and is_vertex_cover(G, np.flatnonzero(deg < 0))
    # triangle with a pendant: degree-two-triangle takes the other two triangle vertices
    G = Graph.from_edges(4, np.array([0, 0, 1, 2]), np.array([1, 2, 2, 3]))
    deg = G.degrees.astype(np.int32)
    count = reduce_cpu(G.indptr, G.indices, deg, 0, 10)
    assert count == 2 and is_vertex_cover(G, np.flatnonzero(deg < 0))
    # high degree: star with 5 leaves and a budget of 2 must take the centre
    G = Graph.from_edges(6, np.zeros(5, int), np.arange(1, 6))
    deg = G.degrees.astype(np.int32)
    deg_before = deg.copy()
    reduce_cpu(G.indptr, G.indices, deg, 0, 2)
    assert deg[0] == -1 and deg_before[0] == 5


def test_degree_sequence_bound():
    # a star K1,4 and three disjoint edges: 7 edges, cover 4. With a budget of 2 the paper's
    # rule (7 <= 2 * 4) keeps the node, the two largest degrees (4 + 1 = 5 < 7) cut it
    G = Graph.from_edges(11, np.array([0, 0, 0, 0, 5, 7, 9]), np.array([1, 2, 3, 4, 6, 8, 10]))
    deg = G.degrees.astype(np.int32)
    hist = np.empty(G.n + 1, np.int64)
    assert not _degree_bound_holds(deg, 4, 7, 2, hist)
    assert _degree_bound_holds(deg, 4, 7, 4, hist)
    # valid: never cuts a budget that a cover meets
    for seed in range(20):
        G = random_graph(10, 0.4, seed)
        deg = G.degrees.astype(np.int32)
        if deg.max() == 0:
            continue
        opt = brute_force_mvc(G)
        assert _degree_bound_holds(deg, int(deg.max()), G.m, opt, np.empty(G.n + 1, np.int64))


def test_greedy_and_bound_bracket_the_optimum():
    for seed in range(5):
        G = random_graph(12, 0.35, seed)
        opt = brute_force_mvc(G)
        size, deg = greedy_cover_cpu(G.indptr, G.indices)
        assert is_vertex_cover(G, np.flatnonzero(deg < 0)) and size >= opt
        assert clique_cover_bound_cpu(G.indptr, G.indices, G.degrees.astype(np.int32)) <= opt


def _reduce_two_phase(G, deg, count, limit):
    """The GPU kernel's reduction semantics: mark every rule on an unchanged snapshot
    (smaller-id tie-breaks for isolated edges and triangles), then delete all marks."""
    nbrs = [set(G.neighbors(v).tolist()) for v in range(G.n)]
    while count <= limit:
        budget = limit - count
        mark = np.zeros(G.n, bool)
        for v in range(G.n):
            d = deg[v]
            if d <= 0:
                continue
            live = [u for u in G.neighbors(v) if deg[u] >= 0]
            if d > budget:
                mark[v] = True
            elif d == 1:
                u = live[0]
                if not (deg[u] == 1 and u > v):
                    mark[u] = True
            elif d == 2:
                a, b = live[:2]
                if b in nbrs[a] and not ((deg[a] == 2 and a < v) or (deg[b] == 2 and b < v)):
                    mark[a] = mark[b] = True
        if not mark.any():
            break
        deg[mark] = -1
        count += int(mark.sum())
        for v in np.flatnonzero(mark):
            for u in G.neighbors(v):
                if deg[u] >= 0:
                    deg[u] -= 1
    return count


def _two_phase_search(G):
    best = [G.n]

    def visit(deg, count):
        limit = best[0] - 1
        count = _reduce_two_phase(G, deg, count, limit)
        if count > limit:
            return
        edges = int(deg[deg > 0].sum()) // 2
        if edges == 0:
            best[0] = count
            return
        vmax = int(np.argmax(deg))
        if edges > (limit - count) * int(deg[vmax]):
            return
        take = deg.copy()
        take[vmax] = -1
        for u in G.neighbors(vmax):
            if take[u] >= 0:
                take[u] -= 1
        visit(take, count + 1)
        nb = deg.copy()
        c = count
        for u in G.neighbors(vmax):
            if nb[u] >= 0:
                nb[u] = -1
                c += 1
                for w in G.neighbors(u):
                    if nb[w] >= 0:
                        nb[w] -= 1
        visit(nb, c)

    visit(G.degrees.astype(np.int64), 0)
    return best[0]


def test_gpu_reduction_semantics_emulated_on_cpu():
    """The simultaneous application of the rules used by the CUDA kernels stays exact."""
    rng = np.random.default_rng(5)
    for t in range(150):
        n = int(rng.integers(3, 15))
        G = random_graph(n, float(rng.choice([0.1, 0.2, 0.3, 0.5, 0.8])), 1000 + t)
        assert _two_phase_search(G) == minimum_vertex_cover(G, device="cpu").size, t


# ------------------------------------------------------------------ exactness
@pytest.mark.parametrize("clique_bound", [False, True, "auto"])
def test_mvc_equals_brute_force(clique_bound):
    for seed in range(24):
        n = 6 + seed % 9
        G = random_graph(n, [0.2, 0.4, 0.7][seed % 3], seed)
        r = minimum_vertex_cover(G, device="cpu", clique_bound=clique_bound)
        assert r.optimal and r.lower_bound == r.size
        assert r.size == brute_force_mvc(G), seed
        assert is_vertex_cover(G, r.cover)
        assert np.all(np.diff(r.cover) > 0)


def test_mvc_equals_networkx_clique_on_complement():
    for seed in range(6):
        G = random_graph(30, 0.3 + 0.1 * (seed % 3), 100 + seed)
        comp = G.complement().to_networkx()
        _, omega = nx.max_weight_clique(comp, weight=None)
        r = minimum_vertex_cover(G, device="cpu")
        assert r.size == G.n - omega and is_vertex_cover(G, r.cover)
        mis = maximum_independent_set(G, device="cpu")
        assert mis.size == omega and mis.optimal
        u, v = G.edges()
        inset = np.zeros(G.n, bool)
        inset[mis.vertices] = True
        assert not np.any(inset[u] & inset[v])


def test_components_and_trivial_graphs():
    empty = Graph.from_edges(0, np.zeros(0, int), np.zeros(0, int))
    r = minimum_vertex_cover(empty, device="cpu")
    assert r.size == 0 and r.optimal
    iso = Graph.from_edges(5, np.zeros(0, int), np.zeros(0, int))
    assert minimum_vertex_cover(iso, device="cpu").size == 0
    # two disjoint 5-cycles and a K4: 3 + 3 + 3
    c5 = [(i, (i + 1) % 5) for i in range(5)]
    edges = c5 + [(a + 5, b + 5) for a, b in c5] + [(10 + a, 10 + b) for a in range(4) for b in range(a + 1, 4)]
    u, v = np.array(edges).T
    G = Graph.from_edges(14, u, v)
    r = minimum_vertex_cover(G, device="cpu", kernelize=False)
    assert r.size == 9 and r.optimal and is_vertex_cover(G, r.cover)
    assert r.components >= 2
    k = minimum_vertex_cover(G, device="cpu")  # the cycles fold away, K4 -> 3 by domination
    assert k.size == 9 and k.optimal and is_vertex_cover(G, k.cover) and k.nodes == 0


def test_pvc_around_the_optimum():
    for seed in range(10):
        G = random_graph(14, 0.3, 200 + seed)
        opt = minimum_vertex_cover(G, device="cpu").size
        no = parameterized_vertex_cover(G, max(opt - 1, 0), device="cpu")
        if opt > 0:
            assert no.found is False and no.proved and no.cover is None and no.lower_bound == opt
        yes = parameterized_vertex_cover(G, opt, device="cpu")
        assert yes.found and yes.size <= opt and is_vertex_cover(G, yes.cover)
        more = parameterized_vertex_cover(G, opt + 1, device="cpu")
        assert more.found and more.size <= opt + 1 and is_vertex_cover(G, more.cover)


def test_time_limit_returns_valid_unproven_cover(shared_data):
    G = read_graph(shared_data / "graphs" / "pace2019-vc" / "vc-exact_016.gr")
    r = minimum_vertex_cover(G, device="cpu", time_limit=0.5)
    assert is_vertex_cover(G, r.cover)
    assert r.optimal is False
    opt = answers(shared_data, "vc")["vc-exact_016"]
    assert r.lower_bound <= opt <= r.size
    p = parameterized_vertex_cover(G, opt - 1, device="cpu", time_limit=0.3)
    assert p.found is None and not p.proved


# ------------------------------------------------------------------ benchmark instances
@pytest.mark.parametrize("name", DIMACS_FAST)
def test_dimacs_complements(shared_data, name):
    omega = answers(shared_data, "dimacs")[name]
    G = read_graph(shared_data / "graphs" / "dimacs" / f"{name}.clq")
    H = G.complement()
    r = minimum_vertex_cover(H, device="cpu")
    assert r.optimal and r.size == G.n - omega
    assert is_vertex_cover(H, r.cover)
    # the independent set of the complement is a clique of G
    clique = np.setdiff1d(np.arange(G.n), r.cover)
    sub = G.subgraph(clique)
    assert sub.m == len(clique) * (len(clique) - 1) // 2


@pytest.mark.slow
@pytest.mark.parametrize("name", DIMACS_SLOW)
def test_dimacs_complements_slow(shared_data, name):
    omega = answers(shared_data, "dimacs")[name]
    G = read_graph(shared_data / "graphs" / "dimacs" / f"{name}.clq")
    r = minimum_vertex_cover(G.complement(), device="cpu")
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


PACE_FAST = ["vc-exact_001", "vc-exact_002", "vc-exact_004", "vc-exact_005", "vc-exact_006", "vc-exact_024",
             "vc-exact_026", "vc-exact_028"]


@pytest.mark.filterwarnings("ignore:dropped")
@pytest.mark.parametrize("name", PACE_FAST)
def test_pace_instances(shared_data, name):
    opt = answers(shared_data, "vc")[name]
    G = read_graph(shared_data / "graphs" / "pace2019-vc" / f"{name}.gr")
    r = minimum_vertex_cover(G, device="cpu", time_limit=60)
    assert r.optimal and r.size == opt and r.lower_bound == opt
    assert is_vertex_cover(G, r.cover)


@pytest.mark.filterwarnings("ignore:dropped")
@pytest.mark.parametrize("name", ["vc-exact_005", "vc-exact_006", "vc-exact_024"])
def test_pace_pvc_finds_optimal_covers(shared_data, name):
    opt = answers(shared_data, "vc")[name]
    G = read_graph(shared_data / "graphs" / "pace2019-vc" / f"{name}.gr")
    for k in (opt, opt + 1):
        r = parameterized_vertex_cover(G, k, device="cpu", time_limit=60)
        assert r.found and r.size <= k and is_vertex_cover(G, r.cover)


def test_auto_method_equals_brute_force():
    """method="auto": small dense-enough components go through a maximum clique of the
    complement; sparse ones (density below the threshold) stay with the paper's search."""
    for seed in range(24):
        n = 6 + seed % 9
        G = random_graph(n, [0.01, 0.3, 0.7][seed % 3], 300 + seed)
        r = minimum_vertex_cover(G, device="cpu", method="auto")
        assert r.optimal and r.lower_bound == r.size == brute_force_mvc(G), seed
        assert is_vertex_cover(G, r.cover) and r.method == "auto"
        mis = maximum_independent_set(G, device="cpu", method="auto")
        assert mis.size == G.n - r.size and mis.optimal


@pytest.mark.filterwarnings("ignore:dropped")
@pytest.mark.parametrize("name, which", [("p_hat300-3", "dimacs"), ("sanr200_0.7", "dimacs"), ("MANN_a27", "dimacs"),
                                         ("vc-exact_006", "vc"), ("vc-exact_010", "vc"), ("vc-exact_007", "vc")])
def test_auto_method_on_benchmark_instances(shared_data, name, which):
    """The clique route answers DIMACS complements the paper's rules need seconds to
    minutes for (p_hat300-3: 15 s on the CPU) and small PACE instances; MANN_a27's sparse
    complement and the large PACE graph keep the branch-and-reduce route."""
    if which == "dimacs":
        opt = read_graph(shared_data / "graphs" / "dimacs" / f"{name}.clq").n - answers(shared_data, "dimacs")[name]
        G = read_graph(shared_data / "graphs" / "dimacs" / f"{name}.clq").complement()
    else:
        opt = answers(shared_data, "vc")[name]
        G = read_graph(shared_data / "graphs" / "pace2019-vc" / f"{name}.gr")
    r = minimum_vertex_cover(G, device="cpu", method="auto", time_limit=60)
    assert r.optimal and r.size == opt and is_vertex_cover(G, r.cover)


def test_auto_method_pvc_around_the_optimum(shared_data):
    """The decision version on the clique route: a clique of at least n - k vertices in
    the complement, or a proof that none exists."""
    for seed in range(12):
        G = random_graph(14, [0.3, 0.5, 0.8][seed % 3], 400 + seed)
        opt = brute_force_mvc(G)
        if opt > 0:
            no = parameterized_vertex_cover(G, opt - 1, device="cpu", method="auto")
            assert no.found is False and no.proved and no.lower_bound == opt
        for k in (opt, opt + 1, G.n):
            yes = parameterized_vertex_cover(G, k, device="cpu", method="auto")
            assert yes.found and yes.size <= k and is_vertex_cover(G, yes.cover)
    D = read_graph(shared_data / "graphs" / "dimacs" / "p_hat300-3.clq")
    H = D.complement()
    opt = H.n - answers(shared_data, "dimacs")["p_hat300-3"]
    assert parameterized_vertex_cover(H, opt - 1, device="cpu", method="auto").found is False
    r = parameterized_vertex_cover(H, opt, device="cpu", method="auto")
    assert r.found and r.size == opt and is_vertex_cover(H, r.cover)


def test_auto_method_time_limit(shared_data):
    G = read_graph(shared_data / "graphs" / "pace2019-vc" / "vc-exact_016.gr")  # ~150 vertices, hard
    r = minimum_vertex_cover(G, device="cpu", method="auto", time_limit=0.5)
    opt = answers(shared_data, "vc")["vc-exact_016"]
    assert is_vertex_cover(G, r.cover) and not r.optimal and r.lower_bound <= opt <= r.size
    p = parameterized_vertex_cover(G, opt - 1, device="cpu", method="auto", time_limit=0.3)
    assert p.found is None and not p.proved


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:dropped")
@pytest.mark.parametrize("name", ["vc-exact_005", "vc-exact_006", "vc-exact_010", "vc-exact_016",
                                  "vc-exact_035", "vc-exact_037", "vc-exact_040"])
def test_pace_bounds_bracket_answer(shared_data, name):
    """PACE 2019 instances: beyond the paper's rules in this budget; check cover and bounds."""
    opt = answers(shared_data, "vc")[name]
    G = read_graph(shared_data / "graphs" / "pace2019-vc" / f"{name}.gr")
    r = minimum_vertex_cover(G, device="cpu", time_limit=20, clique_bound=True)
    assert is_vertex_cover(G, r.cover)
    assert r.lower_bound <= opt <= r.size
    if r.optimal:
        assert r.size == opt


# ------------------------------------------------------------------ API errors and checker
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
        minimum_vertex_cover(G, device="cpu", clique_bound="always")
    with pytest.raises(TypeError):
        minimum_vertex_cover(G, device="cpu", clique_bound=1)
    with pytest.raises(ValueError):
        is_vertex_cover(G, [0, 6])
    with pytest.raises(TypeError):
        is_vertex_cover(G, [0.5])


def test_is_vertex_cover():
    G = Graph.from_edges(4, np.array([0, 1, 2]), np.array([1, 2, 3]))
    assert is_vertex_cover(G, [1, 2]) and is_vertex_cover(G, [1, 3])
    assert not is_vertex_cover(G, [0, 3]) and not is_vertex_cover(G, [])
    assert is_vertex_cover(Graph.from_edges(3, np.zeros(0, int), np.zeros(0, int)), [])


def test_result_repr_and_fields():
    G = random_graph(10, 0.4, 3)
    r = minimum_vertex_cover(G, device="cpu")
    text = repr(r)
    assert "size=" in text and "optimal=True" in text and "cover" not in text.split("(")[1].split("=")[0]
    assert r.nodes >= 0 and len(r.worker_nodes) == 1 and r.greedy_size >= r.size
    assert r.load_imbalance == 1.0


H100 = dict(multiProcessorCount=132, maxThreadsPerMultiProcessor=2048, maxBlocksPerMultiProcessor=32,
            sharedMemPerMultiprocessor=233472, sharedMemPerBlockOptin=232448, totalGlobalMem=80 * 2**30)


def test_gpu_config_follows_section_IV_E():
    from kernels.vertex_cover import gpu_config

    small = gpu_config(300, 290, device_props=H100)
    assert small.shared and small.threads & (small.threads - 1) == 0
    assert small.blocks * small.threads >= 132 * 2048 // 2  # close to full occupancy
    # the degree array no longer fits in shared memory: global-memory kernel
    big = gpu_config(100_000, 50_000, device_props=H100)
    assert not big.shared
    # the stacks of all blocks fit in the memory budget
    assert big.blocks * big.stack_depth * 4 * 100_001 <= 0.25 * 80 * 2**30
    forced = gpu_config(300, 290, shared=False, threads=64, device_props=H100)
    assert not forced.shared and forced.threads == 64
    # bitset mode for small dense graphs only
    assert gpu_config(300, 290, edges=33_917, device_props=H100).bitset  # p_hat300-1 complement
    assert not gpu_config(300, 290, edges=22_922, device_props=H100).bitset  # p_hat300-2 complement
    assert not gpu_config(100_000, 50_000, edges=10 ** 9, device_props=H100).bitset
    with pytest.raises(ValueError):
        gpu_config(100_000, 50_000, bitset=True, device_props=H100)
    with pytest.raises(ValueError):
        gpu_config(300, 290, threads=100, device_props=H100)


# ------------------------------------------------------------------ CLI
def test_cli_vc(tmp_path):
    G = random_graph(12, 0.4, 7)
    path = tmp_path / "g.gr"
    from graphkit import write_graph

    write_graph(G, path, format="pace")
    out = subprocess.run([sys.executable, "-m", "graphkit.cli", "vc", str(path), "--device", "cpu"],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0].split()[:3] == ["s", "vc", "12"]
    k = int(out[0].split()[3])
    cover = np.array([int(x) - 1 for x in out[1:] if x.strip()])
    assert len(cover) == k == minimum_vertex_cover(G, device="cpu").size and is_vertex_cover(G, cover)
    # parameterized: k below the optimum prints no solution and exits 1
    res = subprocess.run([sys.executable, "-m", "graphkit.cli", "vc", str(path), "--device", "cpu",
                          "--k", str(k - 1)], capture_output=True, text=True)
    assert res.returncode == 1 and not res.stdout.startswith("s vc")


# ------------------------------------------------------------------ GPU
#: every GPU solve runs under a time limit, so a termination bug fails a test instead of hanging it
GPU_GUARD = 60.0

@pytest.mark.gpu
@pytest.mark.parametrize("method", ["hybrid", "stackonly"])
def test_gpu_equals_cpu_random(method):
    searched = 0  # graphs whose root bounds did not settle the optimum, so the tree was walked in parallel
    for seed in range(12):
        G = random_graph(20 + seed * 3, [0.15, 0.3, 0.6][seed % 3], 300 + seed)
        cpu = minimum_vertex_cover(G, device="cpu")
        # no kernelization: the GPU search itself must walk these graphs
        gpu = minimum_vertex_cover(G, device="gpu", method=method, start_depth=4, time_limit=GPU_GUARD,
                                   kernelize=False)
        assert gpu.size == cpu.size and gpu.optimal, seed
        assert is_vertex_cover(G, gpu.cover)
        searched += gpu.nodes > 0 and int((gpu.worker_nodes > 0).sum()) > 1
    assert searched >= 3


@pytest.mark.gpu
@pytest.mark.parametrize("bitset", [True, False])
@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("method", ["hybrid", "stackonly"])
def test_gpu_dimacs_shared_and_global(shared_data, method, shared, bitset):
    from kernels.vertex_cover import gpu_config

    for name in ["johnson8-4-4", "hamming6-4", "MANN_a9", "p_hat300-1"]:
        omega = answers(shared_data, "dimacs")[name]
        H = read_graph(shared_data / "graphs" / "dimacs" / f"{name}.clq").complement()
        cfg = gpu_config(H.n, H.n, shared=shared, threads=128, bitset=bitset)
        r = minimum_vertex_cover(H, device="gpu", method=method, gpu_config=cfg, time_limit=GPU_GUARD,
                                 kernelize=False)
        assert r.optimal and r.size == H.n - omega, name
        assert is_vertex_cover(H, r.cover)


@pytest.mark.gpu
@pytest.mark.parametrize("method", ["hybrid", "stackonly"])
def test_gpu_pvc(shared_data, method):
    name = "p_hat300-1"
    omega = answers(shared_data, "dimacs")[name]
    H = read_graph(shared_data / "graphs" / "dimacs" / f"{name}.clq").complement()
    opt = H.n - omega
    assert parameterized_vertex_cover(H, opt - 1, device="gpu", method=method, time_limit=GPU_GUARD).found is False
    for k in (opt, opt + 1):
        r = parameterized_vertex_cover(H, k, device="gpu", method=method, time_limit=GPU_GUARD)
        assert r.found and r.size <= k and is_vertex_cover(H, r.cover)


@pytest.mark.gpu
@pytest.mark.filterwarnings("ignore:dropped")
def test_gpu_time_limit(shared_data):
    opt = answers(shared_data, "vc")["vc-exact_039"]
    G = read_graph(shared_data / "graphs" / "pace2019-vc" / "vc-exact_039.gr")
    r = minimum_vertex_cover(G, device="gpu", time_limit=1.0)
    assert is_vertex_cover(G, r.cover) and r.time < 30
    assert r.lower_bound <= opt <= r.size
    assert r.optimal == (r.size == r.lower_bound)


@pytest.mark.gpu
@pytest.mark.filterwarnings("ignore:dropped")
@pytest.mark.parametrize("name", ["vc-exact_001", "vc-exact_026"])
def test_gpu_pace(shared_data, name):
    opt = answers(shared_data, "vc")[name]
    G = read_graph(shared_data / "graphs" / "pace2019-vc" / f"{name}.gr")
    r = minimum_vertex_cover(G, device="gpu", time_limit=GPU_GUARD, kernelize=False)  # GPU search, whole graph
    assert r.optimal and r.size == opt and is_vertex_cover(G, r.cover)


# ------------------------------------------------------------------ kernelization
def test_kernelize_lifts_optimal_covers():
    import itertools

    from kernels.vc_kernelize import kernelize

    rng = np.random.default_rng(11)
    folded = 0
    for t in range(60):
        G = random_graph(int(rng.integers(4, 14)), float(rng.uniform(0.15, 0.5)), 500 + t)
        K = kernelize(G.indptr, G.indices)
        folded += K.folds
        edges = [(a, int(b)) for a in range(K.n) for b in K.indices[K.indptr[a]:K.indptr[a + 1]] if a < b]
        best = next(list(S) for size in range(K.n + 1) for S in itertools.combinations(range(K.n), size)
                    if all(a in S or b in S for a, b in edges))
        cover = K.lift(best)
        opt = minimum_vertex_cover(G, device="cpu", kernelize=False).size
        assert is_vertex_cover(G, cover) and len(cover) == len(best) + K.forced == opt, t
    assert folded > 0


@pytest.mark.parametrize("kernelize", [True, False])
def test_kernelize_option_same_optimum(kernelize):
    for seed in range(8):
        G = random_graph(40, 0.08, 900 + seed)
        r = minimum_vertex_cover(G, device="cpu", kernelize=kernelize)
        assert r.optimal and is_vertex_cover(G, r.cover)
        assert r.size == minimum_vertex_cover(G, device="cpu", kernelize=False, clique_bound=False).size
    with pytest.raises(ValueError):
        minimum_vertex_cover(G, device="cpu", kernelize="yes")


@pytest.mark.filterwarnings("ignore:dropped")
def test_kernelize_solves_pace_007(shared_data):
    opt = answers(shared_data, "vc")["vc-exact_007"]
    G = read_graph(shared_data / "graphs" / "pace2019-vc" / "vc-exact_007.gr")
    r = minimum_vertex_cover(G, device="cpu", time_limit=60)
    assert r.optimal and r.size == opt and is_vertex_cover(G, r.cover)


@pytest.mark.parametrize("kernelize", [True, False])
def test_pvc_with_kernelization(kernelize):
    for seed in range(6):
        G = random_graph(30, 0.1, 700 + seed)
        opt = minimum_vertex_cover(G, device="cpu").size
        assert parameterized_vertex_cover(G, opt - 1, device="cpu", kernelize=kernelize).found is False
        for k in (opt, opt + 1):
            r = parameterized_vertex_cover(G, k, device="cpu", kernelize=kernelize)
            assert r.found and r.size <= k and is_vertex_cover(G, r.cover)
    path = Graph.from_edges(5, np.arange(4), np.arange(1, 5))  # reduces completely: minimum cover 2
    assert parameterized_vertex_cover(path, 1, device="cpu", kernelize=True).found is False
    r = parameterized_vertex_cover(path, 2, device="cpu", kernelize=True)
    assert r.found and r.size == 2 and r.nodes == 0



def test_bipartite_matching_is_maximum():
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_bipartite_matching

    from kernels.vc_kernelize import bipartite_matching

    rng = np.random.default_rng(3)
    for t in range(60):
        nl, nr = int(rng.integers(1, 30)), int(rng.integers(1, 30))
        B = sp.random(nl, nr, density=float(rng.uniform(0.03, 0.3)), random_state=t, format="csr")
        match = bipartite_matching(B.indptr, B.indices, nr)
        ok = match >= 0
        assert ok.sum() == (maximum_bipartite_matching(B, perm_type="column") >= 0).sum()
        assert len(set(match[ok].tolist())) == ok.sum()  # a matching
        assert all(match[i] in B.indices[B.indptr[i]:B.indptr[i + 1]] for i in np.flatnonzero(ok))  # of edges
    with pytest.raises(ValueError):  # a right vertex beyond n_right
        bipartite_matching(np.array([0, 1]), np.array([3]), 2)
    with pytest.raises(ValueError):
        bipartite_matching(np.array([1, 2]), np.array([0]), 2)


@pytest.mark.gpu
def test_gpu_auto_method(shared_data):
    """method="auto" on the GPU: the clique route runs the GPU maximum-clique search."""
    for name in ("p_hat300-2", "brock200_4"):
        D = read_graph(shared_data / "graphs" / "dimacs" / f"{name}.clq")
        G = D.complement()
        r = minimum_vertex_cover(G, device="gpu", method="auto")
        assert r.optimal and r.size == G.n - answers(shared_data, "dimacs")[name]
        assert is_vertex_cover(G, r.cover) and r.device == "gpu"
