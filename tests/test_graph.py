"""Graph type: construction, cleaning, conversions."""
import warnings

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from graphkit import Graph, as_graph


def test_from_edges_symmetrizes_and_sorts():
    G = Graph.from_edges(4, [2, 0, 3], [0, 1, 2])
    assert (G.n, G.m) == (4, 3)
    np.testing.assert_array_equal(G.indptr, [0, 2, 3, 5, 6])
    np.testing.assert_array_equal(G.indices, [1, 2, 0, 0, 3, 2])
    assert G.indices.dtype == np.int32
    u, v = G.edges()
    assert np.all(u < v)


def test_self_loops_and_duplicates_dropped_with_warning():
    with pytest.warns(UserWarning, match="self-loop"):
        G = Graph.from_edges(3, [0, 1], [0, 2])
    assert G.m == 1
    with pytest.warns(UserWarning, match="duplicate"):
        G = Graph.from_edges(3, [0, 1, 1], [1, 0, 2])
    assert G.m == 2


def test_duplicate_weighted_edge_keeps_largest_magnitude():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        G = Graph.from_edges(2, [0, 1], [1, 0], weights=[1.0, -5.0])
    np.testing.assert_array_equal(G.weights, [-5.0, -5.0])


@pytest.mark.parametrize(
    "args, exc",
    [
        ((3, [0], [3]), ValueError),
        ((3, [-1], [1]), ValueError),
        ((3, [0, 1], [1]), ValueError),
        ((3, [0.5], [1.0]), TypeError),
        ((-1, [], []), ValueError),
    ],
)
def test_from_edges_rejects_bad_input(args, exc):
    with pytest.raises(exc):
        Graph.from_edges(*args)


def test_nonfinite_weight_rejected():
    with pytest.raises(ValueError, match="finite"):
        Graph.from_edges(2, [0], [1], weights=[np.nan])


def test_from_scipy_symmetrizes_directed_and_ignores_diagonal():
    A = sp.csr_matrix(np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 0.0], [0.0, -3.0, 1.0]]))
    G = Graph.from_scipy(A)
    assert G.m == 2
    np.testing.assert_array_equal(G.to_scipy().toarray(), [[0, 2, 0], [2, 0, 3], [0, 3, 0]])
    with pytest.raises(ValueError, match="square"):
        Graph.from_scipy(sp.csr_matrix(np.ones((2, 3))))


def test_networkx_roundtrip_with_labels():
    H = nx.Graph()
    H.add_edge("a", "b", weight=2.0)
    H.add_edge("b", "c", weight=1.5)
    H.add_node("d")
    G = Graph.from_networkx(H)
    assert (G.n, G.m) == (4, 2) and G.labels == ["a", "b", "c", "d"]
    back = G.to_networkx()
    assert set(back.nodes) == set(H.nodes)
    assert back["a"]["b"]["weight"] == 2.0


def test_directed_networkx_symmetrized():
    D = nx.DiGraph([(0, 1), (1, 0), (1, 2)])
    G = Graph.from_networkx(D)
    assert G.m == 2


def test_as_graph_dispatch(rng):
    H = nx.gnp_random_graph(30, 0.2, seed=1)
    G = as_graph(H)
    assert G.m == H.number_of_edges()
    assert as_graph(G) is G
    A = nx.to_scipy_sparse_array(H, format="csr")
    assert as_graph(sp.csr_matrix(A)) == Graph.from_scipy(sp.csr_matrix(A), weighted=False)
    with pytest.raises(TypeError):
        as_graph(42)


def test_subgraph_and_complement():
    H = nx.cycle_graph(6)
    G = as_graph(H)
    S = G.subgraph([0, 1, 2])
    assert (S.n, S.m) == (3, 2)
    C = G.complement()
    assert C.m == 6 * 5 // 2 - 6
    assert nx.is_isomorphic(C.to_networkx(), nx.complement(H))


def test_empty_graph():
    G = Graph.from_edges(0, [], [])
    assert (G.n, G.m) == (0, 0)
    E = Graph.from_edges(5, np.array([], dtype=int), np.array([], dtype=int))
    assert E.m == 0 and np.all(E.degrees == 0)


@pytest.mark.gpu
def test_device_arrays_cached():
    G = as_graph(nx.path_graph(10))
    first = G.device_arrays()
    assert G.device_arrays() is first
    np.testing.assert_array_equal(first[1].get(), G.indices)
