"""Maximal independent sets: validity, determinism, quality vs networkx/Luby, CPU == GPU."""
import csv
import warnings

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
    assert res.size == len(res.vertices) and np.all(np.diff(res.indices) > 0)
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
    with pytest.raises(ValueError):
        graphkit.is_maximal_independent_set(G, [-1])
    with pytest.raises(TypeError, match="integer"):
        graphkit.is_independent_set(G, [0.0, 2.0])
    with pytest.raises(TypeError, match="flatnonzero"):
        graphkit.is_independent_set(G, np.array([True, False, True, False]))
    assert graphkit.is_independent_set(G, []) and not graphkit.is_maximal_independent_set(G, [])
    assert graphkit.is_maximal_independent_set(nx.empty_graph(0), [])
    # maximality on a larger graph: dropping any one vertex of a maximal set breaks it
    U = gen.uniform_random(5000, 5, seed=8)
    res = graphkit.maximal_independent_set(U, device="cpu").vertices
    assert graphkit.is_maximal_independent_set(U, res)
    assert not graphkit.is_maximal_independent_set(U, res[1:])
    assert not graphkit.is_independent_set(U, np.append(res, np.setdiff1d(np.arange(U.n), res)[0]))


def test_bad_arguments():
    G = graphkit.as_graph(nx.path_graph(4))
    with pytest.raises(ValueError, match="method"):
        graphkit.maximal_independent_set(G, method="magic")
    for seed in (-1, 2**32, 1.5, True):
        with pytest.raises(ValueError, match="seed"):
            graphkit.maximal_independent_set(G, seed=seed)
    assert graphkit.maximal_independent_set(G, seed=2**32 - 1, device="cpu").size == 2
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
    rows = list(csv.DictReader(open(shared_data / "graphs" / "answers.csv")))
    vc = {r["name"]: int(r["answer"]) for r in rows if r["set"] == "vc"}
    omega = {r["name"]: int(r["answer"]) for r in rows if r["set"] == "dimacs"}
    ratios = {"ecl": [], "luby": [], "improved": []}
    for path in sorted((shared_data / "graphs").rglob("*.gr")) + sorted((shared_data / "graphs").rglob("*.clq")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # duplicate edges in some files
            G = graphkit.read_graph(path)
        name = path.stem
        res = {"ecl": graphkit.maximal_independent_set(G, device="cpu"),
               "luby": graphkit.maximal_independent_set(G, method="luby", device="cpu"),
               "improved": graphkit.maximal_independent_set(G, device="cpu", improve=True)}
        for r in res.values():
            assert graphkit.is_maximal_independent_set(G, r.vertices), path.name
        assert res["improved"].size >= res["ecl"].size
        if name in vc:  # maximum independent set = n - minimum vertex cover
            for key, r in res.items():
                assert r.size <= G.n - vc[name]
                ratios[key].append(r.size / (G.n - vc[name]))
        if name in omega:  # an independent set of the complement is a clique of G: at most omega
            H = G.complement()
            clique = graphkit.maximal_independent_set(H, device="cpu", improve=True)
            assert graphkit.is_maximal_independent_set(H, clique.vertices)
            assert 1 <= clique.size <= omega[name]
            assert G.subgraph(clique.vertices).m == clique.size * (clique.size - 1) // 2
    if ratios["ecl"]:  # Burtscher et al.: degree priorities beat uniform ones; the local search adds more
        assert np.mean(ratios["ecl"]) > np.mean(ratios["luby"]) + 0.05
        assert np.mean(ratios["improved"]) > np.mean(ratios["ecl"]) + 0.02
        assert np.mean(ratios["improved"]) > 0.94


def test_greedy_coloring_valid():
    for H in (nx.gnp_random_graph(200, 0.05, seed=1), nx.grid_2d_graph(10, 10), nx.complete_graph(6)):
        G = graphkit.as_graph(H)
        c = graphkit.greedy_coloring(G, device="cpu")
        assert graphkit.is_coloring(G, c.colors)
        assert c.n_colors <= int(G.degrees.max()) + 1
    assert graphkit.greedy_coloring(nx.complete_graph(6), device="cpu").n_colors == 6
    assert not graphkit.is_coloring(graphkit.as_graph(nx.path_graph(3)), [0, 0, 1])


def _async_sim(G, prio, rng):
    """Chaotic relaxation in a random order, one vertex at a time (any GPU interleaving)."""
    n = G.n
    state = np.zeros(n, dtype=np.int8)  # 0 undecided, 1 in, -1 out
    key = [(int(prio[v]), v) for v in range(n)]
    while True:
        und = np.flatnonzero(state == 0)
        if not len(und):
            return state == 1
        for v in rng.permutation(und):
            if state[v]:
                continue
            nb = G.indices[G.indptr[v]:G.indptr[v + 1]]
            if all(state[u] == -1 or key[u] < key[v] for u in nb):
                state[v] = 1
                state[nb] = -1


def _sync_rounds(G, prio):
    """Synchronous rounds on a snapshot (the random-permutation algorithm's rounds)."""
    n = G.n
    state = np.zeros(n, dtype=np.int8)
    key = [(int(prio[v]), v) for v in range(n)]
    rounds = 0
    while (state == 0).any():
        snap = state.copy()
        chosen = [v for v in np.flatnonzero(snap == 0)
                  if all(snap[u] == -1 or key[u] < key[v] for u in G.indices[G.indptr[v]:G.indptr[v + 1]])]
        assert chosen  # progress in every round
        for v in chosen:
            state[v] = 1
            state[G.indices[G.indptr[v]:G.indptr[v + 1]]] = -1
        rounds += 1
    return state == 1


@pytest.mark.parametrize("method", ["ecl", "luby"])
def test_fixed_point_is_order_independent(method):
    """The asynchronous algorithm's result depends only on the priorities: random orders,
    synchronous rounds, the one-thread relaxation and the sorted greedy all agree."""
    from kernels import mis

    rng = np.random.default_rng(0)
    for seed, H in enumerate((nx.gnp_random_graph(150, 0.05, seed=1), nx.grid_2d_graph(9, 11),
                              nx.barabasi_albert_graph(150, 3, seed=2), nx.star_graph(20))):
        G = graphkit.as_graph(H)
        prio = mis.ecl_priorities(G.indptr, seed)[0] if method == "ecl" else mis.luby_priorities(G.n, seed)
        greedy = mis.greedy_mis_cpu(G.indptr, G.indices, prio)
        api = graphkit.maximal_independent_set(G, method=method, seed=seed, device="cpu").indices
        assert np.array_equal(np.flatnonzero(greedy), api)
        assert np.array_equal(_sync_rounds(G, prio), greedy)
        for _ in range(3):
            assert np.array_equal(_async_sim(G, prio, rng), greedy)


@pytest.mark.parametrize("method", ["ecl", "luby"])
def test_relaxation_equals_greedy_on_larger_graphs(method):
    from kernels import mis

    for G in (gen.uniform_random(20000, 6, seed=3), gen.rmat(13, 8, seed=1), gen.grid2d(120, 130),
              gen.road_like(20000, seed=2)):
        for seed in (0, 7):
            prio = mis.ecl_priorities(G.indptr, seed)[0] if method == "ecl" else mis.luby_priorities(G.n, seed)
            fast = (mis.ecl_mis_cpu if method == "ecl" else mis.luby_mis_cpu)(G.indptr, G.indices, seed)
            assert np.array_equal(fast, mis.greedy_mis_cpu(G.indptr, G.indices, prio))


def test_ecl_priorities():
    """Burtscher et al. (2018), Section 3: f = d_avg / (d_avg + d(v) - rand), scaled by 126, rounded, odd."""
    from kernels import mis
    from kernels.hashing import hash32_array

    G = graphkit.as_graph(nx.disjoint_union(nx.barabasi_albert_graph(2000, 4, seed=1), nx.empty_graph(5)))
    prio, avg = mis.ecl_priorities(G.indptr, seed=3)
    deg = G.degrees
    assert prio.dtype == np.uint8 and avg == np.float32(2 * G.m / G.n)
    assert np.all(prio[deg == 0] == 254) and np.all(prio[deg > 0] % 2 == 1)
    assert prio[deg > 0].min() >= 1 and prio[deg > 0].max() <= 253
    # lower degree never gets a lower priority
    d, p = deg[deg > 0], prio[deg > 0].astype(int)
    for k in np.unique(d)[:-1]:
        assert p[d == k].min() >= p[d > k].max()
    # the formula in float64 (differences only at rounding boundaries)
    r = (hash32_array(np.arange(G.n), 0, 3) >> np.uint64(8)).astype(np.float64) / 2**24
    f = float(avg) / (float(avg) + deg - r)
    ref = 2 * np.rint(126 * f).astype(int) + 1
    close = np.abs(126 * f - np.floor(126 * f) - 0.5) < 1e-4
    assert np.array_equal(ref[(deg > 0) & ~close], prio[(deg > 0) & ~close].astype(int))
    # degree-1 vertices of a star: 126 * avg / (avg + 1 - r) with avg = 2 * 20 / 21 rounds into the top levels
    star, _ = mis.ecl_priorities(graphkit.as_graph(nx.star_graph(20)).indptr)
    assert star[0] < star[1:].min()


def _has_two_improvement(G, member):
    tight = np.zeros(G.n, dtype=int)
    for v in np.flatnonzero(member):
        tight[G.indices[G.indptr[v]:G.indptr[v + 1]]] += 1
    adj = G.to_scipy().tocsr()
    for x in np.flatnonzero(member):
        cand = [u for u in G.indices[G.indptr[x]:G.indptr[x + 1]] if tight[u] == 1]
        for i, u in enumerate(cand):
            for w in cand[i + 1:]:
                if adj[u, w] == 0:
                    return True
    return False


def test_improve_two_swaps():
    gains = []
    for seed, H in enumerate((nx.gnp_random_graph(300, 0.03, seed=4), nx.random_geometric_graph(300, 0.1, seed=5),
                              nx.barabasi_albert_graph(300, 2, seed=6), nx.grid_2d_graph(12, 13))):
        G = graphkit.as_graph(H)
        base = graphkit.maximal_independent_set(G, seed=seed, device="cpu")
        better = graphkit.maximal_independent_set(G, seed=seed, device="cpu", improve=True)
        assert graphkit.is_maximal_independent_set(G, better.vertices)
        assert better.size >= base.size + better.swaps and base.swaps == 0
        member = np.zeros(G.n, dtype=bool)
        member[better.indices] = True
        assert not _has_two_improvement(G, member)  # a local optimum
        assert _has_two_improvement(G, np.isin(np.arange(G.n), base.indices)) == (better.swaps > 0)
        gains.append(better.size / base.size)
    assert np.mean(gains) > 1.01
    # the classic case: a degree-2 vertex of the set between two non-adjacent free leaves
    from kernels import mis

    G = graphkit.as_graph(nx.path_graph(3))
    member, swaps = mis.two_improve_cpu(G.indptr, G.indices, np.array([False, True, False]))
    assert swaps == 1 and member.tolist() == [True, False, True]
    with pytest.raises(TypeError, match="improve"):
        graphkit.maximal_independent_set(G, improve="yes")


def test_result_object():
    res = graphkit.maximal_independent_set(nx.path_graph(5), device="cpu")
    assert res.method == "ecl" and res.device == "cpu" and res.time >= 0 and len(res) == res.size == 3
    assert "size=3" in repr(res) and "vertices" not in repr(res)
    empty = graphkit.maximal_independent_set(nx.empty_graph(0), device="cpu")
    assert empty.size == 0 and empty.vertices.dtype == np.int64


def test_cli_mis(tmp_path, capsys):
    from graphkit.cli import main

    path = tmp_path / "p.gr"
    path.write_text("p td 5 4\n1 2\n2 3\n3 4\n4 5\n")
    assert main(["mis", str(path), "--device", "cpu"]) == 0
    assert capsys.readouterr().out.split() == ["1", "3", "5"]
    out = tmp_path / "mis.txt"
    assert main(["mis", str(path), "--method", "luby", "--device", "cpu", "--output", str(out)]) == 0
    assert graphkit.is_maximal_independent_set(graphkit.read_graph(path), [int(x) - 1 for x in out.read_text().split()])
    star = tmp_path / "s.gr"  # the centre of a 3-leaf star, given as the set, is swapped out: ECL already avoids it
    star.write_text("p td 4 3\n1 2\n1 3\n1 4\n")
    assert main(["mis", str(star), "--device", "cpu", "--improve"]) == 0
    assert capsys.readouterr().out.split() == ["2", "3", "4"]


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
        if method == "ecl" and G.n:
            from kernels import mis

            indptr, indices, _ = G.device_arrays()
            assert np.array_equal(np.flatnonzero(mis.ecl_mis_gpu(indptr, indices, skip_decided=False).get()),
                                  cpu.vertices)


@pytest.mark.gpu
def test_gpu_priorities_equal_cpu():
    import cupy

    from kernels import mis
    from kernels.nvrtc import get_kernel

    G = gen.rmat(13, 8, seed=5)
    prio, avg = mis.ecl_priorities(G.indptr, seed=4)
    indptr, _, _ = G.device_arrays()
    status = cupy.empty(G.n, dtype=np.uint8)
    get_kernel("mis", "ecl_init", indptr.dtype)((64,), (256,), (np.int32(G.n), indptr, avg, np.uint32(4), status))
    np.testing.assert_array_equal(status.get(), prio)
    # the baseline's 32-bit priorities, hashed on the device
    prio32 = cupy.empty(G.n, dtype=np.uint32)
    get_kernel("mis", "luby_init", indptr.dtype)((64,), (256,), (np.int32(G.n), np.uint32(4), prio32))
    np.testing.assert_array_equal(prio32.get(), mis.luby_priorities(G.n, 4))


@pytest.mark.gpu
def test_gpu_int64_indices_status_and_determinism():
    import cupy

    from kernels import mis

    G = gen.rmat(15, 16, seed=7)
    ref_ecl = mis.ecl_mis_cpu(G.indptr, G.indices, 3)
    ref_luby = mis.luby_mis_cpu(G.indptr, G.indices, 3)
    for dtype in (np.int32, np.int64):
        indptr = cupy.asarray(G.indptr.astype(dtype))
        indices = cupy.asarray(G.indices.astype(dtype))
        for nnz in (None, int(G.indptr[-1])):  # nnz=None reads indptr[-1] from the device
            for skip in (False, True):  # both kernel variants
                for _ in range(3):  # asynchronous, yet the same set every time
                    got = mis.ecl_mis_gpu(indptr, indices, 3, nnz=nnz, skip_decided=skip).get()
                    assert np.array_equal(got, ref_ecl)
        status = cupy.full(G.n, 7, dtype=np.uint8)
        out = mis.ecl_mis_gpu(indptr, indices, 3, status=status)
        assert out is status and set(np.unique(status.get()).tolist()) <= {0, 254}
        assert np.array_equal(status.get() == 254, ref_ecl)
        member, rounds = mis.luby_mis_gpu(indptr, indices, 3)
        assert np.array_equal(member.get(), ref_luby) and rounds >= 1
    with pytest.raises(ValueError, match="status"):
        mis.ecl_mis_gpu(indptr, indices, 3, status=cupy.zeros(G.n, dtype=np.int32))


@pytest.mark.gpu
def test_gpu_seeds_and_coloring():
    G = gen.uniform_random(30000, 10, seed=4)
    for seed in (1, 2):
        cpu = graphkit.maximal_independent_set(G, seed=seed, device="cpu")
        gpu = graphkit.maximal_independent_set(G, seed=seed, device="gpu")
        assert gpu.device == "gpu" and np.array_equal(cpu.vertices, gpu.vertices)
    assert np.array_equal(graphkit.maximal_independent_set(G, device="cpu", improve=True).vertices,
                          graphkit.maximal_independent_set(G, device="gpu", improve=True).vertices)
    H = gen.grid2d(60, 70)
    c_cpu = graphkit.greedy_coloring(H, device="cpu")
    c_gpu = graphkit.greedy_coloring(H, device="gpu")
    assert np.array_equal(c_cpu.colors, c_gpu.colors) and graphkit.is_coloring(H, c_gpu.colors)


def test_labelled_graphs_answer_in_their_labels():
    """A networkx graph's node names come back from every solver, and the checkers take them."""
    import networkx as nx

    H = nx.path_graph([10, 20, 30, 40])
    res = graphkit.maximal_independent_set(H, device="cpu")
    assert res.vertices.tolist() == [10, 40] and res.indices.tolist() == [0, 3]
    assert graphkit.is_maximal_independent_set(H, res.vertices)
    assert not graphkit.is_independent_set(H, [10, 20])
    with pytest.raises(KeyError, match="not a vertex"):
        graphkit.is_independent_set(H, [0, 3])  # ids are not names of this graph
    S = nx.relabel_nodes(nx.cycle_graph(5), {k: f"v{k}" for k in range(5)})
    coloring = graphkit.greedy_coloring(S, device="cpu")
    mapping = coloring.as_dict()
    assert set(mapping) == set(S.nodes) and graphkit.is_coloring(S, mapping)
    assert all(mapping[a] != mapping[b] for a, b in S.edges)
    tuples = nx.grid_2d_graph(2, 3)  # tuple labels stay tuples
    on_grid = graphkit.maximal_independent_set(tuples, device="cpu")
    assert all(isinstance(v, tuple) for v in on_grid.vertices) and graphkit.is_independent_set(tuples, on_grid.vertices)


def test_igraph_input():
    igraph = pytest.importorskip("igraph")
    g = igraph.Graph([(0, 1), (1, 2), (2, 3)])
    assert graphkit.maximal_independent_set(g, device="cpu").vertices.tolist() == [0, 3]
    g.vs["name"] = ["a", "b", "c", "d"]
    g.es["weight"] = [1.0, 5.0, 1.0]
    G = graphkit.as_graph(g)
    assert G.labels == ["a", "b", "c", "d"] and G.weights is not None
    assert graphkit.maximal_independent_set(g, device="cpu").vertices.tolist() == ["a", "d"]
    assert graphkit.matching(g, device="cpu", iterations=10, m=1) == {"b": "c", "c": "b"}
