"""Maximal independent sets: validity, determinism, quality vs networkx/Luby, CPU == GPU."""
import csv

import networkx as nx
import numpy as np
import pytest

import graphkit
from graphkit import generators as gen

GRAPHS = {
    "random": lambda: nx.gnp_random_graph(300, 0.03, seed=3),
    "grid": lambda: nx.grid_2d_graph(15, 17),
    "star": lambda: nx.star_graph(40),
    "complete": lambda: nx.complete_graph(25),
    "empty": lambda: nx.empty_graph(0),
    "edgeless": lambda: nx.empty_graph(30),
    "disconnected": lambda: nx.disjoint_union_all([nx.cycle_graph(7), nx.path_graph(5), nx.complete_graph(4)]),
}


@pytest.mark.parametrize("method", ["ecl", "luby"])
@pytest.mark.parametrize("name", GRAPHS)
def test_valid_and_maximal(name, method):
    H = GRAPHS[name]()
    G = graphkit.as_graph(H)
    res = graphkit.maximal_independent_set(G, method=method, device="cpu")
    assert graphkit.is_maximal_independent_set(G, res.vertices)
    assert res.size == len(res.vertices) and np.all(np.diff(res.vertices) > 0)
    if name == "complete":
        assert res.size == 1
    if name == "edgeless":
        assert res.size == 30
    if name == "star":
        assert res.size == 40  # the leaves (degree 1) win over the hub


def test_deterministic_and_seeded():
    G = gen.uniform_random(3000, 6, seed=2)
    a = graphkit.maximal_independent_set(G, device="cpu").vertices
    b = graphkit.maximal_independent_set(G, device="cpu").vertices
    assert np.array_equal(a, b)
    c = graphkit.maximal_independent_set(G, seed=9, device="cpu").vertices
    assert not np.array_equal(a, c)


def test_checkers_reject():
    G = graphkit.as_graph(nx.path_graph(4))
    assert not graphkit.is_independent_set(G, [0, 1])
    assert graphkit.is_independent_set(G, [0, 2])
    assert not graphkit.is_maximal_independent_set(G, [0])
    with pytest.raises(ValueError):
        graphkit.is_independent_set(G, [7])


def test_bad_arguments():
    G = graphkit.as_graph(nx.path_graph(4))
    with pytest.raises(ValueError, match="method"):
        graphkit.maximal_independent_set(G, method="magic")
    with pytest.raises(ValueError, match="seed"):
        graphkit.maximal_independent_set(G, seed=-1)
    with pytest.raises(ValueError):
        graphkit.maximal_independent_set(G, device="tpu")


def test_larger_than_networkx_and_luby_on_average():
    ours, theirs, luby = [], [], []
    for seed in range(6):
        for H in (nx.gnp_random_graph(400, 0.02, seed=seed), nx.barabasi_albert_graph(400, 3, seed=seed),
                  nx.random_geometric_graph(400, 0.08, seed=seed)):
            G = graphkit.as_graph(H)
            ours.append(graphkit.maximal_independent_set(G, device="cpu").size)
            luby.append(graphkit.maximal_independent_set(G, method="luby", device="cpu").size)
            theirs.append(len(nx.maximal_independent_set(H, seed=seed)))
    assert np.mean(ours) > np.mean(theirs)
    assert np.mean(ours) > 1.03 * np.mean(luby)


def test_shared_graphs(shared_data):
    answers = {r["name"]: int(r["answer"]) for r in csv.DictReader(open(shared_data / "graphs" / "answers.csv"))
               if r["set"] == "vc"}
    for path in sorted((shared_data / "graphs").rglob("*.gr")) + sorted((shared_data / "graphs").rglob("*.clq")):
        G = graphkit.read_graph(path)
        res = graphkit.maximal_independent_set(G, device="cpu")
        assert graphkit.is_maximal_independent_set(G, res.vertices), path.name
        name = path.stem
        if name in answers:  # maximum independent set = n - minimum vertex cover
            assert res.size <= G.n - answers[name]


def test_greedy_coloring_valid():
    for H in (nx.gnp_random_graph(200, 0.05, seed=1), nx.grid_2d_graph(10, 10), nx.complete_graph(6)):
        G = graphkit.as_graph(H)
        c = graphkit.greedy_coloring(G, device="cpu")
        assert graphkit.is_coloring(G, c.colors)
        assert c.n_colors <= int(G.degrees.max()) + 1
    assert graphkit.greedy_coloring(nx.complete_graph(6), device="cpu").n_colors == 6
    assert not graphkit.is_coloring(graphkit.as_graph(nx.path_graph(3)), [0, 0, 1])


def test_generators():
    assert (gen.grid2d(4, 5).n, gen.grid2d(4, 5).m) == (20, 31)
    G = gen.rmat(12, 8, seed=3)
    assert G.n == 4096 and G.m > 4096 and G.degrees.max() > 10 * G.degrees.mean()
    R = gen.road_like(10000, seed=1)
    assert 2.0 < R.degrees.mean() < 3.5
    U = gen.uniform_random(5000, 8, seed=1)
    assert 7.5 < U.degrees.mean() <= 8
    with pytest.raises(ValueError):
        gen.rmat(10, 8, a=0.9, b=0.2)


def test_cli_mis(tmp_path, capsys):
    from graphkit.cli import main

    path = tmp_path / "p.gr"
    path.write_text("p td 5 4\n1 2\n2 3\n3 4\n4 5\n")
    assert main(["mis", str(path), "--device", "cpu"]) == 0
    assert capsys.readouterr().out.split() == ["1", "3", "5"]
    out = tmp_path / "mis.txt"
    assert main(["mis", str(path), "--method", "luby", "--device", "cpu", "--output", str(out)]) == 0
    assert graphkit.is_maximal_independent_set(graphkit.read_graph(path), [int(x) - 1 for x in out.read_text().split()])


@pytest.mark.gpu
@pytest.mark.parametrize("method", ["ecl", "luby"])
def test_gpu_equals_cpu(method):
    graphs = [gen.uniform_random(50000, 8, seed=1), gen.rmat(14, 16, seed=2), gen.grid2d(200, 300),
              gen.road_like(40000, seed=3), graphkit.as_graph(nx.star_graph(1000)), graphkit.as_graph(nx.empty_graph(10))]
    for G in graphs:
        cpu = graphkit.maximal_independent_set(G, method=method, device="cpu")
        gpu = graphkit.maximal_independent_set(G, method=method, device="gpu")
        assert np.array_equal(cpu.vertices, gpu.vertices)
        assert graphkit.is_maximal_independent_set(G, gpu.vertices)


@pytest.mark.gpu
def test_gpu_priorities_equal_cpu():
    import cupy

    from kernels import mis
    from kernels.cuda import get_kernel

    G = gen.rmat(13, 8, seed=5)
    prio, avg = mis.ecl_priorities(G.indptr, seed=4)
    indptr, _, _ = G.device_arrays()
    status = cupy.empty(G.n, dtype=np.uint8)
    get_kernel("mis", "ecl_init", indptr.dtype)((64,), (256,), (np.int32(G.n), indptr, avg, np.uint32(4), status))
    np.testing.assert_array_equal(status.get(), prio)
