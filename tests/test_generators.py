"""Graph generators (graphkit.generators) and their CSR builder / R-MAT sampler (kernels.mis)."""
import numpy as np
import pytest
import scipy.sparse as sp

import graphkit
from graphkit import generators as gen
from kernels import mis


def assert_simple_csr(G):
    """Sorted rows, no self-loops, no duplicates, symmetric; index dtype as the Graph type wants."""
    indptr, indices = G.indptr, G.indices
    assert indptr[0] == 0 and np.all(np.diff(indptr) >= 0) and indptr[-1] == len(indices)
    rows = np.repeat(np.arange(G.n), np.diff(indptr))
    assert not np.any(rows == indices), "self-loop"
    same_row = rows[1:] == rows[:-1]
    assert np.all(indices[1:][same_row] > indices[:-1][same_row]), "unsorted or duplicate row"
    A = sp.csr_matrix((np.ones(len(indices)), indices, indptr), shape=(G.n, G.n))
    assert (A != A.T).nnz == 0, "not symmetric"


def test_grid2d():
    G = gen.grid2d(4, 5)
    assert (G.n, G.m) == (20, 31)
    assert_simple_csr(G)
    assert sorted(np.bincount(G.degrees).nonzero()[0].tolist()) == [2, 3, 4]
    assert G.indices[G.indptr[0]:G.indptr[1]].tolist() == [1, 5]  # right and down neighbours of the corner
    assert gen.grid2d(3).n == 9  # square by default
    assert (gen.grid2d(1, 1).n, gen.grid2d(1, 1).m) == (1, 0)
    H = graphkit.as_graph(__import__("networkx").grid_2d_graph(6, 7))
    G = gen.grid2d(6, 7)
    assert np.array_equal(np.sort(G.degrees), np.sort(H.degrees)) and G.m == H.m


def test_uniform_random():
    U = gen.uniform_random(5000, 8, seed=1)
    assert U.n == 5000 and 7.5 < U.degrees.mean() <= 8
    assert_simple_csr(U)
    assert np.array_equal(U.indices, gen.uniform_random(5000, 8, seed=1).indices)  # seeded
    assert not np.array_equal(U.indptr, gen.uniform_random(5000, 8, seed=2).indptr)
    assert U.degrees.max() < 30  # Poisson-like degrees, no hubs
    assert gen.uniform_random(10, 0).m == 0


def test_rmat_and_kronecker():
    G = gen.rmat(12, 8, seed=3)
    assert G.n == 4096 and G.m > 4096 and G.degrees.max() > 10 * G.degrees.mean()
    assert_simple_csr(G)
    assert np.array_equal(G.indices, gen.rmat(12, 8, seed=3).indices)
    assert not np.array_equal(G.indptr, gen.rmat(12, 8, seed=4).indptr)
    K = gen.kronecker(12, 8, seed=3)
    assert np.array_equal(K.indptr, G.indptr) and np.array_equal(K.indices, G.indices)
    # a uniform quadrant choice gives a near-regular (Erdos-Renyi) graph
    flat = gen.rmat(12, 8, a=0.25, b=0.25, c=0.25, seed=1)
    assert flat.degrees.max() < 40


def test_rmat_edges_quadrant_frequencies():
    scale, m = 10, 200_000
    u, v = mis.rmat_edges(scale, m, 0.57, 0.19, 0.19, seed=5)
    assert u.min() >= 0 and max(u.max(), v.max()) < 1 << scale
    for bit in (0, scale - 1):  # every level picks quadrant (row bit, column bit) independently
        row, col = (u >> bit) & 1, (v >> bit) & 1
        freq = [np.mean((row == r) & (col == c)) for r, c in ((0, 0), (0, 1), (1, 0), (1, 1))]
        np.testing.assert_allclose(freq, [0.57, 0.19, 0.19, 0.05], atol=0.005)
    u2, v2 = mis.rmat_edges(scale, m, 0.57, 0.19, 0.19, seed=5)
    assert np.array_equal(u, u2) and np.array_equal(v, v2)


def test_road_like():
    R = gen.road_like(10000, seed=1)
    assert R.n == 10000 and 2.0 < R.degrees.mean() < 3.5
    assert_simple_csr(R)
    assert R.degrees.max() <= 6  # planar grid plus one diagonal per cell: at most 6 neighbours
    odd = gen.road_like(997, seed=2)  # n not a rectangle: vertices beyond n are cut off
    assert odd.n == 997
    assert_simple_csr(odd)


def test_csr_from_edges_equals_graph_from_edges():
    rng = np.random.default_rng(0)
    for n, m in ((1, 3), (7, 40), (300, 2000), (2000, 500)):
        u = rng.integers(0, n, m)
        v = rng.integers(0, n, m)
        u[: m // 10] = v[: m // 10]  # self-loops
        u, v = np.concatenate([u, v[:50]]), np.concatenate([v, u[:50]])  # duplicates in both orientations
        indptr, indices = mis.csr_from_edges(n, u, v)
        with pytest.warns(UserWarning) if m > 5 else __import__("contextlib").nullcontext():
            ref = graphkit.Graph.from_edges(n, u, v)
        assert np.array_equal(indptr, ref.indptr) and np.array_equal(indices, ref.indices)
    # a hub row longer than the insertion-sort cut-off
    hub_u = np.zeros(100, dtype=np.int64)
    hub_v = np.random.default_rng(1).permutation(100)
    indptr, indices = mis.csr_from_edges(101, hub_u, hub_v)
    assert indices[: indptr[1]].tolist() == list(range(1, 100))


@pytest.mark.parametrize("call", [lambda: gen.grid2d(0, 3), lambda: gen.grid2d(2.5), lambda: gen.uniform_random(-1),
                                  lambda: gen.rmat(0), lambda: gen.rmat(10, 8, a=0.9, b=0.2),
                                  lambda: gen.rmat(10, 8, a=0.0), lambda: gen.road_like(0),
                                  lambda: gen.uniform_random(10, -1.0),
                                  lambda: gen.uniform_random(10, float("nan")), lambda: gen.rmat(4, -2)])
def test_bad_arguments(call):
    with pytest.raises(ValueError):
        call()


@pytest.mark.slow
def test_paper_sizes():
    """The benchmark's graph sizes (2^23 vertices) build and are simple graphs."""
    U = gen.uniform_random(1 << 23, 8, seed=1)
    assert U.n == 1 << 23 and U.indices.dtype == np.int32 and 7.9 < U.degrees.mean() <= 8
    G = gen.rmat(22, 8, seed=2)
    assert G.n == 1 << 22 and G.degrees.max() > 1000
    assert_simple_csr(gen.road_like(1 << 20, seed=4))
