"""Preconditioner objects in BiCGStab: residuals, the paper's ANISO argument, dtypes, GPU."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import matrices
import precond
from precond.study import true_solution

ALL = [precond.jacobi, precond.tridiagonal, precond.algebraic_tridiagonal, precond.algebraic_block_tridiagonal]


def _iters(A, M, rtol=1e-8):
    b = A @ true_solution(A.shape[0], A.dtype)
    res = precond.solve(A, b, M, rtol=rtol, maxiter=5000)
    assert res.converged
    x = res.x
    assert np.linalg.norm(b - A @ x) <= 1.5 * rtol * np.linalg.norm(b)
    return res.iterations


@pytest.mark.parametrize("make", ALL, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-8), (np.float32, 1e-4)])
@pytest.mark.parametrize("gen", [matrices.aniso2, matrices.poisson2d], ids=lambda g: g.__name__)
def test_residuals_and_dtypes(make, dtype, rtol, gen):
    A = gen(40, dtype=dtype)
    M = make(A)
    assert M.dtype == dtype and M.shape == A.shape
    assert M.matvec(np.ones(A.shape[0], dtype)).dtype == dtype
    _iters(A, M, rtol)


def test_paper_argument_on_aniso():
    n = 64
    A2, A3 = matrices.aniso2(n), matrices.aniso3(n)
    none2 = _iters(A2, None)
    tri2, alg2 = _iters(A2, precond.tridiagonal(A2)), _iters(A2, precond.algebraic_tridiagonal(A2))
    assert alg2 < 0.8 * tri2  # AlgTriScal finds the strong couplings TriScal misses
    assert alg2 < none2 and alg2 < _iters(A2, precond.jacobi(A2))
    tri3, alg3 = _iters(A3, precond.tridiagonal(A3)), _iters(A3, precond.algebraic_tridiagonal(A3))
    assert abs(alg3 - tri3) <= 0.25 * tri3  # ANISO3: the ordering already has them
    assert _iters(A2, precond.algebraic_block_tridiagonal(A2)) < none2


def test_block_preconditioner_on_coupled_problem():
    A = matrices.elasticity2d(24)
    none = _iters(A, None)
    blk = precond.algebraic_block_tridiagonal(A, m="auto")
    assert blk.n_blocks < A.shape[0]
    assert _iters(A, blk) < none


def test_m_auto_keeps_best_coverage():
    A = matrices.random_diffusion2d(40, seed=2)
    auto = precond.algebraic_tridiagonal(A, m="auto")
    covs = [precond.algebraic_tridiagonal(A, m=m).weight_coverage for m in (1, 5)]
    assert auto.weight_coverage == pytest.approx(max(covs))


@pytest.mark.parametrize("make", ALL, ids=lambda f: f.__name__)
def test_apply_pure_and_operator(make):
    A = matrices.aniso3(20)
    M = make(A)
    x = np.random.default_rng(0).standard_normal(A.shape[0])
    keep = x.copy()
    y1, y2 = M.matvec(x), M.matvec(x)
    assert y1 is not x and np.array_equal(x, keep) and np.array_equal(y1, y2)
    op = M.aslinearoperator()
    assert isinstance(op, spla.LinearOperator) and op.dtype == A.dtype
    np.testing.assert_array_equal(op @ x, y1)
    x_sol, info = spla.bicgstab(A, A @ keep, rtol=1e-8, M=op)
    assert info == 0
    assert type(M).__name__ in repr(M) and "setup" in repr(M)
    assert set(M.setup_time) and all(t >= 0 for t in M.setup_time.values())


def test_tridiagonal_preconditioner_exact_on_tridiagonal_matrix():
    N = 200
    A = sp.diags([np.full(N - 1, -1.0), np.full(N, 2.5), np.full(N - 1, -1.2)], [-1, 0, 1], format="csr")
    for make in (precond.tridiagonal, precond.algebraic_tridiagonal):
        M = make(A)
        b = np.arange(N, dtype=float)
        np.testing.assert_allclose(A @ M.matvec(b), b, atol=1e-10)


def test_bad_input():
    with pytest.raises(ValueError, match="square"):
        precond.algebraic_tridiagonal(sp.csr_matrix(np.ones((3, 4))))
    with pytest.raises(ValueError, match="NaN"):
        precond.tridiagonal(sp.csr_matrix(np.array([[1.0, np.nan], [0.0, 1.0]])))
    with pytest.raises(TypeError):
        precond.algebraic_tridiagonal(np.eye(3))
    with pytest.raises(TypeError, match="floating"):
        precond.jacobi(sp.csr_matrix(np.eye(3, dtype=np.int64)))
    with pytest.warns(RuntimeWarning, match="pivot"):
        M = precond.tridiagonal(sp.csr_matrix(np.array([[0.0, 0.0], [0.0, 1.0]])))
    assert np.all(np.isfinite(M.matvec(np.ones(2))))
    A = matrices.poisson2d(4)
    with pytest.raises(TypeError, match="dtype mismatch"):
        precond.solve(A, np.ones(16, dtype=np.float32), precond.jacobi(A))


@pytest.mark.gpu
@pytest.mark.parametrize("make", [precond.jacobi, precond.tridiagonal, precond.algebraic_tridiagonal,
                                  precond.algebraic_block_tridiagonal], ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gpu_equals_cpu(make, dtype):
    import cupy
    import cupyx.scipy.sparse.linalg as cspla

    from kernels.backend import to_device

    A = matrices.aniso2(120, dtype=dtype)
    Ad = to_device(A)
    Mc, Mg = make(A), make(Ad)
    x = np.random.default_rng(1).standard_normal(A.shape[0]).astype(dtype)
    xd = cupy.asarray(x)
    yg = Mg.matvec(xd)
    assert isinstance(yg, cupy.ndarray) and bool((xd == cupy.asarray(x)).all())
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(yg.get(), Mc.matvec(x), rtol=tol, atol=tol)
    assert isinstance(Mg.aslinearoperator(), cspla.LinearOperator)
    b = Ad @ cupy.asarray(true_solution(A.shape[0], dtype))
    res = precond.solve(Ad, b, Mg, rtol=1e-4 if dtype == np.float32 else 1e-8)
    assert res.converged
    x_cupyx, info = cspla.bicgstab(Ad, b, rtol=1e-4, M=Mg.aslinearoperator())
    assert info == 0


@pytest.mark.gpu
@pytest.mark.parametrize("make", ALL, ids=lambda f: f.__name__)
def test_gpu_setup_time_from_events(make):
    """On the GPU the phases are timed with CUDA events (no synchronization between them):
    every phase is positive and together they fit inside the wall time of the set-up."""
    import time

    import cupy

    from kernels.backend import to_device

    Ad = to_device(matrices.aniso2(200))
    make(Ad)  # compile
    cupy.cuda.Device().synchronize()
    t0 = time.perf_counter()
    M = make(Ad)
    cupy.cuda.Device().synchronize()
    wall = time.perf_counter() - t0
    assert M.setup_time and all(t > 0 for t in M.setup_time.values())
    assert M.total_setup_time <= wall


def random_stencil9(n, seed=0):
    """Diagonally dominant 9-point matrix on an n x n grid with random symmetric weights: the
    contraction of its matched pairs sums up to four different weights per coarse edge."""
    rng = np.random.default_rng(seed)
    grid = np.arange(n * n).reshape(n, n)
    pairs = [(grid[:, :-1], grid[:, 1:]), (grid[:-1, :], grid[1:, :]), (grid[:-1, :-1], grid[1:, 1:]),
             (grid[:-1, 1:], grid[1:, :-1])]
    i = np.concatenate([a.ravel() for a, _ in pairs])
    j = np.concatenate([b.ravel() for _, b in pairs])
    w = -rng.uniform(0.1, 1.0, len(i))
    off = sp.csr_matrix((np.r_[w, w], (np.r_[i, j], np.r_[j, i])), shape=(n * n, n * n))
    return (off + sp.diags(1.0 - np.asarray(off.sum(axis=1)).ravel())).tocsr()


def test_block_coarse_graph_with_rounding_asymmetry():
    """The two rows of a coarse edge add its fine weights in different orders, so the coarse
    graph is symmetric only up to the last bits: the coarse factor must not assume it."""
    from kernels.graph import abs_graph, contract_pairs

    A = random_stencil9(30)
    W = abs_graph(A)
    Wc, _, _ = contract_pairs(W, precond.factor(W, n=1).neighbors[:, 0])
    assert (abs(Wc - Wc.T).data > 0).any()  # the case this test is about
    M = precond.algebraic_block_tridiagonal(A)
    res = precond.solve(A, A @ np.ones(A.shape[0]), M, rtol=1e-8)
    assert res.converged and M.n_blocks < A.shape[0]


@pytest.mark.gpu
@pytest.mark.parametrize("gen", [matrices.elasticity2d, matrices.convection_diffusion3d, random_stencil9],
                         ids=lambda g: g.__name__)
def test_gpu_block_setup_on_device_equals_cpu(gen):
    """AlgTriBlock's whole setup (matching, contraction, coarse forest, block extraction)
    runs on the GPU and builds the CPU's system: same blocks, paths, ghosts and coverage."""
    import cupy

    from kernels.backend import to_device

    A = gen(24)
    Mc, Mg = precond.algebraic_block_tridiagonal(A), precond.algebraic_block_tridiagonal(to_device(A))
    assert (Mg.n_blocks, Mg.n_paths, Mg.n_ghosts, Mg.m) == (Mc.n_blocks, Mc.n_paths, Mc.n_ghosts, Mc.m)
    assert Mg.weight_coverage == pytest.approx(Mc.weight_coverage, rel=1e-12)
    assert isinstance(Mg.solver.gather, cupy.ndarray)
    x = np.random.default_rng(4).standard_normal(A.shape[0])
    np.testing.assert_allclose(Mg.matvec(cupy.asarray(x)).get(), Mc.matvec(x), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("on_gpu", [False, pytest.param(True, marks=pytest.mark.gpu)], ids=["cpu", "gpu"])
def test_indefinite_tridiagonal_part_of_spd_matrix_warns(on_gpu, spd_triangles):
    from kernels.backend import to_device

    A = spd_triangles(40)
    A = to_device(A) if on_gpu else A
    for make in (precond.tridiagonal, precond.algebraic_tridiagonal):
        with pytest.warns(RuntimeWarning, match="40 negative pivot.*diagonal has 0 negative entries"):
            M = make(A)
        assert M.negative_pivots == 40
    with warnings.catch_warnings():  # its 2x2 blocks and ghosts hold each whole triangle: definite
        warnings.simplefilter("error")
        assert precond.algebraic_block_tridiagonal(A).negative_pivots == 0


@pytest.mark.parametrize("make", ALL[1:], ids=lambda f: f.__name__)
def test_definite_matrices_do_not_warn(make):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for A in (matrices.aniso2(20), -matrices.poisson2d(20)):  # positive and negative definite
            M = make(A)
            assert M.negative_pivots == (0 if A.diagonal()[0] > 0 else A.shape[0])


def test_bcsstk25_tridiagonal_part_is_indefinite(shared_data):
    """The SPD stiffness matrix on which the tridiagonal preconditioners stall."""
    from matrices.mmio import read_matrix

    path = shared_data / "matrices" / "bcsstk25.mtx"
    if not path.exists():
        pytest.skip("bcsstk25.mtx is not in the shared data")
    A = read_matrix(path).tocsr()
    with pytest.warns(RuntimeWarning, match="negative pivot"):
        M = precond.algebraic_tridiagonal(A)
    assert M.negative_pivots > 0


def test_sparse_arrays_are_accepted_like_matrices():
    """SciPy's csr_array (what SciPy recommends for new code) gives what csr_matrix gives."""
    A = matrices.aniso2(20)
    B = sp.csr_array(A)
    b = A @ np.ones(A.shape[0])
    for make in (precond.jacobi, precond.tridiagonal, precond.algebraic_tridiagonal,
                 precond.algebraic_block_tridiagonal):
        np.testing.assert_array_equal(make(B).matvec(b), make(A).matvec(b))
    res = precond.solve(B, b, M=precond.algebraic_tridiagonal(B))
    assert res.converged
    fa, fb = precond.factor(A), precond.factor(B)
    np.testing.assert_array_equal(fa.neighbors, fb.neighbors)
    assert precond.weight_coverage(B, fb) == precond.weight_coverage(A, fa)
    np.testing.assert_array_equal(precond.linear_forest(B).permutation, precond.linear_forest(A).permutation)


def test_solve_takes_scipys_keyword():
    A = matrices.poisson2d(10)
    b = A @ np.ones(A.shape[0])
    M = precond.jacobi(A)
    by_keyword, by_position = precond.solve(A, b, M=M), precond.solve(A, b, M)
    assert by_keyword.converged and by_keyword.iterations == by_position.iterations
    assert precond.solve(A, b, preconditioner=M).iterations == by_keyword.iterations
    with pytest.raises(TypeError, match="once"):
        precond.solve(A, b, M, preconditioner=M)
