"""kernels.graph: the weight graph |A| - diag(A), the contraction of matched pairs and the
CSR builder / R-MAT sampler of edge lists, CPU and GPU."""
import numpy as np
import pytest
import scipy.sparse as sp

import matrices
import graphkit
from kernels.graph import abs_graph, csr_from_edges, is_symmetric, offdiag_abs, rmat_edges


def _random_matrix(rng, n=60, density=0.1, symmetric=False, dtype=np.float64):
    A = sp.random(n, n, density=density, random_state=int(rng.integers(1 << 30)), format="csr")
    A.data -= 0.5
    if symmetric:
        A = A + A.T
    return (A + sp.eye(n) * 3).tocsr().astype(dtype)


def test_offdiag_abs_drops_diagonal_and_zeros():
    # row 0 stores an explicit zero at column 2
    A = sp.csr_matrix(
        (np.array([5.0, -2.0, 0.0, -1.0, 3.0, 4.0, 7.0]), np.array([0, 1, 2, 1, 2, 0, 2]), np.array([0, 3, 5, 7])),
        shape=(3, 3),
    )
    W = offdiag_abs(A)
    np.testing.assert_array_equal(W.toarray(), [[0, 2, 0], [0, 0, 3], [4, 0, 0]])
    assert W.has_sorted_indices


def test_abs_graph_symmetrizes_unsymmetric(rng):
    # an unsymmetric pattern (transpose and sum) and a symmetric one (summed in place)
    for A in (_random_matrix(rng), matrices.convection_diffusion3d(5)):
        W = abs_graph(A)
        dense = np.abs(A.toarray())
        np.fill_diagonal(dense, 0)
        np.testing.assert_allclose(W.toarray(), dense + dense.T)
        assert is_symmetric(W)


def test_abs_graph_keeps_symmetric(rng):
    A = _random_matrix(rng, symmetric=True)
    dense = np.abs(A.toarray())
    np.fill_diagonal(dense, 0)
    np.testing.assert_allclose(abs_graph(A).toarray(), dense)


def test_abs_graph_complex_and_dtype():
    A = sp.csr_matrix(np.array([[1, 3 + 4j], [3 + 4j, 1]], dtype=np.complex128))
    W = abs_graph(A)
    assert W.dtype == np.float64
    np.testing.assert_allclose(W.toarray(), [[0, 5], [5, 0]])
    assert abs_graph(sp.csr_matrix(np.eye(2, dtype=np.float32))).dtype == np.float32


def test_abs_graph_rejects_nonsquare():
    with pytest.raises(ValueError, match="square"):
        abs_graph(sp.csr_matrix(np.ones((2, 3))))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("symmetric", [True, False])
def test_abs_graph_gpu_equals_cpu(rng, dtype, symmetric):
    from kernels.backend import to_device

    A = _random_matrix(rng, n=500, density=0.02, symmetric=symmetric, dtype=dtype)
    W_cpu = abs_graph(A)
    W_gpu = abs_graph(to_device(A)).get()
    assert W_gpu.dtype == dtype
    np.testing.assert_array_equal(W_gpu.indptr, W_cpu.indptr)
    np.testing.assert_array_equal(W_gpu.indices, W_cpu.indices)
    np.testing.assert_array_equal(W_gpu.data, W_cpu.data)


def test_contract_pairs_equals_restriction_product(rng):
    """Contracting matched pairs = R W R^T without its diagonal (R sums each pair), with
    the coarse numbering in the order of the smaller members."""
    import scipy.sparse as sp

    from kernels.graph import abs_graph, contract_pairs
    from kernels.factor import factor

    for A in (matrices.convection_diffusion3d(6), matrices.aniso2(15), matrices.poisson2d(9)):
        W = abs_graph(A)
        mate = factor(W, n=1, symmetric=True).neighbors[:, 0]
        Wc, coarse, members = contract_pairs(W, mate)
        N = W.shape[0]
        rep = np.where((mate >= 0) & (mate < np.arange(N)), mate, np.arange(N))
        reps, expected_coarse = np.unique(rep, return_inverse=True)
        np.testing.assert_array_equal(coarse, expected_coarse)
        np.testing.assert_array_equal(members[:, 0], reps)
        np.testing.assert_array_equal(members[:, 1], np.where(mate[reps] >= 0, mate[reps], -1))
        R = sp.csr_matrix((np.ones(N), (coarse, np.arange(N))), shape=(len(reps), N))
        ref = (R @ W @ R.T).tolil()
        ref.setdiag(0)
        ref = ref.tocsr()
        ref.eliminate_zeros()
        ref.sort_indices()
        np.testing.assert_array_equal(Wc.indptr, ref.indptr)
        np.testing.assert_array_equal(Wc.indices, ref.indices)
        np.testing.assert_allclose(Wc.data, ref.data, rtol=1e-14)
    triangle = sp.csr_matrix(np.ones((3, 3)) - np.eye(3))
    with pytest.raises(ValueError, match="matching"):
        contract_pairs(triangle, np.array([1, 2, 0]))
    with pytest.raises(ValueError, match="matching"):
        contract_pairs(triangle, np.array([-2, -1, -1]))
    with pytest.raises(ValueError, match="length"):
        contract_pairs(triangle, np.array([-1, -1]))
    with pytest.raises(ValueError, match="square"):
        contract_pairs(sp.csr_matrix(np.ones((2, 3))), np.array([-1, -1]))


@pytest.mark.parametrize("on_gpu", [False, pytest.param(True, marks=pytest.mark.gpu)], ids=["cpu", "gpu"])
def test_contract_pairs_from_matrix_equals_weight_graph(on_gpu):
    """contract_pairs(A, from_matrix=True) contracts |A| - diag(A) read off A (explicit zeros
    are no edges) into the weight graph's contraction, bit for bit, on the matrix that the
    factor's weight_source names (A itself, or A' + A'^T on its pattern)."""
    from kernels.backend import to_device, to_host
    from kernels.graph import abs_graph, contract_pairs
    from kernels.factor import factor

    def with_zeros(A):
        A = A.tocsr().copy()
        A.data[::5] = 0  # explicit zeros, on the diagonal too
        return A

    for A in (with_zeros(matrices.random_diffusion2d(20, seed=1)), with_zeros(matrices.convection_diffusion3d(7)),
              matrices.aniso2(16).astype(np.float32)):
        A = to_device(A) if on_gpu else A
        f = factor(A, n=1)
        M, from_matrix = f.weight_source()
        assert from_matrix
        mate = f.neighbors[:, 0]
        got = contract_pairs(M, mate, from_matrix=True, check=False)
        want = contract_pairs(abs_graph(M, symmetric=True), mate)
        for g, w in zip((got[0].indptr, got[0].indices, got[0].data, got[1], got[2]),
                        (want[0].indptr, want[0].indices, want[0].data, want[1], want[2])):
            np.testing.assert_array_equal(to_host(g), to_host(w))


@pytest.mark.gpu
@pytest.mark.parametrize("itype", [np.int32, np.int64])
def test_gpu_contract_pairs_equals_cpu(itype):
    """The one-thread-per-coarse-row kernels sum in the CPU twin's order: the same matrix."""
    import cupy

    from kernels.backend import to_device
    from kernels.graph import contract_pairs
    from kernels.factor import factor

    for A in (matrices.convection_diffusion3d(12), matrices.aniso2(40), matrices.random_diffusion2d(30, seed=3),
              matrices.elasticity2d(20).astype(np.float32)):
        W = abs_graph(A)
        mate = factor(W, n=1, symmetric=True).neighbors[:, 0]
        Wc, coarse, members = contract_pairs(W, mate)
        Wd = to_device(W)
        Wd = type(Wd)((Wd.data, Wd.indices.astype(itype), Wd.indptr.astype(itype)), shape=W.shape)
        Wcd, coarse_d, members_d = contract_pairs(Wd, cupy.asarray(mate))
        assert Wcd.shape == Wc.shape and Wcd.dtype == Wc.dtype and Wcd.has_canonical_format
        np.testing.assert_array_equal(Wcd.indptr.get(), Wc.indptr)
        np.testing.assert_array_equal(Wcd.indices.get(), Wc.indices)
        np.testing.assert_array_equal(Wcd.data.get(), Wc.data)
        np.testing.assert_array_equal(coarse_d.get(), coarse)
        np.testing.assert_array_equal(members_d.get(), members)
    with pytest.raises(ValueError, match="matching"):
        contract_pairs(to_device(sp.csr_matrix(np.ones((3, 3)) - np.eye(3))), cupy.asarray([1, 2, 0]))


def test_rmat_edges_quadrant_frequencies():
    scale, m = 10, 200_000
    u, v = rmat_edges(scale, m, 0.57, 0.19, 0.19, seed=5)
    assert u.min() >= 0 and max(u.max(), v.max()) < 1 << scale
    for bit in (0, scale - 1):  # every level picks quadrant (row bit, column bit) independently
        row, col = (u >> bit) & 1, (v >> bit) & 1
        freq = [np.mean((row == r) & (col == c)) for r, c in ((0, 0), (0, 1), (1, 0), (1, 1))]
        np.testing.assert_allclose(freq, [0.57, 0.19, 0.19, 0.05], atol=0.005)
    u2, v2 = rmat_edges(scale, m, 0.57, 0.19, 0.19, seed=5)
    assert np.array_equal(u, u2) and np.array_equal(v, v2)


def test_csr_from_edges_equals_graph_from_edges():
    rng = np.random.default_rng(0)
    for n, m in ((1, 3), (7, 40), (300, 2000), (2000, 500)):
        u = rng.integers(0, n, m)
        v = rng.integers(0, n, m)
        u[: m // 10] = v[: m // 10]  # self-loops
        u, v = np.concatenate([u, v[:50]]), np.concatenate([v, u[:50]])  # duplicates in both orientations
        indptr, indices = csr_from_edges(n, u, v)
        with pytest.warns(UserWarning) if m > 5 else __import__("contextlib").nullcontext():
            ref = graphkit.Graph.from_edges(n, u, v)
        assert np.array_equal(indptr, ref.indptr) and np.array_equal(indices, ref.indices)
    # a hub row longer than the insertion-sort cut-off
    hub_u = np.zeros(100, dtype=np.int64)
    hub_v = np.random.default_rng(1).permutation(100)
    indptr, indices = csr_from_edges(101, hub_u, hub_v)
    assert indices[: indptr[1]].tolist() == list(range(1, 100))
