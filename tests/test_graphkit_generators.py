"""graphkit.generators: the benchmark graphs are simple CSR graphs of the asked size and shape."""
import numpy as np
import pytest
import scipy.sparse as sp

import graphkit
from graphkit import generators as gen


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


def test_road_like():
    R = gen.road_like(10000, seed=1)
    assert R.n == 10000 and 2.0 < R.degrees.mean() < 3.5
    assert_simple_csr(R)
    assert R.degrees.max() <= 6  # planar grid plus one diagonal per cell: at most 6 neighbours
    odd = gen.road_like(997, seed=2)  # n not a rectangle: vertices beyond n are cut off
    assert odd.n == 997
    assert_simple_csr(odd)


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
