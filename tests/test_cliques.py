"""graphkit.cliques and kernels.cliques: maximal clique enumeration and maximum clique: vs networkx, CPU == GPU, DIMACS answers."""
import csv

import networkx as nx
import numpy as np
import pytest

import graphkit
from graphkit.cli import main as cli_main
from helpers import compiled_during


def moon_moser(parts):
    """Complete multipartite graph with ``parts`` parts of 3: 3**parts maximal cliques."""
    return nx.complete_multipartite_graph(*([3] * parts))


GRAPHS = {
    "gnp_sparse": lambda: nx.gnp_random_graph(200, 0.04, seed=1),
    "gnp_mid": lambda: nx.gnp_random_graph(60, 0.3, seed=2),
    "gnp_dense": lambda: nx.gnp_random_graph(40, 0.7, seed=3),
    "powerlaw": lambda: nx.barabasi_albert_graph(300, 6, seed=4),
    "moon_moser": lambda: moon_moser(6),
    "complete": lambda: nx.complete_graph(12),
    "edgeless": lambda: nx.empty_graph(7),
    "single": lambda: nx.empty_graph(1),
    "disconnected": lambda: nx.disjoint_union_all([nx.cycle_graph(5), nx.complete_graph(6), nx.path_graph(4),
                                                   nx.empty_graph(2)]),
    "wide_bitsets": lambda: nx.disjoint_union(nx.complete_graph(70), nx.gnp_random_graph(150, 0.6, seed=5)),
}


def as_set(cliques):
    return [tuple(sorted(int(x) for x in c)) for c in cliques]


def reference(H):
    return sorted(as_set(nx.find_cliques(H)))


@pytest.mark.parametrize("name", GRAPHS)
def test_equals_networkx(name):
    H = GRAPHS[name]()
    got = as_set(graphkit.maximal_cliques(H, device="cpu"))
    assert len(set(got)) == len(got), "duplicate cliques"
    assert sorted(got) == reference(H)
    res = graphkit.count_maximal_cliques(H, device="cpu")
    assert res.count == len(got)
    assert res.histogram.tolist() == np.bincount([len(c) for c in got]).tolist()


def test_moon_moser_count():
    H = moon_moser(9)  # 27 vertices
    assert graphkit.count_maximal_cliques(H, device="cpu").count == 3 ** 9
    assert all(len(c) == 9 for c in graphkit.maximal_cliques(H, device="cpu"))


def test_every_output_is_maximal():
    H = nx.gnp_random_graph(80, 0.2, seed=7)
    G = graphkit.as_graph(H)
    for c in graphkit.maximal_cliques(G, device="cpu"):
        assert graphkit.is_maximal_clique(G, c)


@pytest.mark.parametrize("chunk", [1, 2, 7])
def test_tiny_buffer_flushes(chunk):
    H = nx.gnp_random_graph(50, 0.35, seed=11)
    chunks = list(graphkit.maximal_clique_chunks(H, device="cpu", chunk_cliques=chunk))
    assert all(len(off) - 1 <= chunk for _, off in chunks)
    got = [tuple(flat[off[i]:off[i + 1]].tolist()) for flat, off in chunks for i in range(len(off) - 1)]
    assert sorted(got) == reference(H)


@pytest.mark.parametrize("min_size", [2, 3, 5])
def test_min_size(min_size):
    H = nx.gnp_random_graph(70, 0.25, seed=13)
    ref = [c for c in reference(H) if len(c) >= min_size]
    assert sorted(as_set(graphkit.maximal_cliques(H, min_size=min_size, device="cpu"))) == ref
    assert graphkit.count_maximal_cliques(H, min_size=min_size, device="cpu").count == len(ref)


def test_empty_graph():
    G = graphkit.Graph.from_edges(0, np.zeros(0, int), np.zeros(0, int))
    assert list(graphkit.maximal_cliques(G, device="cpu")) == []
    assert graphkit.count_maximal_cliques(G, device="cpu").count == 0
    assert graphkit.maximum_clique(G, device="cpu").size == 0


def test_checkers_and_errors():
    H = nx.Graph([(0, 1), (1, 2), (0, 2), (2, 3)])
    assert graphkit.is_clique(H, [0, 1, 2]) and not graphkit.is_clique(H, [0, 1, 3])
    assert not graphkit.is_clique(H, [0, 0])
    assert graphkit.is_maximal_clique(H, [2, 3]) and not graphkit.is_maximal_clique(H, [2])
    with pytest.raises(ValueError):
        graphkit.is_clique(H, [0, 9])
    with pytest.raises(TypeError):
        graphkit.is_clique(H, [0.5, 1.0])
    with pytest.raises(ValueError):
        list(graphkit.maximal_cliques(H, min_size=0))
    with pytest.raises(ValueError):
        graphkit.maximum_clique(H, method="nope")
    with pytest.raises(ValueError):
        graphkit.maximum_clique(H, time_limit=-1)
    with pytest.raises(TypeError):  # checked when the iterator is created
        graphkit.maximal_cliques(object())
    with pytest.raises(ValueError):
        graphkit.maximal_clique_chunks(H, chunk_cliques=0)


@pytest.mark.parametrize("name", ["gnp_sparse", "gnp_mid", "gnp_dense", "powerlaw", "moon_moser", "complete",
                                  "edgeless", "disconnected", "wide_bitsets"])
def test_maximum_clique_small(name):
    H = GRAPHS[name]()
    res = graphkit.maximum_clique(H, device="cpu")
    assert res.optimal
    assert res.size == max(len(c) for c in nx.find_cliques(H))
    assert graphkit.is_clique(H, res.vertices)


@pytest.mark.parametrize("name", ["gnp_mid", "gnp_dense", "moon_moser", "complete", "edgeless",
                                  "single", "disconnected", "wide_bitsets"])
def test_dense_clique_search_equals_networkx(name):
    """The whole-graph bitset branch and bound: the clique number of the graph and of its
    complement, in slices of a few nodes too, and deciding (a clique above a size, or none)."""
    from kernels.cliques.maxclique_dense import DenseCliqueSearch

    H = GRAPHS[name]()
    G = graphkit.as_graph(H)
    for complement in (False, True):
        R = nx.complement(H) if complement else H
        omega = max((len(c) for c in nx.find_cliques(R)), default=0)
        s = DenseCliqueSearch(G.indptr, G.indices, complement=complement, greedy=False)
        assert s.solve() and s.size == omega and len(s.best) == omega and graphkit.is_clique(R, s.best.tolist())
        sliced = DenseCliqueSearch(G.indptr, G.indices, complement=complement, greedy=False)
        while not sliced.solve(node_cap=3):
            pass
        assert sliced.size == omega and sliced.nodes == s.nodes
        found = DenseCliqueSearch(G.indptr, G.indices, complement=complement, lower=omega - 1, upper=omega)
        assert found.solve() and found.size == omega and graphkit.is_clique(R, found.best.tolist())
        none = DenseCliqueSearch(G.indptr, G.indices, complement=complement, lower=omega)
        assert none.solve() and len(none.best) == 0 and none.size == omega
        assert graphkit.is_clique(R, none.greedy_clique.tolist())


def test_dense_clique_search_takes_a_clique_found_elsewhere():
    from kernels.cliques.maxclique_dense import DenseCliqueSearch

    H = nx.gnp_random_graph(90, 0.5, seed=8)
    G = graphkit.as_graph(H)
    omega = max(len(c) for c in nx.find_cliques(H))
    best = max(nx.find_cliques(H), key=len)
    s = DenseCliqueSearch(G.indptr, G.indices, greedy=False)
    assert s.raise_lower(best) and not s.raise_lower(best[:-1])
    assert s.solve() and s.size == omega and sorted(s.best.tolist()) == sorted(best)


@pytest.mark.gpu
def test_gpu_clique_run_stops_when_asked():
    """A launch left running (no deadline) ends soon after stop(), with a valid clique and
    optimal=False; done() never waits."""
    import time

    from kernels.cliques.maxclique_gpu import GpuCliqueRun

    H = nx.gnp_random_graph(300, 0.9, seed=1)  # far beyond a second of search
    G = graphkit.as_graph(H)
    run = GpuCliqueRun(G.indptr, G.indices, cancellable=True)
    t0 = time.perf_counter()
    assert not run.done() and time.perf_counter() - t0 < 0.05
    time.sleep(0.1)
    run.stop()
    verts, optimal, nodes = run.result()
    assert time.perf_counter() - t0 < 5 and not optimal and nodes > 0
    assert len(verts) > 1 and graphkit.is_clique(H, verts.tolist())


def _answers(shared_data):
    with open(shared_data / "graphs" / "answers.csv") as fh:
        return {r["name"]: int(r["answer"]) for r in csv.DictReader(fh) if r["set"] == "dimacs"}


FAST_DIMACS = ["brock200_2", "brock200_4", "c-fat200-1", "c-fat200-2", "c-fat500-1", "hamming6-2", "hamming6-4",
               "hamming8-4", "johnson8-2-4", "johnson8-4-4", "johnson16-2-4", "keller4", "MANN_a9", "p_hat300-1",
               "p_hat300-2", "san200_0.7_1", "sanr200_0.7"]
SLOW_DIMACS = ["p_hat300-3", "C125.9", "MANN_a27"]


def _check_dimacs(shared_data, name, method="auto", device="cpu"):
    ans = _answers(shared_data)[name]
    G = graphkit.read_graph(shared_data / "graphs" / "dimacs" / f"{name}.clq")
    res = graphkit.maximum_clique(G, method=method, device=device)
    assert res.optimal and res.size == ans
    assert graphkit.is_clique(G, res.vertices)


@pytest.mark.parametrize("name", FAST_DIMACS)
def test_maximum_clique_dimacs(shared_data, name):
    _check_dimacs(shared_data, name)


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW_DIMACS)
def test_maximum_clique_dimacs_slow(shared_data, name):
    _check_dimacs(shared_data, name)


def test_maximum_clique_via_vertex_cover():
    H = nx.gnp_random_graph(30, 0.5, seed=21)
    res = graphkit.maximum_clique(H, method="vertex_cover", device="cpu")
    assert res.optimal and graphkit.is_clique(H, res.vertices)
    assert res.size == max(len(c) for c in nx.find_cliques(H))


def test_maximum_clique_reports_progress(monkeypatch):
    # the branch and bound reports from its trips to Python (every 1,024 nodes); a report
    # never exceeds the answer
    G = nx.gnp_random_graph(300, 0.6, seed=1)
    seen = []
    res = graphkit.maximum_clique(G, method="branch_and_bound", device="cpu", progress=seen.append)
    assert res.optimal and seen
    assert all(1 <= r["best"] <= res.size and r["nodes"] <= res.nodes and r["elapsed"] >= 0 for r in seen)
    seen.clear()
    graphkit.maximum_clique(G, method="branch_and_bound", device="cpu", progress=False)
    assert not seen
    # the vertex-cover route hands the same argument to minimum_vertex_cover
    import graphkit.cliques as gc

    passed = []
    real = gc.minimum_vertex_cover

    def spy(*args, **kwargs):
        passed.append(kwargs.get("progress"))
        return real(*args, **kwargs)

    monkeypatch.setattr(gc, "minimum_vertex_cover", spy)
    graphkit.maximum_clique(nx.gnp_random_graph(40, 0.9, seed=2), method="vertex_cover", device="cpu",
                            progress=seen.append)
    assert passed == [seen.append]


def test_time_limit_returns_valid_clique(shared_data):
    G = graphkit.read_graph(shared_data / "graphs" / "dimacs" / "MANN_a27.clq")
    res = graphkit.maximum_clique(G, time_limit=0.05, device="cpu")
    assert graphkit.is_clique(G, res.vertices)
    assert res.time < 5


def test_cli(tmp_path, capsys):
    path = tmp_path / "g.clq"
    graphkit.write_graph(nx.gnp_random_graph(25, 0.3, seed=3), path)
    H = graphkit.read_graph(path)
    assert cli_main(["cliques", str(path), "--count-only", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert f"{len(reference(H.to_networkx()))}" in out
    assert cli_main(["cliques", str(path), "--device", "cpu", "--min-size", "3"]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln and not ln.startswith("c")]
    assert len(lines) == len([c for c in reference(H.to_networkx()) if len(c) >= 3])
    assert cli_main(["maxclique", str(path), "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert cli_main(["maxclique", str(path), "--device", "cpu", "--quiet"]) == 0
    assert capsys.readouterr().out == out
    best = max(len(c) for c in reference(H.to_networkx()))
    assert len(out.split("\n")[1].split()) == best


# ------------------------------------------------------------------------------ GPU
@pytest.mark.gpu
@pytest.mark.parametrize("name", GRAPHS)
def test_gpu_equals_cpu(name):
    H = GRAPHS[name]()
    cpu = sorted(as_set(graphkit.maximal_cliques(H, device="cpu")))
    gpu = as_set(graphkit.maximal_cliques(H, device="gpu"))
    assert len(set(gpu)) == len(gpu)
    assert sorted(gpu) == cpu
    assert graphkit.count_maximal_cliques(H, device="gpu").histogram.tolist() == \
        graphkit.count_maximal_cliques(H, device="cpu").histogram.tolist()


@pytest.mark.gpu
@pytest.mark.parametrize("chunk", [1, 3, 64])
def test_gpu_tiny_buffer(chunk):
    H = nx.gnp_random_graph(120, 0.2, seed=17)
    chunks = list(graphkit.maximal_clique_chunks(H, device="gpu", chunk_cliques=chunk))
    got = [tuple(flat[off[i]:off[i + 1]].tolist()) for flat, off in chunks for i in range(len(off) - 1)]
    assert len(set(got)) == len(got)
    assert sorted(got) == reference(H)


@pytest.mark.gpu
def test_gpu_count_in_short_launches_equals_the_cpu(monkeypatch):
    # a count runs as launches over growing prefixes of the task queue; with the smallest
    # step (one task per warp per launch) every task must still be counted exactly once
    import kernels.cliques.mce_gpu as mg
    from graphkit import generators as gen

    G = gen.rmat(15, 8, seed=5)  # about four tasks per warp of an H100/H200
    cpu = graphkit.count_maximal_cliques(G, device="cpu")
    seen = []
    monkeypatch.setattr(mg, "COUNT_LAUNCH_SECONDS", 0.0)
    gpu = graphkit.count_maximal_cliques(G, device="gpu", progress=lambda done, total: seen.append((done, total)))
    assert gpu.histogram.tolist() == cpu.histogram.tolist()
    assert len(seen) > 3 and seen[-1][0] == seen[-1][1]
    assert all(a[0] < b[0] for a, b in zip(seen, seen[1:]))


@pytest.mark.gpu
def test_gpu_large_sparse_split():
    from graphkit import generators as gen

    from kernels.cliques import mce_count_gpu

    G = gen.rmat(13, 16, seed=3)  # degeneracy 89: the hubs are split into one task per branch
    cpu = graphkit.count_maximal_cliques(G, device="cpu")
    assert cpu.count > 10 ** 6
    assert graphkit.count_maximal_cliques(G, device="gpu").histogram.tolist() == cpu.histogram.tolist()
    H = gen.rmat(12, 16, seed=3)  # 1.2 million cliques, enumerated through many buffer flushes
    cpu = graphkit.count_maximal_cliques(H, device="cpu")
    assert np.trim_zeros(mce_count_gpu(H, split_min=4), "b").tolist() == cpu.histogram.tolist()
    chunks = list(graphkit.maximal_clique_chunks(H, device="gpu", chunk_cliques=50_000))
    assert len(chunks) > 5
    sizes = np.concatenate([np.diff(off) for _, off in chunks])
    assert len(sizes) == cpu.count and np.bincount(sizes, minlength=len(cpu.histogram)).tolist() == cpu.histogram.tolist()
    flat = np.concatenate([f for f, _ in chunks])
    code = np.random.default_rng(0).integers(1, 2 ** 63, H.n, dtype=np.uint64)  # random codes: sums identify sets
    keys = np.unique(np.add.reduceat(code[flat], np.cumsum(sizes) - sizes))
    assert len(keys) == cpu.count  # no clique emitted twice


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["hamming6-4", "johnson8-2-4", "MANN_a9"])
def test_gpu_maximum_clique_vertex_cover(shared_data, name):
    _check_dimacs(shared_data, name, method="vertex_cover", device="gpu")


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["gnp_sparse", "gnp_mid", "gnp_dense", "powerlaw", "moon_moser", "complete",
                                  "edgeless", "single", "disconnected", "wide_bitsets"])
def test_gpu_branch_and_bound_small(name):
    from kernels.cliques import max_clique_gpu

    H = GRAPHS[name]()
    G = graphkit.Graph.from_networkx(H)
    omega = max(len(c) for c in nx.find_cliques(H))
    verts, optimal, _ = max_clique_gpu(G.indptr, G.indices)  # no starting bound: the kernel does all the work
    assert optimal and len(verts) == omega and graphkit.is_clique(H, verts)
    res = graphkit.maximum_clique(H, device="gpu")
    assert res.device == "gpu" and res.optimal and res.size == omega


@pytest.mark.gpu
@pytest.mark.parametrize("name", FAST_DIMACS + SLOW_DIMACS)
def test_gpu_branch_and_bound_dimacs(shared_data, name):
    from kernels.cliques import max_clique_gpu

    ans = _answers(shared_data)[name]
    G = graphkit.read_graph(shared_data / "graphs" / "dimacs" / f"{name}.clq")
    verts, optimal, nodes = max_clique_gpu(G.indptr, G.indices)
    assert optimal and len(verts) == ans and graphkit.is_clique(G, verts) and nodes > 0
    _check_dimacs(shared_data, name, device="gpu")


@pytest.mark.gpu
def test_gpu_branch_and_bound_time_limit(shared_data):
    G = graphkit.read_graph(shared_data / "graphs" / "dimacs" / "MANN_a27.clq")
    res = graphkit.maximum_clique(G, time_limit=0.002, device="gpu")
    assert graphkit.is_clique(G, res.vertices) and res.time < 5


def test_auto_method_follows_density():
    dense = nx.complement(nx.gnp_random_graph(60, 0.03, seed=4))  # density about 0.97
    res = graphkit.maximum_clique(dense, device="cpu")
    assert res.method == "vertex_cover" and res.optimal
    assert res.size == max(len(c) for c in nx.find_cliques(dense)) and graphkit.is_clique(dense, res.vertices)
    assert graphkit.maximum_clique(nx.gnp_random_graph(60, 0.5, seed=4), device="cpu").method == "branch_and_bound"


def test_gpu_capacity_falls_back_to_cpu_under_auto(monkeypatch):
    import graphkit.clique_search as gc
    from kernels import cliques as kc

    def too_big(*args, **kwargs):
        raise kc.GpuCapacityError("too large")

    monkeypatch.setattr(gc, "resolve_device", lambda device: "gpu")
    monkeypatch.setattr(gc, "AUTO_PROBE_NODES", 1)  # the probe does not finish: the GPU is asked
    monkeypatch.setattr(kc, "max_clique_gpu", too_big)
    H = nx.gnp_random_graph(120, 0.7, seed=8)  # about 7,000 search nodes
    with pytest.warns(RuntimeWarning, match="too large"):
        res = graphkit.maximum_clique(H, method="branch_and_bound", device="auto")
    G = graphkit.Graph.from_networkx(H)
    omega = len(kc.max_clique_cpu(G.indptr, G.indices)[0])
    assert res.device == "cpu" and res.optimal and res.size == omega and graphkit.is_clique(H, res.vertices)
    with pytest.raises(kc.GpuCapacityError):
        graphkit.maximum_clique(H, method="branch_and_bound", device="gpu")


def test_cliques_on_labelled_graphs():
    H = nx.Graph([("a", "b"), ("b", "c"), ("a", "c"), ("c", "d")])
    cliques = sorted(sorted(c.tolist()) for c in graphkit.maximal_cliques(H, device="cpu"))
    assert cliques == [["a", "b", "c"], ["c", "d"]]
    best = graphkit.maximum_clique(H, device="cpu")
    assert sorted(best.vertices.tolist()) == ["a", "b", "c"] and best.indices.tolist() == [0, 1, 2]
    assert graphkit.is_clique(H, best.vertices) and graphkit.is_maximal_clique(H, best.vertices)
    assert not graphkit.is_maximal_clique(H, ["c", "d", "a"])
    dense = graphkit.maximum_clique(nx.complete_graph("wxyz"), device="cpu")  # the vertex cover route
    assert dense.method == "vertex_cover" and sorted(dense.vertices.tolist()) == ["w", "x", "y", "z"]


@pytest.mark.parametrize("count_only", [False, True])
def test_enumeration_resumes_after_any_node_budget(count_only):
    """Runs cut after a few search nodes (what lets Ctrl-C and progress in) resume exactly:
    the same cliques, none lost or repeated."""
    from graphkit.generators import uniform_random
    from kernels.cliques import MceState

    G = uniform_random(300, avg_degree=12, seed=3)
    whole = MceState(G.indptr, G.indices, 1, count_only, 1 << 20)
    assert whole.run(node_budget=0)[0]
    for budget in (1, 7, 64):
        state = MceState(G.indptr, G.indices, 1, count_only, 1 << 20)
        found, runs = [], 0
        while True:
            done, flat, off = state.run(node_budget=budget)
            found += [tuple(sorted(flat[a:b].tolist())) for a, b in zip(off[:-1], off[1:])]
            runs += 1
            if done:
                break
        assert runs > 1
        np.testing.assert_array_equal(state.hist, whole.hist)
        assert state.nodes == whole.nodes
        if not count_only:
            _, flat, off = MceState(G.indptr, G.indices, 1, False, 1 << 20).run(node_budget=0)
            assert sorted(found) == sorted(tuple(sorted(flat[a:b].tolist())) for a, b in zip(off[:-1], off[1:]))
            assert len(set(found)) == len(found)


def test_count_and_listing_report_progress():
    """The CPU search reports the sub-problems started (what the CLI's bar shows), rising
    to every vertex, and counts the same with or without the callback."""
    from graphkit.generators import uniform_random
    from kernels.cliques import mce_cpu

    G = uniform_random(400, avg_degree=16, seed=5)
    seen = []
    budget = mce_cpu.NODE_BUDGET
    mce_cpu.NODE_BUDGET = 50  # many short runs; restored below
    try:
        res = graphkit.count_maximal_cliques(G, device="cpu", progress=lambda done, total: seen.append((done, total)))
        listed = sum(1 for _ in graphkit.maximal_cliques(G, device="cpu"))
    finally:
        mce_cpu.NODE_BUDGET = budget
    assert len(seen) > 3 and all(t == G.n for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and seen[-1][0] <= G.n
    assert res.count == listed == graphkit.count_maximal_cliques(G, device="cpu").count


def test_time_limited_searches_compile_nothing_after_the_warm_up(shared_data):
    # the limit is for the search: every Numba function a limited maximum_clique calls
    # must be compiled before its clock starts (a cold cache once cost 7 s of a 0.05 s limit)
    warm_up = ("from kernels.cliques import compile_max_clique_cpu\n"
               "from kernels.vertex_cover.exact import compile_once\n"
               "compile_once()\ncompile_max_clique_cpu()\nimport graphkit\n")
    work = ("G = graphkit.read_graph(sys.argv[1])\n"
            "graphkit.maximum_clique(G, time_limit=0.05, device='cpu')\n"
            "graphkit.maximum_clique(G, method='branch_and_bound', time_limit=0.05, device='cpu')\n")
    assert compiled_during(warm_up, work, shared_data / "graphs" / "dimacs" / "MANN_a27.clq") == []
