"""ILUT (SciPy's spilu): M^{-1} = Pc U^{-1} L^{-1} Pr from its factors, the preconditioner
behaves like precond's others, the study's `ilut` is it, and the GPU apply (device
triangular solves, analysis once) equals SciPy's solve."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import matrices
import precond
from kernels.backend import to_device, to_host
from kernels.ilut import ILUT


def _unsymmetric(rng, n=300, density=0.02, dtype=np.float64):
    """A random unsymmetric matrix whose ILUTP pivots and reorders (weak diagonal)."""
    A = sp.random(n, n, density=density, random_state=rng, format="csr")
    A.data = rng.standard_normal(A.nnz)
    return (A + sp.diags(rng.uniform(0.2, 1.0, n))).tocsr().astype(dtype)


@pytest.mark.parametrize("make", ["random", "aniso2"])
def test_solve_is_the_permuted_triangular_solves(rng, make):
    # the identity the GPU apply relies on: Pr A Pc ~ L U, so M^{-1} b = Pc U^{-1} L^{-1} Pr b
    A = _unsymmetric(rng) if make == "random" else matrices.aniso2(20).tocsr()
    f = ILUT(A)
    L, U, perm_r, perm_c = f.factors()
    assert not np.array_equal(perm_c, np.arange(A.shape[0])) or make == "aniso2"
    b = rng.standard_normal(A.shape[0])
    y = np.empty_like(b)
    y[perm_r] = b
    z = spla.spsolve_triangular(U.tocsr(), spla.spsolve_triangular(L.tocsr(), y, lower=True), lower=False)
    expect = f.solve(b)
    np.testing.assert_allclose(z[perm_c], expect, rtol=1e-10, atol=1e-10 * np.abs(expect).max())


def test_preconditioner_interface_and_strength(rng):
    A = matrices.aniso2(32)
    b = A @ np.ones(A.shape[0])
    M = precond.ilut(A)
    assert isinstance(M, precond.ILUTPrecond) and M.shape == A.shape and M.nnz > A.nnz  # fill-in kept
    assert "nnz(L+U)" in repr(M) and "factorize" in M.setup_time
    tight = precond.solve(A, b, M, rtol=1e-8)
    loose = precond.solve(A, b, precond.ilut(A, drop_tol=1e-1, fill_factor=1), rtol=1e-8)
    ilu0 = precond.solve(A, b, precond.ilu0(A), rtol=1e-8)
    assert tight.converged and tight.iterations < ilu0.iterations
    assert loose.converged and loose.iterations > tight.iterations
    with pytest.raises(ValueError):
        M.matvec(np.ones(A.shape[0] + 1))
    with pytest.raises(ValueError):
        precond.ilut(sp.random(4, 5, density=0.5, format="csr"))


@pytest.mark.parametrize("kw", [dict(fill_factor=0), dict(fill_factor=-5), dict(fill_factor=0.001),
                                dict(fill_factor=float("nan")), dict(fill_factor=True), dict(drop_tol=-1),
                                dict(drop_tol=float("inf")), dict(drop_tol="1e-4")])
def test_bad_options_raise_before_superlu(kw):
    # fill_factor 0 aborted the interpreter inside SuperLU and 0.001 never returned
    with pytest.raises(ValueError, match="drop_tol|fill_factor"):
        precond.ilut(matrices.aniso1(8), **kw)


def test_the_study_runs_the_library_ilut():
    from precond.study import _registry

    assert _registry()["ilut"] is precond.ilut


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("make", ["random", "aniso1"])
def test_gpu_solve_equals_cpu(rng, make, dtype):
    A = (_unsymmetric(rng) if make == "random" else matrices.aniso1(24).tocsr()).astype(dtype)
    cpu, gpu = precond.ilut(A), precond.ilut(to_device(A))
    assert "on gpu" in repr(gpu) and set(gpu.setup_time) == {"factorize", "analysis"}
    tol = 1e-3 if dtype == np.float32 else 1e-9
    x = rng.standard_normal(A.shape[0]).astype(dtype)
    expect = cpu.matvec(x)
    scale = np.abs(expect).max()
    np.testing.assert_allclose(to_host(gpu.matvec(to_device(x))), expect, rtol=tol, atol=tol * scale)
    X = rng.standard_normal((A.shape[0], 2)).astype(dtype)
    np.testing.assert_allclose(to_host(gpu.matvec(to_device(X))), cpu.matvec(X), rtol=tol, atol=tol * scale)


@pytest.mark.gpu
def test_gpu_ilut_converges_like_the_cpu():
    import cupy

    A = to_device(matrices.aniso3(64))
    b = A @ cupy.ones(A.shape[0])
    res = precond.solve(A, b, precond.ilut(A), rtol=1e-8)
    host = precond.solve(to_host(A), to_host(b), precond.ilut(to_host(A)), rtol=1e-8)
    assert res.converged and abs(res.iterations - host.iterations) <= 8  # GPU checks every 8 iterations
