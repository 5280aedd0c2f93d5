"""ILU(0): the factors are those of the definition (same pattern as A, no pivoting), the
preconditioner behaves like precond's others, and the CPU and GPU factors agree."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import matrices
import precond
from kernels.backend import to_device, to_host
from kernels.ilu0 import ILU0, ilu0_factor, ilu0_solve


def _random_matrix(rng, n, density, dtype=np.float64, dominant=True):
    """A random unsymmetric sparse matrix with a full diagonal (diagonally dominant by default)."""
    A = sp.random(n, n, density=density, random_state=rng, format="csr")
    A.data = rng.standard_normal(A.nnz)
    if np.dtype(dtype).kind == "c":
        A = A + 1j * sp.random(n, n, density=density, random_state=rng, format="csr")
    row_sums = np.asarray(abs(A).sum(axis=1)).ravel()
    A = (A + sp.diags(row_sums + 1 if dominant else rng.standard_normal(n) + 3)).tocsr()
    A.sort_indices()
    return A.astype(dtype)


def _reference_ilu0(A):
    """Textbook ILU(0) on a dense copy (KIJ order, updates only inside the pattern)."""
    a = A.toarray().astype(np.result_type(A.dtype, np.float64) if A.dtype.kind == "f" else A.dtype)
    pattern = np.zeros(A.shape, dtype=bool)
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    pattern[rows, A.indices] = True
    n = A.shape[0]
    for k in range(n - 1):
        for i in range(k + 1, n):
            if pattern[i, k]:
                a[i, k] /= a[k, k]
                for j in range(k + 1, n):
                    if pattern[i, j] and pattern[k, j]:
                        a[i, j] -= a[i, k] * a[k, j]
    return np.tril(a, -1) * pattern + np.eye(n), np.triu(a) * pattern


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_factors_match_the_definition(rng, dtype):
    A = _random_matrix(rng, 60, 0.08, dtype)
    L, U = ILU0(A).factors()
    L_ref, U_ref = _reference_ilu0(A)
    tol = 1e-4 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(L.toarray(), L_ref, rtol=tol, atol=tol)
    np.testing.assert_allclose(U.toarray(), U_ref, rtol=tol, atol=tol)
    # ILU(0)'s defining property: (L U)_ij = a_ij on the pattern of A, no fill-in stored
    LU = (L @ U).toarray()
    mask = A.toarray() != 0
    np.testing.assert_allclose(LU[mask], A.toarray()[mask], rtol=tol, atol=tol)
    assert L.nnz + U.nnz - A.shape[0] == A.nnz


def test_no_fill_is_an_exact_factorization(rng):
    """For a tridiagonal matrix (no fill-in exists) ILU(0) is LU: one apply solves."""
    n = 200
    A = sp.diags([rng.uniform(-1, 1, n - 1), rng.uniform(3, 4, n), rng.uniform(-1, 1, n - 1)], [-1, 0, 1],
                 format="csr")
    x = rng.standard_normal(n)
    np.testing.assert_allclose(ILU0(A).solve(A @ x), x, rtol=1e-10)


def test_not_the_superlu_ilutp():
    """SciPy's spilu(fill_factor=1, drop_tol=0) pivots and reorders columns, so its factors
    are not ILU(0)'s; ours satisfy the definition on ANISO1 (the study's peer)."""
    A = matrices.aniso1(16)
    L, U = ILU0(A).factors()
    mask = A.toarray() != 0
    np.testing.assert_allclose((L @ U).toarray()[mask], A.toarray()[mask], rtol=1e-12, atol=1e-12)
    assert abs(L @ U - A).max() > 1e-3  # ILU(0) drops fill: not the exact LU


def test_solve_vector_and_block(rng):
    A = _random_matrix(rng, 80, 0.05)
    lu, diag = ilu0_factor(A.indptr, A.indices, A.data)
    B = rng.standard_normal((80, 3))
    out = ilu0_solve(A.indptr, A.indices, lu, diag, B)
    for j in range(3):
        np.testing.assert_allclose(out[:, j], ilu0_solve(A.indptr, A.indices, lu, diag, B[:, j]))
    L, U = ILU0(A).factors()
    np.testing.assert_allclose(U @ out[:, 0], spla.spsolve_triangular(L, B[:, 0], lower=True), rtol=1e-10)


def test_input_data_untouched(rng):
    A = _random_matrix(rng, 30, 0.1)
    before = A.data.copy()
    ilu0_factor(A.indptr, A.indices, A.data)
    np.testing.assert_array_equal(A.data, before)


def test_missing_diagonal_raises():
    A = sp.csr_matrix(np.array([[1.0, 2.0, 0], [3.0, 0, 1.0], [0, 1.0, 1.0]]))
    with pytest.raises(ValueError, match=r"u\[1,1\] is missing"):
        ILU0(A)


def test_zero_pivot_raises():
    # u_11 = 1 - (1)(1)/1 = 0
    A = sp.csr_matrix(np.array([[1.0, 1.0], [1.0, 1.0]]))
    with pytest.raises(ValueError, match=r"u\[1,1\] is zero"):
        ILU0(A)


def test_unsorted_and_duplicate_entries():
    """Duplicates are summed and rows sorted before factorizing (the pattern of A)."""
    from precond.ilu import ilu0

    indptr = np.array([0, 3, 5, 7])
    indices = np.array([2, 0, 0, 1, 0, 2, 1])  # row 0 unsorted with a duplicate (0, 0)
    data = np.array([1.0, 2.0, 2.0, 4.0, 1.0, 5.0, 1.0])
    A = sp.csr_matrix((data, indices, indptr), shape=(3, 3))
    M = ilu0(A)
    B = A.copy()
    B.sum_duplicates()
    np.testing.assert_allclose(M.matvec(np.ones(3)), ILU0(B).solve(np.ones(3)))


def test_preconditioner_interface():
    from precond.ilu import ILU0Precond, ilu0

    A = matrices.aniso2(24)
    M = ilu0(A)
    assert isinstance(M, ILU0Precond)
    assert M.shape == A.shape and M.dtype == A.dtype and M.nnz == A.nnz
    assert list(M.setup_time) == ["factorize"] and M.setup_time["factorize"] >= 0
    assert "ILU0Precond" in repr(M) and "on cpu" in repr(M)
    x = np.ones(A.shape[0])
    op = M.aslinearoperator()
    np.testing.assert_allclose(op @ x, M.matvec(x))
    with pytest.raises(ValueError, match="does not match"):
        M.matvec(np.ones(A.shape[0] - 1))
    with pytest.raises(TypeError):
        ilu0(A.toarray())
    with pytest.raises(ValueError, match="square"):
        ilu0(sp.random(4, 5, density=0.5, format="csr"))


@pytest.mark.parametrize("gen", ["aniso1", "aniso2", "aniso3"])
def test_converges_faster_than_the_tridiagonal_preconditioners(gen):
    """The issue's measurement, at a smaller size: true ILU(0) needs fewer BiCGStab
    iterations than AlgTriScal on the anisotropic problems."""
    from precond.ilu import ilu0
    from precond.study import true_solution

    A = matrices.get(gen, n=64)
    b = A @ true_solution(A.shape[0])
    it_ilu = precond.solve(A, b, ilu0(A), rtol=1e-8).iterations
    it_alg = precond.solve(A, b, precond.algebraic_tridiagonal(A), rtol=1e-8).iterations
    assert it_ilu < it_alg


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("make", ["random", "aniso1", "convection_diffusion3d"])
def test_gpu_factors_equal_cpu(rng, make, dtype):
    from precond.ilu import ilu0

    A = (_random_matrix(rng, 300, 0.02) if make == "random" else matrices.get(make, n=12)).astype(dtype)
    cpu = ilu0(A)
    gpu = ilu0(to_device(A))
    assert "on gpu" in repr(gpu) and set(gpu.setup_time) == {"factorize", "analysis"}
    (Lc, Uc), (Lg, Ug) = cpu.factorization.factors(), gpu.factorization.factors()
    tol = 2e-4 if dtype == np.float32 else 1e-10
    assert Lc.nnz == Lg.nnz and Uc.nnz == Ug.nnz
    np.testing.assert_array_equal(Lc.indices, Lg.indices)
    np.testing.assert_array_equal(Uc.indices, Ug.indices)
    np.testing.assert_allclose(Lg.data, Lc.data, rtol=tol, atol=tol)
    np.testing.assert_allclose(Ug.data, Uc.data, rtol=tol, atol=tol)
    x = rng.standard_normal(A.shape[0]).astype(dtype)
    np.testing.assert_allclose(to_host(gpu.matvec(to_device(x))), cpu.matvec(x), rtol=50 * tol, atol=50 * tol)
    X = rng.standard_normal((A.shape[0], 2)).astype(dtype)
    np.testing.assert_allclose(to_host(gpu.matvec(to_device(X))), cpu.matvec(X), rtol=50 * tol, atol=50 * tol)


@pytest.mark.gpu
def test_gpu_zero_pivot_raises():
    from precond.ilu import ilu0

    with pytest.raises(ValueError, match="pivot"):
        ilu0(to_device(sp.csr_matrix(np.array([[1.0, 1.0], [1.0, 1.0]]))))
    with pytest.raises(ValueError, match="pivot"):
        ilu0(to_device(sp.csr_matrix(np.array([[1.0, 2.0, 0], [3.0, 0, 1.0], [0, 1.0, 1.0]]))))


@pytest.mark.gpu
def test_gpu_solve_converges():
    from precond.ilu import ilu0

    A = to_device(matrices.aniso1(64))
    import cupy

    b = A @ cupy.ones(A.shape[0])
    res = precond.solve(A, b, ilu0(A), rtol=1e-8)
    assert res.converged
    host = precond.solve(to_host(A), to_host(b), ilu0(to_host(A)), rtol=1e-8)
    assert abs(res.iterations - host.iterations) <= 2
