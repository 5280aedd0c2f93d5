"""Our BiCGStab against SciPy's, info codes, solve() and the Jacobi preconditioner."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import matrices
import precond
from precond.study import true_solution


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-8), (np.float32, 1e-4)])
def test_bicgstab_converges_like_scipy(dtype, tol):
    A = matrices.aniso2(24, dtype=dtype)
    xt = true_solution(A.shape[0], dtype)
    b = A @ xt
    x, info = precond.bicgstab(A, b, rtol=tol, maxiter=2000)
    assert info == 0 and x.dtype == dtype
    assert np.linalg.norm(b - A @ x) <= 1.01 * tol * np.linalg.norm(b)
    x_ref, info_ref = spla.bicgstab(A, b, rtol=tol, maxiter=2000)
    assert info_ref == 0
    assert np.linalg.norm(x - x_ref) / np.linalg.norm(xt) < 1e3 * tol


def test_maxiter_info_and_history():
    A = matrices.poisson2d(30)
    b = A @ np.ones(A.shape[0])
    hist = []
    x, info = precond.bicgstab(A, b, rtol=1e-14, maxiter=3, residuals=hist)
    assert info == 3 and len(hist) == 4
    assert hist[0] == pytest.approx(np.linalg.norm(b))


def _solves(A, b, check_every, **kw):
    hist = []
    x, info = precond.bicgstab(A, b, check_every=check_every, residuals=hist, **kw)
    return x, info, hist


@pytest.mark.parametrize("kw", [dict(rtol=1e-8), dict(rtol=1e-14, maxiter=13), dict(rtol=1e-8, maxiter=1)])
@pytest.mark.parametrize("check_every", [2, 5, 8])
def test_result_does_not_depend_on_check_every(kw, check_every):
    """The solve returns the first iterate that meets the criterion, and its count, however
    rarely the host checks (SciPy's behaviour; a count rounded up to a multiple of
    check_every made the GPU's iteration counts incomparable with the CPU's)."""
    A = matrices.aniso2(24)
    b = A @ true_solution(A.shape[0])
    x1, info1, h1 = _solves(A, b, 1, M=precond.jacobi(A), **kw)
    x, info, h = _solves(A, b, check_every, M=precond.jacobi(A), **kw)
    assert info == info1 and h == h1 and np.array_equal(x, x1)
    if info == 0:
        assert h[-1] <= kw["rtol"] * np.linalg.norm(b) < h[-2]


class _DeviceLikeOps(precond.krylov._HostOps):
    """The host iteration with the GPU's semantics, for a test of the loop around them: the
    host learns of a halt only at its check (``halted`` reads None), so every iteration of a
    block runs, and from the halting iteration on x and r stay as they are (as the
    ``update_xr`` kernel leaves them)."""

    _first = None

    @property
    def halted(self):
        return None

    @halted.setter
    def halted(self, row):  # record() sets it at every halting row: the first one is kept
        if self._first is None:
            self._first = row

    def update_xr(self, x, r, s, t, phat, shat, rho, rv, ts, tt):
        if self._first is None:
            super().update_xr(x, r, s, t, phat, shat, rho, rv, ts, tt)

    def rows(self, n):
        out, _ = super().rows(n)
        return out, self._first


def test_device_semantics_give_the_exact_count(monkeypatch):
    """The loop around the GPU's ops: the rows after the halting one (computed from frozen
    x and r) are dropped, and the first halting iteration's x and count are returned."""
    A = matrices.aniso2(24)
    b = A @ true_solution(A.shape[0])
    x1, info1, h1 = _solves(A, b, 1, M=precond.jacobi(A), rtol=1e-8)
    monkeypatch.setattr(precond.krylov, "_HostOps", _DeviceLikeOps)
    x, info, h = _solves(A, b, 8, M=precond.jacobi(A), rtol=1e-8)
    assert (len(h1) - 1) % 8 != 0  # the halt is inside a block
    assert info == info1 == 0 and h == h1 and np.array_equal(x, x1)


def test_breakdown_info_is_that_of_the_halting_iteration():
    """A breakdown (rho = 0 exactly: b orthogonal to A b for rhat = b) ends the solve at the
    iteration where it happens, whatever check_every."""
    A = sp.csr_matrix(np.array([[0.0, 1.0], [-1.0, 0.0]]))
    b = np.array([1.0, 0.0])
    for check_every in (1, 4):
        x, info, h = _solves(A, b, check_every, rtol=1e-12)
        assert info in (-10, -11) and len(h) == 2


def test_mixed_precision_operator_and_preconditioner():
    """A float32 matrix and preconditioner with a float64 right-hand side: the iteration runs
    in float64 (results of A and M are cast), as SciPy's does."""
    A = matrices.poisson2d(20, dtype=np.float32)
    b = (A @ np.ones(400, dtype=np.float32)).astype(np.float64)
    x, info = precond.bicgstab(A, b, rtol=1e-6, M=precond.jacobi(A))
    assert info == 0 and x.dtype == np.float64
    assert np.linalg.norm(b - A @ x) <= 1e-6 * np.linalg.norm(b) * 1.01


def test_zero_rhs_and_exact_start():
    A = matrices.poisson2d(5)
    x, info = precond.bicgstab(A, np.zeros(25))
    assert info == 0 and not x.any()
    x, info = precond.bicgstab(A, A @ np.ones(25), x0=np.ones(25))
    assert info == 0


def test_preconditioner_reduces_iterations_and_m_forms():
    A = matrices.random_diffusion2d(24, contrast=3.0, seed=1)
    b = A @ true_solution(A.shape[0])
    plain = precond.solve(A, b, None, rtol=1e-8, maxiter=5000)
    M = precond.jacobi(A)
    pre = precond.solve(A, b, M, rtol=1e-8, maxiter=5000)
    assert plain.converged and pre.converged
    assert pre.iterations < plain.iterations
    for form in (M.aslinearoperator(), sp.diags(1 / A.diagonal())):
        res = precond.solve(A, b, form, rtol=1e-8, maxiter=5000)
        assert res.iterations == pre.iterations
    # M= works unchanged in SciPy's own solvers
    for solver in (spla.bicgstab, spla.cg, spla.gmres):
        x, info = solver(A, b, rtol=1e-8, maxiter=5000, M=M.aslinearoperator())
        assert info == 0
    for method in ("scipy-bicgstab", "cg", "gmres"):
        res = precond.solve(A, b, M, method=method, rtol=1e-8, maxiter=5000)
        assert res.converged and res.residuals[-1] < 1e-7


def test_jacobi_apply_does_not_mutate_and_checks():
    A = matrices.poisson2d(6)
    M = precond.jacobi(A)
    x = np.arange(36.0)
    y = M.matvec(x)
    assert y is not x and np.array_equal(x, np.arange(36.0))
    np.testing.assert_allclose(y, x / 4)
    assert "JacobiPrecond 36x36 float64 on cpu" in repr(M)
    with pytest.raises(ValueError):
        M.matvec(np.ones(5))
    with pytest.raises(ValueError, match="square"):
        precond.jacobi(sp.csr_matrix(np.ones((2, 3))))
    with pytest.raises(ValueError, match="NaN"):
        precond.jacobi(sp.csr_matrix(np.array([[1.0, np.nan], [0, 1]])))
    with pytest.warns(UserWarning, match="zero diagonal"):
        precond.jacobi(sp.csr_matrix(np.array([[0.0, 1.0], [1.0, 2.0]])))


def test_solve_rejects_bad_input():
    A = matrices.poisson2d(4)
    with pytest.raises(TypeError, match="dtype mismatch"):
        precond.solve(A, np.ones(16, dtype=np.float32))
    with pytest.raises(ValueError, match=r"b has shape \(3,\)"):
        precond.solve(A, np.ones(3))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bicgstab_gpu_matches_cpu(dtype):
    import cupy

    from kernels.backend import to_device

    A = matrices.aniso1(40, dtype=dtype)
    b = A @ true_solution(A.shape[0], dtype)
    x_cpu, info_cpu = precond.bicgstab(A, b, rtol=1e-6, M=precond.jacobi(A))
    Ad = to_device(A)
    bd = cupy.asarray(b)
    # same convergence checks as the CPU: the same iterates up to rounding
    x_gpu, info_gpu = precond.bicgstab(Ad, bd, rtol=1e-6, M=precond.jacobi(Ad), check_every=1)
    assert info_cpu == 0 and info_gpu == 0
    assert isinstance(x_gpu, cupy.ndarray)
    tol = 1e-2 if dtype == np.float32 else 1e-4  # rounding differences, amplified by the solver
    assert np.linalg.norm(x_gpu.get() - x_cpu) / np.linalg.norm(x_cpu) < tol
    # default: convergence checked every few iterations, still within rtol
    x_fast, info = precond.bicgstab(Ad, bd, rtol=1e-6, M=precond.jacobi(Ad))
    assert info == 0
    assert float(cupy.linalg.norm(bd - Ad @ x_fast)) <= 1e-6 * float(cupy.linalg.norm(bd)) * (1.5 if dtype == np.float64 else 50)
    res = precond.solve(Ad, cupy.asarray(b), precond.jacobi(Ad), method="scipy-bicgstab", rtol=1e-6)
    # cupyx stops on its recurrence's residual; in float32 the residual recomputed from the
    # iterate can sit just above rtol, which `converged` reports honestly
    assert res.info == 0 and res.residuals[-1] <= (1e-6 if dtype == np.float64 else 1e-3)
    assert res.converged or dtype == np.float32


@pytest.mark.gpu
def test_bicgstab_gpu_complex_and_history():
    """The fused GPU kernels also run complex systems, and the residual history read at the
    convergence checks equals the CPU's up to rounding (which grows relative to the residual
    as it falls: measured 1e-6 down to 1e-8 ||b||, 4% of the residual at 1e-10 ||b||)."""
    import cupy

    from kernels.backend import to_device

    A = (matrices.poisson2d(20) + 0.5j * sp.eye(400)).tocsr().astype(np.complex128)
    b = A @ (np.arange(400) % 7 + 1j).astype(np.complex128)
    h_cpu, h_gpu = [], []
    x_cpu, info_cpu = precond.bicgstab(A, b, rtol=1e-10, residuals=h_cpu)
    x_gpu, info_gpu = precond.bicgstab(to_device(A), cupy.asarray(b), rtol=1e-10, check_every=1, residuals=h_gpu)
    assert info_cpu == 0 and info_gpu == 0 and len(h_cpu) == len(h_gpu)
    np.testing.assert_allclose(h_gpu, h_cpu, rtol=1e-6, atol=1e-8 * np.linalg.norm(b))
    assert np.linalg.norm(x_gpu.get() - x_cpu) <= 1e-7 * np.linalg.norm(x_cpu)


@pytest.mark.gpu
@pytest.mark.parametrize("make", [None, precond.jacobi, precond.algebraic_tridiagonal,
                                  precond.algebraic_block_tridiagonal],
                         ids=lambda f: getattr(f, "__name__", "none"))
def test_bicgstab_cuda_graph_replays_the_same_iterations(make):
    """The captured iteration block runs the same kernels in the same order: with the same
    product (A as an operator over kernels.spmv) the replays give bitwise the eager loop's
    iterates and residual history, also with a last block shorter than check_every (run
    eagerly) and when the iteration limit ends the solve. With a CSR matrix the graph path
    multiplies by kernels.spmv instead of cuSPARSE: the same solve up to rounding."""
    import cupy
    import cupyx.scipy.sparse.linalg as cspla

    from kernels.backend import to_device
    from kernels.spmv import spmv

    Ad = to_device(matrices.aniso2(60))
    op = cspla.LinearOperator(Ad.shape, matvec=lambda v: spmv(Ad, v), dtype=Ad.dtype)
    b = Ad @ cupy.asarray(true_solution(Ad.shape[0], np.float64))
    M = make(Ad) if make else None
    for kw in ({"rtol": 1e-8}, {"rtol": 1e-30, "maxiter": 43}):
        h_eager, h_graph = [], []
        x_eager, info_eager = precond.bicgstab(op, b, M=M, cuda_graph=False, residuals=h_eager, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a failed capture warns: make it fail the test
            x_graph, info_graph = precond.bicgstab(op, b, M=M, cuda_graph=True, residuals=h_graph, **kw)
            x_csr, info_csr = precond.bicgstab(Ad, b, M=M, residuals=(h_csr := []), **kw)
        assert info_graph == info_eager and h_graph == h_eager
        assert bool((x_graph == x_eager).all())
        assert info_graph == (0 if kw["rtol"] > 1e-20 else 43)
        assert info_csr == info_graph and abs(len(h_csr) - len(h_graph)) <= 8
        np.testing.assert_allclose(h_csr[:10], h_graph[:10], rtol=1e-9)
        if info_csr == 0:
            assert float(cupy.linalg.norm(x_csr - x_graph)) <= 1e-6 * float(cupy.linalg.norm(x_graph))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bicgstab_gpu_stops_at_the_first_iteration_that_meets_the_criterion(dtype):
    """The device tests the criterion after every iteration and leaves x as it is from the
    first iteration that meets it: however rarely the host checks, with a graph or without,
    the same iterate, history and count (the CPU's, up to rounding)."""
    import cupy
    import cupyx.scipy.sparse.linalg as cspla

    from kernels.backend import to_device
    from kernels.spmv import spmv

    A = matrices.aniso2(60, dtype=dtype)
    Ad = to_device(A)
    op = cspla.LinearOperator(Ad.shape, matvec=lambda v: spmv(Ad, v), dtype=Ad.dtype)  # the same product everywhere
    b = A @ true_solution(A.shape[0], dtype)
    bd = cupy.asarray(b)
    rtol = 1e-5 if dtype == np.float32 else 1e-8
    for kw in ({"rtol": rtol}, {"rtol": 1e-30, "maxiter": 43}):
        runs = []
        for check_every, graph in ((1, False), (8, False), (8, True), (5, True)):
            h = []
            x, info = precond.bicgstab(op, bd, M=precond.jacobi(Ad), check_every=check_every, cuda_graph=graph,
                                       residuals=h, **kw)
            runs.append((x, info, h))
        x1, info1, h1 = runs[0]
        for x, info, h in runs[1:]:
            assert info == info1 and h == h1 and bool((x == x1).all())
        if info1 == 0:
            assert h1[-1] <= rtol * np.linalg.norm(b) < h1[-2]
            h_cpu = []
            precond.bicgstab(A, b, M=precond.jacobi(A), residuals=h_cpu, **kw)
            assert abs(len(h_cpu) - len(h1)) <= max(2, 0.1 * len(h_cpu))  # rounding: SciPy's products
        else:
            assert info1 == 43 and len(h1) == 44


@pytest.mark.gpu
@pytest.mark.parametrize("short", [False, True])
def test_bicgstab_gpu_default_checks_give_the_same_solve(short, monkeypatch):
    """The default schedule of checks (two iterations, then blocks shortened to the
    predicted rest where iterations are slow: forced here for every block with
    ``short``) gives the iterate, history and count of a check after every iteration."""
    import cupy
    import cupyx.scipy.sparse.linalg as cspla

    import precond.krylov as K
    from kernels.backend import to_device
    from kernels.spmv import spmv

    monkeypatch.setattr(K, "SHORT_BLOCKS_FROM", 0.0 if short else 1e9)
    Ad = to_device(matrices.aniso2(60))
    op = cspla.LinearOperator(Ad.shape, matvec=lambda v: spmv(Ad, v), dtype=Ad.dtype)
    bd = Ad @ cupy.asarray(true_solution(Ad.shape[0], np.float64))
    for M in (precond.jacobi(Ad), precond.amg(Ad, coarsening="pairwise")):
        for kw in ({"rtol": 1e-8}, {"rtol": 1e-30, "maxiter": 11}):
            h1, h = [], []
            x1, info1 = precond.bicgstab(op, bd, M=M, check_every=1, cuda_graph=False, residuals=h1, **kw)
            x, info = precond.bicgstab(op, bd, M=M, residuals=h, **kw)
            assert info == info1 and len(h) == len(h1)
            np.testing.assert_allclose(h, h1, rtol=1e-9)
            assert float(cupy.linalg.norm(x - x1)) <= 1e-9 * float(cupy.linalg.norm(x1))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_spmv_matches_cusparse(dtype):
    import cupy

    from kernels.backend import to_device
    from kernels.spmv import spmv

    rng = np.random.default_rng(5)
    for A in (matrices.aniso2(50, dtype=dtype), matrices.convection_diffusion3d(12, dtype=dtype),
              sp.random(300, 300, density=0.3, random_state=1, format="csr", dtype=dtype),
              sp.csr_matrix((3, 3), dtype=dtype)):
        Ad = to_device(A)
        x = cupy.asarray(rng.standard_normal(A.shape[0]).astype(dtype))
        tol = 1e-5 if dtype == np.float32 else 1e-12
        for lanes in (None, 1, 2, 4, 8, 16, 32):
            np.testing.assert_allclose(spmv(Ad, x, lanes=lanes).get(), (Ad @ x).get(), rtol=tol, atol=tol)
    with pytest.raises(TypeError, match="dtype"):
        spmv(to_device(matrices.poisson2d(4)), cupy.ones(16, dtype=np.float32))
    with pytest.raises(ValueError, match="lanes"):
        spmv(to_device(matrices.poisson2d(4)), cupy.ones(16), lanes=3)


@pytest.mark.gpu
def test_bicgstab_cuda_graph_falls_back_when_capture_fails():
    """A preconditioner that reads a value on the host cannot be captured: the loop runs
    its kernels one by one instead (still with kernels.spmv: the eager cuSPARSE loop's
    result up to rounding)."""
    import cupy

    from kernels.backend import to_device

    Ad = to_device(matrices.poisson2d(30))
    b = Ad @ cupy.ones(Ad.shape[0])
    scale = lambda x: x * (1.0 / float(Ad.diagonal()[0]))  # noqa: E731 - a host read per call
    x_eager, info_eager = precond.bicgstab(Ad, b, rtol=1e-8, M=scale, cuda_graph=False)
    with pytest.warns(RuntimeWarning, match="capture failed"):
        x_graph, info_graph = precond.bicgstab(Ad, b, rtol=1e-8, M=scale, cuda_graph=True)
    assert info_eager == info_graph == 0
    np.testing.assert_allclose(x_graph.get(), x_eager.get(), rtol=1e-7)
    with pytest.raises(ValueError, match="callback"):
        precond.bicgstab(Ad, b, cuda_graph=True, callback=lambda x: None)
