"""The GPU paper's vertex cover algorithm (kernels.vertex_cover.paper): its rules, its
sequential CPU search, the GPU launch configuration and, with a GPU, the CUDA kernels."""
from __future__ import annotations

import csv
import itertools

import numpy as np
import pytest

from graphkit import Graph, read_graph
from graphkit.vertex_cover import is_vertex_cover, minimum_vertex_cover, parameterized_vertex_cover
from kernels.vertex_cover import degree_bound_holds, clique_cover_bound_cpu, greedy_cover_cpu, reduce_cpu, search_cpu


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


# ------------------------------------------------------------------ the paper's rules and bounds
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
    assert not degree_bound_holds(deg, 4, 7, 2, hist)
    assert degree_bound_holds(deg, 4, 7, 4, hist)
    # valid: never cuts a budget that a cover meets
    for seed in range(20):
        G = random_graph(10, 0.4, seed)
        deg = G.degrees.astype(np.int32)
        if deg.max() == 0:
            continue
        opt = brute_force_mvc(G)
        assert degree_bound_holds(deg, int(deg.max()), G.m, opt, np.empty(G.n + 1, np.int64))


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
        assert _two_phase_search(G) == brute_force_mvc(G), t



@pytest.mark.parametrize("method", ["hybrid", "stackonly"])
def test_paper_cpu_search_equals_brute_force(method):
    """method="hybrid"/"stackonly" on the CPU: the paper's sequential search, no reductions
    beyond its rules."""
    for seed in range(16):
        G = random_graph(6 + seed % 9, [0.2, 0.4, 0.7][seed % 3], seed)
        r = minimum_vertex_cover(G, device="cpu", method=method)
        assert r.optimal and r.size == brute_force_mvc(G) and is_vertex_cover(G, r.cover)
        # the search runs unless the greedy cover already meets the root's bound
        assert r.kernel_size == -1 and r.solved_by in ("paper_cpu", "lower_bound")
        # the paper's minimum search itself, from the trivial cover down
        s = search_cpu(G.indptr, G.indices, G.degrees.astype(np.int32), 0, G.n, pvc=False, use_lb=0)
        assert s.done and s.best == r.size
        opt = r.size
        if opt:
            assert parameterized_vertex_cover(G, opt - 1, device="cpu", method=method).found is False
        assert parameterized_vertex_cover(G, opt, device="cpu", method=method).found


def test_paper_cpu_search_stack_is_clamped():
    """A huge budget does not size the paper's stack: depth at most n (issue: k = 2**31 - 1
    tried to allocate (k + 4) x n)."""
    from kernels.vertex_cover import search_cpu

    outer, inner = np.arange(5), 5 + np.arange(5)
    petersen = Graph.from_edges(10, np.concatenate([outer, outer, inner]),
                                np.concatenate([(outer + 1) % 5, inner, 5 + (inner + 2) % 5]))
    s = search_cpu(petersen.indptr, petersen.indices, petersen.degrees.astype(np.int32), 0, 2**31 - 1, pvc=True)
    assert s.stack.shape[0] <= petersen.n + 4 and s.found


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
        gpu = minimum_vertex_cover(G, device="gpu", method=method, start_depth=4, time_limit=GPU_GUARD)
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
        r = minimum_vertex_cover(H, device="gpu", method=method, gpu_config=cfg, time_limit=GPU_GUARD)
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
@pytest.mark.parametrize("method", ["auto", "hybrid"])
@pytest.mark.parametrize("name", ["vc-exact_001", "vc-exact_026"])
def test_gpu_pace(shared_data, name, method):
    # auto: the pipeline with its GPU searches; hybrid: the paper's algorithm on the whole graph
    opt = answers(shared_data, "vc")[name]
    G = read_graph(shared_data / "graphs" / "pace2019-vc" / f"{name}.gr")
    r = minimum_vertex_cover(G, device="gpu", method=method, time_limit=GPU_GUARD)
    assert r.optimal and r.size == opt and is_vertex_cover(G, r.cover)


@pytest.mark.filterwarnings("ignore:dropped")
def test_paper_method_stops_when_its_cover_meets_the_root_bound(shared_data):
    # The paper's search cannot prove a cover of a PACE instance optimal (it ran out a 60 s
    # limit and said optimal=False with size == lower_bound); the root bound proves it at once.
    opt = answers(shared_data, "vc")["vc-exact_001"]
    G = read_graph(shared_data / "graphs" / "pace2019-vc" / "vc-exact_001.gr")
    r = minimum_vertex_cover(G, device="cpu", method="hybrid", time_limit=20)
    assert r.optimal and r.size == r.lower_bound == opt and r.solved_by == "lower_bound"
    assert r.time < 10 and is_vertex_cover(G, r.cover)




@pytest.mark.gpu
@pytest.mark.filterwarnings("ignore:dropped")
def test_gpu_pipeline_equals_cpu(shared_data):
    """device="gpu", method="auto": the pipeline with its GPU searches, the CPU's answer."""
    for name in ["vc-exact_001", "vc-exact_005"]:
        opt = answers(shared_data, "vc")[name]
        G = read_graph(shared_data / "graphs" / "pace2019-vc" / f"{name}.gr")
        r = minimum_vertex_cover(G, device="gpu", time_limit=GPU_GUARD)
        assert is_vertex_cover(G, r.cover) and r.lower_bound <= opt <= r.size
        if r.optimal:
            assert r.size == opt


@pytest.mark.gpu
@pytest.mark.filterwarnings("ignore:dropped")
def test_gpu_instance_too_large_falls_back_with_a_warning(shared_data):
    """An instance whose stacks exceed the device goes to the CPU with a warning, never a
    crash (the 15,783-vertex PACE instance crashed the launch)."""
    import warnings

    G = read_graph(shared_data / "bench" / "vc" / "vc-exact_176.gr.xz") if (shared_data / "bench").is_dir() else None
    if G is None:
        pytest.skip("bench set absent")
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        r = minimum_vertex_cover(G, device="gpu", method="hybrid", time_limit=5)
    assert is_vertex_cover(G, r.cover)
