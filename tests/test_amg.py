"""precond.amg: convergence factors, the cycle as a fixed (symmetric) linear operator, the
pairwise hierarchy, pyamg interplay, bad input; CPU == GPU (gpu-marked)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import matrices
import precond
from kernels.amg.aggregation import pair_galerkin, pairwise_level, prolongator, strength_graph
from kernels.amg.cycle import LevelOperator
from precond.amg import amg, change_smoothers

SMOOTHERS = ["algebraic_tridiagonal", "jacobi", "algebraic_block_tridiagonal"]


def convergence_factor(M, A, steps=12, skip=4, seed=0):
    """Asymptotic convergence factor of the stationary iteration x <- x + M (b - A x) on
    A x = 0 from a random start, in the A-norm."""
    x = np.random.default_rng(seed).standard_normal(A.shape[0])
    b = np.zeros_like(x)
    norms = []
    for _ in range(steps):
        x = M.cycle(b, x)
        norms.append(np.sqrt(x @ (A @ x)))
    return (norms[-1] / norms[skip - 1]) ** (1 / (steps - skip))


@pytest.fixture(scope="module")
def poisson():
    return matrices.poisson2d(32)


#: Convergence factors on Poisson at most: pyamg's hierarchies, and pairwise aggregation
#: (its aggregates of up to eight rows, shaped by matching, are less compact than pyamg's
#: standard aggregates: the same prolongator smoothing on them converges more slowly).
BOUND = {"smoothed_aggregation": 0.3, "ruge_stuben": 0.3, "pairwise": 0.5}


@pytest.mark.parametrize("smoother", SMOOTHERS)
@pytest.mark.parametrize("coarsening", ["smoothed_aggregation", "ruge_stuben", "pairwise"])
def test_two_grid_factor_on_poisson(poisson, smoother, coarsening):
    M = amg(poisson, smoother=smoother, coarsening=coarsening, max_levels=2, max_coarse=10)
    assert len(M.levels) == 2
    assert convergence_factor(M, poisson) < BOUND[coarsening]


@pytest.mark.parametrize("smoother", SMOOTHERS)
@pytest.mark.parametrize("coarsening", ["smoothed_aggregation", "pairwise"])
def test_multilevel_factor_on_poisson(smoother, coarsening):
    A = matrices.poisson2d(64)
    M = amg(A, smoother=smoother, coarsening=coarsening, max_coarse=20)
    assert len(M.levels) >= 3
    assert convergence_factor(M, A) < BOUND[coarsening]


@pytest.mark.parametrize("kw", [dict(), dict(smoother="jacobi"), dict(coarsening="pairwise"),
                                dict(smoother=("algebraic_tridiagonal", {"sweep": "forward"})),
                                dict(cycle="W"), dict(cycle="F", coarsening="pairwise"),
                                dict(coarsening="ruge_stuben", presmooth=2, postsmooth=2)])
def test_cycle_is_fixed_symmetric_linear_operator(kw, rng):
    A = matrices.random_diffusion2d(24, contrast=2.0)
    M = amg(A, max_coarse=30, **kw)
    assert M.symmetric
    x, y = rng.standard_normal((2, A.shape[0]))
    Mx, My = M.matvec(x), M.matvec(y)
    np.testing.assert_allclose(M.matvec(x), Mx, rtol=0, atol=0)  # the same operator at every apply
    np.testing.assert_allclose(M.matvec(2 * x - 3 * y), 2 * Mx - 3 * My, atol=1e-10 * np.abs(Mx).max())
    assert abs(y @ Mx - x @ My) <= 1e-9 * abs(x @ Mx)
    assert x @ Mx > 0  # positive definite: usable in CG


def test_unequal_smoothing_is_not_symmetric():
    M = amg(matrices.poisson2d(20), presmooth=1, postsmooth=2, max_coarse=30)
    assert not M.symmetric
    with pytest.raises(ValueError, match="presmooth == postsmooth"):
        amg(matrices.poisson2d(20), presmooth=1, postsmooth=2, symmetric=True)


def test_symmetric_cycle_of_unsymmetric_matrix_uses_adjoint_solves(rng):
    A = matrices.convection_diffusion3d(10)
    plain = amg(A, max_coarse=30)
    adjoint = amg(A, max_coarse=30, symmetric=True)
    assert plain.smoothers[0].adjoint is None and adjoint.smoothers[0].adjoint is not None
    b = rng.standard_normal(A.shape[0])
    for M in (plain, adjoint):
        assert precond.solve(A, b, M, rtol=1e-8).converged


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_krylov_solvers_accept_it(dtype):
    A = matrices.aniso2(40, dtype=dtype)
    b = (A @ np.ones(A.shape[0], dtype=dtype)).astype(dtype)
    M = amg(A, max_coarse=40)
    assert M.dtype == dtype and M.matvec(b).dtype == dtype
    tol = 1e-5 if dtype == np.float32 else 1e-8
    x, info = spla.bicgstab(A, b, M=M.aslinearoperator(), rtol=tol)
    assert info == 0
    x, info = spla.cg(A, b, M=M.aslinearoperator(), rtol=tol)
    assert info == 0
    x, info = precond.bicgstab(A, b, M=M, rtol=tol)
    assert info == 0 and np.linalg.norm(b - A @ x) <= 2 * tol * np.linalg.norm(b)


def test_line_smoother_beats_jacobi_on_anisotropy():
    A = matrices.rotated_anisotropic2d(48)
    b = A @ np.ones(A.shape[0])
    line = precond.solve(A, b, amg(A), rtol=1e-8)
    point = precond.solve(A, b, amg(A, smoother="jacobi"), rtol=1e-8)
    assert line.converged and point.converged
    assert line.iterations < point.iterations


def test_levels_repr_and_setup_phases():
    A = matrices.aniso1(48)
    M = amg(A, coarsening="pairwise", max_coarse=50)
    sizes = [lvl.rows for lvl in M.levels]
    assert sizes[0] == A.shape[0] and all(a > b for a, b in zip(sizes, sizes[1:])) and sizes[-1] <= 50
    assert M.levels[0].nnz == A.nnz and M.levels[-1].smoother.startswith("dense")
    assert 1.0 < M.operator_complexity < 2.0 and 1.0 < M.grid_complexity < 1.6
    assert set(M.setup_time) == {"hierarchy", "smoothers", "coarse solver"}
    text = repr(M)
    assert "pairwise" in text and "operator complexity" in text and "V(1,1)" in text


def test_small_matrix_is_solved_exactly(rng):
    A = matrices.poisson2d(10)
    M = amg(A)  # 100 rows: no level above the coarsest
    assert len(M.levels) == 1
    b = rng.standard_normal(100)
    np.testing.assert_allclose(A @ M.matvec(b), b, atol=1e-10)


def test_large_coarsest_level_is_smoothed_with_warning():
    A = matrices.poisson2d(92)  # 8464 rows > MAX_DENSE
    with pytest.warns(RuntimeWarning, match="coarsest level"):
        M = amg(A, coarsening="pairwise", max_levels=1, smoother="jacobi")
    b = A @ np.ones(A.shape[0])
    assert precond.solve(A, b, M, rtol=1e-6, maxiter=400).converged


def test_pyamg_solver_reused_and_options_passed_through():
    import pyamg

    A = matrices.aniso1(32)
    ml = pyamg.smoothed_aggregation_solver(A, max_coarse=20)
    M = amg(A, coarsening=ml)
    assert M.ml is ml and [lvl.rows for lvl in M.levels] == [lvl.A.shape[0] for lvl in ml.levels]
    E = amg(A, strength=("evolution", {"k": 2}), smooth=("energy", {"degree": 1}), max_coarse=20)
    assert E.ml is not None and E.levels[-1].rows <= 20
    with pytest.raises(TypeError, match="presmoother"):
        amg(A, presmoother="jacobi")


@pytest.mark.parametrize("kw", [dict(smoother="jacobi"), dict(), dict(coarsening="ruge_stuben", CF="PMIS")])
def test_pyamg_hierarchy_is_the_same_at_every_build(kw):
    """pyamg draws random start vectors (the spectral radius behind smoothed aggregation's
    prolongator damping) and random PMIS weights: unseeded, two builds of one matrix gave
    cycles 5e-5 apart, which is what a CPU and a GPU preconditioner of one matrix are. The
    caller's random stream is left as it was."""
    A = matrices.aniso2(40)
    b = A @ np.sin(np.arange(A.shape[0]))
    np.random.seed(7)
    expected = np.random.rand(3)
    np.random.seed(7)
    first = amg(A, max_coarse=40, **kw)
    assert np.array_equal(np.random.rand(3), expected)
    second = amg(A, max_coarse=40, **kw)
    for a, c in zip(first.hierarchy.operators, second.hierarchy.operators):
        assert (a != c).nnz == 0
    assert np.array_equal(first.matvec(b), second.matvec(b))


def test_change_smoothers_on_pyamg_solver():
    import pyamg

    A = matrices.random_diffusion2d(40)
    b = A @ np.ones(A.shape[0])
    ml = pyamg.smoothed_aggregation_solver(A)
    default = precond.solve(A, b, ml.aspreconditioner(), rtol=1e-8)
    assert change_smoothers(ml) is ml
    ours = precond.solve(A, b, ml.aspreconditioner(), rtol=1e-8)
    assert ours.converged and ours.iterations < default.iterations
    x = np.zeros(A.shape[0])
    ml.levels[0].presmoother(ml.levels[0].A, x, b)  # pyamg's calling convention: x in place
    assert np.linalg.norm(b - A @ x) < np.linalg.norm(b)


# --------------------------------------------------------------- pairwise
@pytest.mark.parametrize("name", ["aniso2", "random_diffusion2d", "elasticity2d", "convection_diffusion3d"])
def test_pairwise_level_is_a_valid_aggregation(name):
    n = 8 if name == "convection_diffusion3d" else 20
    A = matrices.get(name, n=n)
    lvl = pairwise_level(A)
    N, Nc = A.shape[0], lvl.n_coarse
    members = lvl.members
    assert members.shape == (Nc, 4)
    listed = members[members >= 0]
    assert np.array_equal(np.sort(listed), np.arange(N))  # every row in exactly one aggregate
    for c in range(Nc):
        assert (lvl.aggregates[members[c][members[c] >= 0]] == c).all()
    assert Nc < 0.45 * N  # two rounds of matching: close to 4 rows an aggregate
    P = prolongator(lvl.aggregates, Nc, A.dtype)
    np.testing.assert_allclose((P.T @ A @ P).toarray(), lvl.coarse.toarray(), atol=1e-12 * abs(A).max())
    again = pairwise_level(A)
    assert np.array_equal(again.aggregates, lvl.aggregates) and (again.coarse != lvl.coarse).nnz == 0


def test_pairwise_follows_strong_couplings():
    A = matrices.aniso1(16)  # strong -1 coupling along x only
    lvl = pairwise_level(A, rounds=1)
    pairs = lvl.members[lvl.members[:, 1] >= 0]
    assert len(pairs) > 100
    assert (np.abs(pairs[:, 1] - pairs[:, 0]) == 1).all()  # x neighbours


def test_strength_graph_and_galerkin():
    A = matrices.random_diffusion2d(12)
    S = strength_graph(A, theta=0.5)
    assert (S != S.T).nnz == 0 and S.diagonal().max() == 0 and S.nnz < A.nnz - A.shape[0]
    with pytest.raises(ValueError):
        strength_graph(A, theta=1.5)
    mate = np.full(A.shape[0], -1)
    mate[0], mate[1] = 1, 0
    Ac, coarse, members = pair_galerkin(A, mate)
    assert Ac.shape == (A.shape[0] - 1,) * 2 and coarse[0] == coarse[1] == 0
    P = prolongator(coarse, Ac.shape[0], A.dtype)
    np.testing.assert_allclose((P.T @ A @ P).toarray(), Ac.toarray(), atol=1e-12)


def _strength_reference(A, theta=0.25):
    """The strong-coupling graph as abs_graph builds it from the truncated weights: W' if
    symmetric, else W' + W'^T (a transpose and a sparse sum)."""
    from kernels.amg._cpu import strength_weights
    from kernels.graph import abs_graph

    A = A.tocsr()
    A.sort_indices()
    w = strength_weights(A.indptr, A.indices, A.data, A.diagonal().astype(A.dtype), theta)
    bits = w.view(np.uint64 if A.dtype == np.float64 else np.uint32)
    bits &= bits.dtype.type(~((1 << (32 if A.dtype == np.float64 else 3)) - 1) & (2 ** (8 * A.dtype.itemsize) - 1))
    return abs_graph(sp.csr_matrix((w, A.indices, A.indptr), shape=A.shape))


@pytest.mark.parametrize("name", ["poisson2d", "aniso2", "rotated_anisotropic2d", "convection_diffusion3d",
                                  "unsymmetric_pattern"])
def test_strength_graph_is_the_mirrored_weight_graph(name):
    """The strength graph sums each strong weight with its mirror's on A's own pattern in
    one pass; it is abs_graph's graph of the strong weights (W' alone where it is
    symmetric: Poisson; W' + W'^T else), bit for bit, and abs_graph's own where the pattern
    is not symmetric."""
    if name == "unsymmetric_pattern":
        A = (sp.random(200, 200, density=0.03, random_state=5, format="csr") + 4 * sp.eye(200)).tocsr()
    else:
        A = matrices.get(name, n=20 if name != "convection_diffusion3d" else 6).tocsr()
    S, R = strength_graph(A), _strength_reference(A)
    S.sort_indices()
    R.sort_indices()
    assert np.array_equal(S.indptr, R.indptr) and np.array_equal(S.indices, R.indices)
    assert S.data.tobytes() == R.data.tobytes()


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["poisson2d", "aniso2", "convection_diffusion3d", "unsymmetric_pattern"])
def test_gpu_strength_graph_is_the_cpus(name):
    from kernels.backend import to_device

    if name == "unsymmetric_pattern":
        A = (sp.random(2000, 2000, density=0.003, random_state=5, format="csr") + 4 * sp.eye(2000)).tocsr()
    else:
        A = matrices.get(name, n=40 if name != "convection_diffusion3d" else 10).tocsr()
    S, G = strength_graph(A), strength_graph(to_device(A))
    S.sort_indices()
    G.sort_indices()
    assert np.array_equal(G.indptr.get(), S.indptr) and np.array_equal(G.indices.get(), S.indices)
    assert G.data.get().tobytes() == S.data.tobytes()


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gpu_pair_galerkin_is_the_cpus(dtype):
    """The GPU's pair Galerkin operator (one kernel for the diagonal entries and the rows)
    is the CPU's, bit for bit, with unmatched vertices and explicit zeros."""
    import cupy

    from kernels.amg.aggregation import pair_matching
    from kernels.backend import to_device

    A = matrices.convection_diffusion3d(10, dtype=dtype).tocsr()
    A.data[::11] = 0  # explicit zeros
    mate = pair_matching(strength_graph(A)).astype(A.indices.dtype)
    for v in range(40):  # some pairs split: unmatched vertices
        if mate[v] >= 0:
            mate[mate[v]], mate[v] = -1, -1
    C, coarse, members = pair_galerkin(A, mate)
    assert (members[:, 1] < 0).any()
    G, gcoarse, gmembers = pair_galerkin(to_device(A), cupy.asarray(mate))
    assert G.has_canonical_format and np.array_equal(gcoarse.get(), coarse)
    assert np.array_equal(gmembers.get(), members)
    np.testing.assert_array_equal(G.indptr.get(), C.indptr)
    np.testing.assert_array_equal(G.indices.get(), C.indices)
    assert G.data.get().tobytes() == C.data.tobytes()


def test_jacobi_smoother_reuses_the_prolongators_estimate():
    """The smoothed pairwise levels estimate rho(D^-1 A) once (the prolongator's damping);
    a float64 Jacobi smoother takes its omega from that estimate, the same number its own
    power method gives."""
    from precond.amg import SMOOTHER_DEFAULTS, _omega

    A = matrices.rotated_anisotropic2d(40).tocsr()
    M = amg(A, coarsening="pairwise", smoother="jacobi", max_coarse=40)
    levels = [lvl for lvl in M.hierarchy.levels if lvl.jacobi_rho is not None]
    assert levels
    for lvl, smoother in zip(M.hierarchy.levels, M.smoothers):
        if lvl.jacobi_rho is None:
            continue
        dinv = 1 / lvl.A.diagonal()
        own = _omega(lvl.A, lambda r: dinv * r, dict(SMOOTHER_DEFAULTS, omega_factor=1.5), True)
        assert smoother.omega.tobytes() == own.tobytes()


def test_pair_numbering_is_contract_pairs_numbering():
    """The last matching round of a smoothed level numbers its pairs without contracting
    the matrix; the numbering is contract_pairs', and the coarse operator formed on demand
    is the one formed at once."""
    from kernels.amg.aggregation import pair_numbering, pair_matching
    from kernels.graph import contract_pairs

    A = matrices.rotated_anisotropic2d(20).tocsr()
    mate = pair_matching(strength_graph(A)).astype(A.indices.dtype)
    _, coarse, members = contract_pairs(A, mate, check=False)
    got_coarse, got_members = pair_numbering(mate)
    assert got_coarse.tolist() == coarse.tolist() and got_members.tolist() == members.tolist()
    eager = pairwise_level(A, rounds=3)
    lazy = pairwise_level(A, rounds=3, coarse=False)
    assert np.array_equal(eager.aggregates, lazy.aggregates) and np.array_equal(eager.members, lazy.members)
    assert lazy._coarse is None and (lazy.coarse != eager.coarse).nnz == 0 and lazy.coarse.nnz == eager.coarse.nnz


def _sequential_product(A, B):
    """{(i, j): sum} of A B, each sum from zero over row i of A in order, in A's dtype,
    exact zeros left out: the definition of ordered_product, in plain Python."""
    out = {}
    for i in range(A.shape[0]):
        sums = {}
        for e in range(A.indptr[i], A.indptr[i + 1]):
            k = A.indices[e]
            for f in range(B.indptr[k], B.indptr[k + 1]):
                j = B.indices[f]
                sums[j] = sums.get(j, A.dtype.type(0)) + A.data[e] * B.data[f]
        out.update({(i, j): v for j, v in sums.items() if v != 0})
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ordered_product_sums_each_entry_in_row_order(dtype):
    """The product of the pairwise Galerkin operators is defined to the bit (the GPU twin
    runs the same loops), so that the CPU and the GPU make the same choices on the coarse
    levels; the float32 sums stay in float32."""
    from kernels.amg.product import ordered_product

    A = sp.random(120, 90, density=0.08, random_state=2, format="csr", dtype=dtype)
    B = sp.random(90, 100, density=0.08, random_state=3, format="csr", dtype=dtype)
    A.data -= dtype(0.5)
    B.data -= dtype(0.5)
    C = ordered_product(A, B)
    assert C.dtype == dtype and C.has_canonical_format and C.shape == (120, 100)
    got = {(i, C.indices[e]): C.data[e] for i in range(C.shape[0]) for e in range(C.indptr[i], C.indptr[i + 1])}
    expected = _sequential_product(A, B)
    assert got.keys() == expected.keys()
    assert all(got[key].tobytes() == value.tobytes() for key, value in expected.items())
    cancel = sp.csr_matrix(np.array([[1.0, 1.0], [0.0, 0.0]], dtype=dtype))
    assert ordered_product(cancel, sp.csr_matrix(np.array([[1.0, 2.0], [-1.0, 0.0]], dtype=dtype))).nnz == 1
    assert ordered_product(sp.csr_matrix((3, 4), dtype=dtype), sp.csr_matrix((4, 2), dtype=dtype)).nnz == 0
    with pytest.raises(ValueError, match="multiply"):
        ordered_product(A, A)
    with pytest.raises(TypeError, match="float32"):
        ordered_product(A, B.astype(np.float64 if dtype == np.float32 else np.float32))


def test_piecewise_constant_minus_is_scipys_difference():
    from kernels.amg.product import piecewise_constant_minus

    aggregates = np.array([0, 0, 1, 2, 1, 2, 0])
    Y = sp.random(7, 3, density=0.6, random_state=4, format="lil")
    Y[1, 0], Y[3, 2], Y[4, 1] = 1.0, 0.0, 0.0  # an own entry 1 (1 - 1 = 0), own entries missing
    Y = Y.tocsr()
    Y.eliminate_zeros()
    P = prolongator(aggregates, 3, np.float64)
    S, expected = piecewise_constant_minus(aggregates, 3, Y), (P - Y).tocsr()
    assert S.has_canonical_format and np.array_equal(S.indptr, expected.indptr)
    assert np.array_equal(S.indices, expected.indices) and np.array_equal(S.data, expected.data)
    rng = np.random.default_rng(6)  # many rows, own entries present, missing, left and right of the others
    aggregates = rng.integers(0, 40, 500)
    Y = sp.random(500, 40, density=0.1, random_state=7, format="csr")
    Y.data[::7] = 1.0
    P = prolongator(aggregates, 40, np.float64)
    S, expected = piecewise_constant_minus(aggregates, 40, Y), (P - Y).tocsr()
    expected.sort_indices()
    assert np.array_equal(S.indptr, expected.indptr) and np.array_equal(S.indices, expected.indices)
    assert np.array_equal(S.data, expected.data)


def test_pairwise_coarse_operators_are_ordered_galerkin_products():
    from kernels.amg.hierarchy import DAMPING_BITS, pairwise_hierarchy, smoothed_prolongator
    from kernels.amg.product import ordered_product

    A = matrices.rotated_anisotropic2d(48)
    h = pairwise_hierarchy(A, coarse_size=40)
    assert any(lvl.P is not None for lvl in h.levels)  # smoothed levels
    for lvl, coarse in zip(h.levels, h.operators[1:]):
        if lvl.P is not None:
            Ac = ordered_product(lvl.R, ordered_product(lvl.A, lvl.P))
            assert (Ac != coarse).nnz == 0 and Ac.nnz == coarse.nnz
            np.testing.assert_allclose((lvl.P.T @ lvl.A @ lvl.P).toarray(), coarse.toarray(), atol=1e-12)
    # the damping factor keeps DAMPING_BITS bits: the one value the backends compute differently
    lvl = pairwise_level(A, rounds=3)
    S = smoothed_prolongator(A, lvl.aggregates, lvl.n_coarse)
    P = prolongator(lvl.aggregates, lvl.n_coarse, A.dtype)
    DinvAP = sp.diags(1 / A.diagonal()) @ A @ P
    own = np.asarray((P.multiply(DinvAP)).sum(axis=1)).ravel()  # (D^-1 A P)[i, aggregate of i]
    i = int(np.argmax(np.abs(own - 1)))
    omega = (1 - S[i, lvl.aggregates[i]]) / own[i]
    mantissa = np.frexp(omega)[0] * 2.0**DAMPING_BITS
    assert abs(mantissa - round(mantissa)) < 1e-3 and 0.3 < omega < 1.5


def test_restriction_twin_matches_matrices(rng):
    A = matrices.aniso3(20)
    lvl = pairwise_level(A)
    op = LevelOperator(A, aggregates=lvl.aggregates, members=lvl.members)
    x, b = rng.standard_normal((2, A.shape[0]))
    R = op.prolongator().T.tocsr()
    np.testing.assert_allclose(op.restrict_residual(x, b), R @ (b - A @ x), atol=1e-12)
    np.testing.assert_allclose(op.restrict_residual(None, b), R @ b, atol=1e-12)
    e = rng.standard_normal(lvl.n_coarse)
    np.testing.assert_allclose(op.prolong(x.copy(), e), x + op.prolongator() @ e)


# ----------------------------------------------------------------- bad input
@pytest.mark.parametrize("smoother", ["algebraic_tridiagonal", "jacobi"])
@pytest.mark.parametrize("coarsening", ["smoothed_aggregation", "pairwise"])
def test_float32_cycle_of_a_float64_matrix(smoother, coarsening, rng):
    """cycle_dtype="float32": the float64 hierarchy's levels cast (the same sizes), the
    cycle in float32 (a fixed operator, symmetric and linear up to float32 rounding), the
    apply in float64, and BiCGStab still reaches 1e-8 in the float64 cycle's count."""
    A = matrices.random_diffusion2d(40, contrast=2.0)
    b = A @ np.sin(np.arange(A.shape[0]))
    exact = amg(A, smoother=smoother, coarsening=coarsening, max_coarse=50)
    M = amg(A, smoother=smoother, coarsening=coarsening, max_coarse=50, cycle_dtype="float32")
    assert M.cycle_dtype == np.float32 and M.dtype == np.float64 and "float32" in repr(M)
    assert M.hierarchy.sizes == exact.hierarchy.sizes and M.hierarchy.nonzeros == exact.hierarchy.nonzeros
    assert all(level.A.dtype == np.float32 for level in M.hierarchy.levels)
    assert M.coarse_solver.inverse.dtype == np.float32
    x, y = rng.standard_normal((2, A.shape[0]))
    Mx, My = M.matvec(x), M.matvec(y)
    assert Mx.dtype == np.float64 and M.cycle(x).dtype == np.float64
    np.testing.assert_array_equal(M.matvec(x), Mx)
    np.testing.assert_allclose(Mx, exact.matvec(x), atol=1e-5 * np.abs(Mx).max())
    assert abs(y @ Mx - x @ My) <= 1e-5 * abs(x @ Mx)
    runs = [precond.solve(A, b, P, rtol=1e-8) for P in (exact, M)]
    assert all(r.converged for r in runs) and runs[1].iterations <= runs[0].iterations + 1


def test_bad_input_rejected():
    A = matrices.poisson2d(8)
    with pytest.raises(ValueError, match="square"):
        amg(sp.random(5, 6, density=0.5, format="csr"))
    with pytest.raises(TypeError, match="float32 and float64"):
        amg(A.astype(np.complex128))
    with pytest.raises(TypeError):
        amg(A.astype(np.int64))
    with pytest.raises(TypeError, match="sparse"):
        amg(A.toarray())
    bad = A.copy()
    bad.data[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        amg(bad)
    with pytest.raises(ValueError, match="unknown smoother"):
        amg(A, smoother="gauss_seidel")
    with pytest.raises(TypeError, match="unknown option"):
        amg(A, smoother=("jacobi", {"m": 5}))
    with pytest.raises(ValueError, match="omega"):
        amg(A, smoother=("jacobi", {"omega": 2.5}))
    with pytest.raises(ValueError, match="unknown coarsening"):
        amg(A, coarsening="geometric")
    with pytest.raises(TypeError, match="pairwise option"):
        amg(A, coarsening="pairwise", strength="symmetric")
    with pytest.raises(ValueError, match="rounds"):
        amg(matrices.poisson2d(30), coarsening="pairwise", rounds=5)
    with pytest.raises(ValueError, match="presmooth"):
        amg(A, presmooth=-1)
    with pytest.raises(ValueError, match="cycle"):
        amg(A, cycle="K")
    with pytest.raises(ValueError, match="cuda_graph"):
        amg(A, cuda_graph=True)
    with pytest.raises(ValueError, match="cycle_dtype"):
        amg(A, cycle_dtype=np.float16)
    with pytest.raises(ValueError, match="cycle_dtype"):
        amg(A, cycle_dtype="half")
    M = amg(matrices.poisson2d(20))
    with pytest.raises(ValueError, match="length"):
        M.matvec(np.ones(3))
    with pytest.raises(TypeError, match="MultilevelSolver"):
        change_smoothers(A)


# ------------------------------------------------------------------- GPU
def _same_values(c, g):
    """Whether the host sparse matrix ``c`` and the device one ``g`` have the same values
    (exactly; an explicit zero equals an absent entry)."""
    return c.shape == g.shape and (c.tocsr() != g.get().tocsr()).nnz == 0


@pytest.mark.gpu
@pytest.mark.parametrize("smooth", ["jacobi", None])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["random_diffusion2d", "rotated_anisotropic2d"])
def test_gpu_pairwise_hierarchy_equals_cpu(name, dtype, smooth):
    """The same hierarchy to the bit: aggregates, prolongators and coarse operators (the
    smoothed levels' Galerkin products are kernels.amg.product.ordered_product's, whose
    twins sum in one order; random_diffusion2d's levels are all plain aggregation)."""
    from kernels.amg.aggregation import pairwise_level
    from kernels.backend import to_device

    A = matrices.get(name, n=60, dtype=dtype)
    cpu = amg(A, coarsening="pairwise", max_coarse=40, smooth=smooth)
    gpu = amg(to_device(A), coarsening="pairwise", max_coarse=40, smooth=smooth)
    assert gpu.hierarchy.sizes == cpu.hierarchy.sizes
    if name == "rotated_anisotropic2d" and smooth:
        assert any(lvl.P is not None for lvl in cpu.hierarchy.levels)
    for c, g in zip(cpu.hierarchy.operators, gpu.hierarchy.operators):
        assert _same_values(c, g)
    for c, g in zip(cpu.hierarchy.levels, gpu.hierarchy.levels):
        assert (c.P is None) == (g.P is None)
        if c.P is not None:
            assert _same_values(c.P, g.P) and _same_values(c.R, g.R)
        else:
            assert np.array_equal(c.aggregates, g.aggregates.get()) and np.array_equal(c.members, g.members.get())
        lc, lg = pairwise_level(c.A, rounds=3), pairwise_level(g.A, rounds=3)  # the aggregation of each level
        assert np.array_equal(lc.aggregates, lg.aggregates.get()) and np.array_equal(lc.members, lg.members.get())


@pytest.mark.gpu
@pytest.mark.parametrize("kw", [dict(), dict(smoother="jacobi"), dict(coarsening="pairwise"),
                                dict(coarsening="pairwise", smoother="algebraic_block_tridiagonal", cycle="W"),
                                dict(coarsening="ruge_stuben"),
                                dict(smoother=("algebraic_tridiagonal", {"relaxation": "gauss_seidel"})),
                                dict(coarsening="pairwise", smoother=("algebraic_tridiagonal",
                                                                      {"relaxation": "gauss_seidel",
                                                                       "sweep": "forward"})),
                                dict(smoother=("jacobi", {"relaxation": "gauss_seidel"}))])
def test_gpu_cycle_matches_cpu_and_graph(kw):
    import cupy

    from kernels.backend import to_device

    A = matrices.aniso2(64)
    b = A @ np.sin(np.arange(A.shape[0]))
    cpu = amg(A, max_coarse=40, **kw)
    gpu = amg(to_device(A), max_coarse=40, **kw)
    bd = cupy.asarray(b)
    eager = gpu.matvec(bd)  # the first apply runs eagerly
    graphed = gpu.matvec(bd)  # captured, then replayed
    assert gpu._graph is not None
    again = gpu.matvec(bd)
    ref = cpu.matvec(b)
    scale = np.abs(ref).max()
    np.testing.assert_allclose(eager.get(), ref, atol=1e-6 * scale)
    np.testing.assert_allclose(graphed.get(), eager.get(), atol=1e-12 * scale)
    np.testing.assert_allclose(again.get(), graphed.get(), atol=0)
    assert again.data.ptr != graphed.data.ptr  # a new array every apply


@pytest.mark.gpu
@pytest.mark.parametrize("smoother", ["algebraic_tridiagonal", "jacobi"])
def test_gpu_float32_cycle_matches_cpu_and_graph(smoother):
    """cycle_dtype="float32" on the GPU: the CPU's float32 cycle up to rounding, eager ==
    captured, float64 out, and inside BiCGStab's graph the float64 cycle's count."""
    import cupy

    from kernels.backend import to_device

    A = matrices.aniso2(64)
    b = A @ np.sin(np.arange(A.shape[0]))
    kw = dict(coarsening="pairwise", smoother=smoother, max_coarse=40, cycle_dtype="float32")
    cpu, gpu = amg(A, **kw), amg(to_device(A), **kw)
    bd = cupy.asarray(b)
    eager = gpu.matvec(bd)
    graphed = gpu.matvec(bd)
    assert gpu._graph is not None and graphed.dtype == np.float64
    ref = cpu.matvec(b)
    scale = np.abs(ref).max()
    np.testing.assert_allclose(eager.get(), ref, atol=1e-4 * scale)
    np.testing.assert_allclose(graphed.get(), eager.get(), atol=1e-6 * scale)
    exact = precond.solve(to_device(A), bd, amg(to_device(A), **{**kw, "cycle_dtype": None}), rtol=1e-8)
    mixed = precond.solve(to_device(A), bd, gpu, rtol=1e-8)
    assert exact.converged and mixed.converged and mixed.iterations <= exact.iterations + 1


@pytest.mark.gpu
@pytest.mark.parametrize("coarsening", ["smoothed_aggregation", "pairwise"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gpu_iterations_within_ten_percent_of_cpu(coarsening, dtype):
    import cupy

    from kernels.backend import to_device

    A = matrices.rotated_anisotropic2d(96, dtype=dtype)
    b = (A @ np.ones(A.shape[0], dtype=dtype)).astype(dtype)
    rtol = 1e-5 if dtype == np.float32 else 1e-8
    cpu = precond.solve(A, b, amg(A, coarsening=coarsening), rtol=rtol)
    Ad = to_device(A)
    M = amg(Ad, coarsening=coarsening)
    gpu = precond.solve(Ad, cupy.asarray(b), M, rtol=rtol)  # bicgstab captures the cycle in its graph
    assert cpu.converged and gpu.converged
    assert abs(gpu.iterations - cpu.iterations) <= max(1, 0.1 * cpu.iterations)
    x, info = cupy.asnumpy(gpu.x), gpu.info
    assert info == 0 and np.linalg.norm(b - A @ x) <= 2 * rtol * np.linalg.norm(b)


@pytest.mark.gpu
@pytest.mark.parametrize("coarsening", ["smoothed_aggregation", "pairwise"])
def test_gpu_auto_steps_measure_as_the_cpu(coarsening):
    import cupy

    from kernels.backend import to_device

    A = matrices.aniso3(48)
    cpu = amg(A, coarsening=coarsening, presmooth="auto")
    gpu = amg(to_device(A), coarsening=coarsening, presmooth="auto")
    assert gpu.presmooth == cpu.presmooth
    assert len(gpu.step_measurements) == 2
    for (sc, fc, wc), (sg, fg, wg) in zip(cpu.step_measurements, gpu.step_measurements):
        # the same work model on both backends; BiCGStab's factors up to rounding (a trial
        # that reaches 1e-10 stops; that deep, rounding may move the stop by an iteration)
        assert sc == sg and wc == pytest.approx(wg) and (fg == pytest.approx(fc, rel=1e-2) or max(fc, fg) < 1e-3)
    b = A @ np.sin(np.arange(A.shape[0]))
    bd = cupy.asarray(b)
    gpu.matvec(bd)
    graphed = gpu.matvec(bd)  # the set-up's trial cycles leave the capture working
    assert gpu._graph is not None
    ref = cpu.matvec(b)
    np.testing.assert_allclose(graphed.get(), ref, atol=1e-6 * np.abs(ref).max())


@pytest.mark.gpu
def test_gpu_cupyx_solvers_accept_it():
    import cupy
    import cupyx.scipy.sparse.linalg as cspla

    from kernels.backend import to_device

    A = to_device(matrices.poisson2d(48))
    b = A @ cupy.ones(A.shape[0])
    M = amg(A, coarsening="pairwise")
    x, info = cspla.cg(A, b, M=M.aslinearoperator(), rtol=1e-8)
    assert info == 0
    x, info = cspla.gmres(A, b, M=M.aslinearoperator(), rtol=1e-8)
    assert info == 0


def test_no_warnings_on_ordinary_use():
    A = matrices.aniso1(40)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        M = amg(A)
        precond.solve(A, A @ np.ones(A.shape[0]), M, rtol=1e-8)


def test_study_runs_amg():
    from precond.study import PRECONDITIONERS, run_study

    assert "amg" in PRECONDITIONERS
    rows = run_study(["aniso2"], ["amg"], n=24, progress=False)
    assert rows[0]["preconditioner"] == "amg" and rows[0]["converged"] and rows[0]["iterations"] < 15


def test_l1_diagonal_only_on_symmetric_indefinite_levels():
    """The l1 diagonal is for symmetric positive definite levels; on an unsymmetric level
    the pivot signs say nothing of the spectrum (on orsreg_1, inside pyamg's hierarchy, the
    l1 smoother made BiCGStab stall)."""
    from kernels.graph import is_symmetric
    from precond.amg import _build_smoother, _smoother_spec

    name, options = _smoother_spec("algebraic_tridiagonal")
    for block, l1 in (([[1.0, 2.0], [2.0, 1.0]], True), ([[1.0, 3.0], [1.0, 1.0]], False), ([[4.0, 1.0], [1.0, 4.0]], False)):
        A = sp.kron(sp.eye(50), sp.csr_matrix(np.array(block)), format="csr")  # pivots 1, 1 - 4 (or 1 - 3) < 0
        smoother = _build_smoother(A, name, options, is_symmetric(A))
        assert ("l1" in smoother.describe()) == l1


def test_ritz_values_find_complex_eigenvalues():
    """Arnoldi's Ritz values of a matrix with few distinct eigenvalues are its eigenvalues,
    the complex pair among them (the power method would only see the largest modulus)."""
    from kernels.amg.cycle import ritz_values

    block = sp.csr_matrix(np.array([[1.0, -1.0], [1.0, 1.0]]))  # eigenvalues 1 +- i
    A = sp.block_diag([sp.kron(sp.eye(20), block), 2.0 * sp.eye(10)], format="csr")
    ritz = ritz_values(A, lambda r: r.copy(), steps=10)
    np.testing.assert_allclose(np.sort_complex(ritz), [1 - 1j, 1 + 1j, 2], atol=1e-10)
    D = sp.diags(np.arange(1.0, 41.0), format="csr")
    assert np.abs(ritz_values(D, lambda r: r / 2.0, steps=10)).max() == pytest.approx(20.0, rel=1e-2)


def test_richardson_damping_minimizes_the_worst_oscillatory_factor():
    from kernels.amg.cycle import richardson_damping

    # a real spectrum: factor / rho
    assert richardson_damping(np.array([0.1, 1.0, 2.0]), 1.5) == pytest.approx(0.75)
    # eigenvalues 1 +- i and 2: factor / rho = 0.75 leaves |1 - 0.75 (1 + i)| = 0.79
    ritz = np.array([1 + 1j, 1 - 1j, 2.0])
    omega = richardson_damping(ritz, 1.5)
    points = np.append(ritz, 0.5)  # the oscillatory range reaches down to rho / 4

    def worst(w):
        return np.abs(1 - w * points).max()

    assert omega < 0.75 and worst(omega) < worst(0.75) - 0.05
    assert worst(omega) <= min(worst(w) for w in np.linspace(0.01, 1.0, 991)) + 1e-6
    assert richardson_damping(np.array([np.nan]), 1.5) is None


def test_unsymmetric_level_damping_smooths_complex_spectra():
    """pde2961-like: convection makes S^-1 A's eigenvalues complex; the damping of an
    unsymmetric level keeps every oscillatory |1 - omega theta| below the power-method
    rule's."""
    from kernels.amg.cycle import spectral_radius
    from precond.amg import _build_smoother, _smoother_spec

    n = 24  # central differences of strong convection: (-1 -+ 1.5) off the diagonal
    T = sp.diags([-1.0 - 1.5, 2.0, -1.0 + 1.5], [-1, 0, 1], shape=(n, n))
    A = (sp.kron(sp.eye(n), T) + sp.kron(T, sp.eye(n))).tocsr()
    name, options = _smoother_spec("jacobi")
    smoother = _build_smoother(A, name, options, symmetric_matrix=False)
    dinv = 1.0 / A.diagonal()
    ev = np.linalg.eigvals((A.toarray() * dinv[:, None]))
    outer = ev[np.abs(ev) >= 0.25 * np.abs(ev).max()]
    old = 1.5 / float(spectral_radius(A, lambda r: dinv * r, 20))
    new = float(smoother.omega[0])
    assert np.abs(1 - new * outer).max() < np.abs(1 - old * outer).max()


def test_row_work_bounds_the_kernels_longest_row():
    from kernels.amg.product import row_work

    rng = np.random.default_rng(3)
    A = sp.random(40, 30, density=0.2, format="csr", random_state=rng)
    B = sp.random(30, 20, density=0.3, format="csr", random_state=rng)
    lengths = np.diff(B.indptr)
    per_row = [len(A[i].indices) * int(lengths[A[i].indices].sum()) for i in range(A.shape[0])]
    flops = sum(int(lengths[A[i].indices].sum()) for i in range(A.shape[0]))
    assert row_work(A, B) == (max(per_row), flops)
    assert row_work(sp.csr_matrix((3, 3)), B[:3, :3]) == (0, 0)


@pytest.mark.gpu
def test_gpu_ordered_product_with_a_dense_row_is_the_cpus():
    """An arrow matrix (a dense first row and column, as memplus has): the product goes
    to the host twin and gives the CPU's bits."""
    from kernels.amg.product import GPU_ROW_WORK, HOST_RATIO, ordered_product, row_work
    from kernels.backend import to_device

    n = 3000
    A = (sp.diags(np.full(n, 4.0)) + sp.csr_matrix((np.ones(n - 1), (np.zeros(n - 1, int), np.arange(1, n))),
                                                   shape=(n, n))).tocsr()
    A = (A + A.T).tocsr()
    A.sort_indices()
    work, flops = row_work(A, A)
    assert work > GPU_ROW_WORK and work * HOST_RATIO > flops
    C = ordered_product(A, A)
    G = ordered_product(to_device(A), to_device(A))
    assert G.has_canonical_format
    np.testing.assert_array_equal(G.indptr.get(), C.indptr)
    np.testing.assert_array_equal(G.indices.get(), C.indices)
    np.testing.assert_array_equal(G.data.get(), C.data)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gpu_table_product_is_the_cpus(dtype):
    """The shared-memory table product gives the CPU's bits for every lane group and table
    size, rows that overflow a small table included (they go to the thread-per-row
    kernel), with cancelling entries and empty rows."""
    from kernels.amg.product import _table_product, ordered_product
    from kernels.backend import to_device

    rng = np.random.default_rng(7)
    A = sp.random(700, 500, density=0.02, random_state=8, format="lil", dtype=dtype)
    B = sp.random(500, 400, density=0.03, random_state=9, format="lil", dtype=dtype)
    A[3, :] = rng.uniform(-1, 1, 500).astype(dtype)  # a long row: hundreds of columns
    A[5, :] = 0
    A[9, :] = 0
    B[7, :], B[8, :] = 0, 0
    A[9, 7], A[9, 8] = 2.0, 2.0
    B[7, 3], B[8, 3], B[8, 4] = 1.0, -1.0, 1.0  # row 9 of A B: 2 - 2 at column 3 (left out), 2 at 4
    A, B = A.tocsr(), B.tocsr()
    A.sort_indices()
    B.sort_indices()
    C = ordered_product(A, B)
    assert C[9].indices.tolist() == [4]
    dA, dB = to_device(A), to_device(B)
    for group, slots in [(None, None), (1, 2), (4, 8), (8, 64), (32, 512), (2, 16)]:
        G = _table_product(dA, dB, group=group, slots=slots)
        assert G.has_canonical_format and G.dtype == dtype
        np.testing.assert_array_equal(G.indptr.get(), C.indptr)
        np.testing.assert_array_equal(G.indices.get(), C.indices)
        assert G.data.get().tobytes() == C.data.tobytes(), (group, slots)
    G = ordered_product(dA, dB)
    assert G.data.get().tobytes() == C.data.tobytes()


def test_table_plan_fits_the_shared_memory():
    from kernels.amg.product import TABLE_BYTES, TABLE_THREADS, table_plan

    for nnz_a, flops, widest, vb, ib in [(9, 9, 9, 8, 4), (100, 5000, 700, 8, 4), (10, 10**6, 10**5, 8, 8),
                                         (50, 50, 1, 4, 4)]:
        group, slots = table_plan(nnz_a, flops, widest, vb, ib)
        assert 1 <= group <= 32 and group & (group - 1) == 0 and slots & (slots - 1) == 0 and slots >= 2
        assert (TABLE_THREADS // group) * slots * (vb + ib) <= TABLE_BYTES
    assert table_plan(9, 9, 9, 8, 4) == (1, 16)  # a piecewise constant B: a thread per row, 9 columns
    assert table_plan(100, 1600, 300, 8, 4) == (16, 512)
    assert table_plan(200, 200, 200, 8, 4) == (8, 256)  # a piecewise constant B after dense rows: more lanes
    assert table_plan(200, 200, 5000, 8, 4) == (32, 1024)  # the largest table; longer rows overflow


def test_levels_symmetric_up_to_rounding_count_as_symmetric():
    """Galerkin products of a symmetric matrix differ from their transposes in the last
    bits; they are symmetric levels (the l1 diagonal where their tridiagonal part is
    indefinite), while an unsymmetric matrix stays unsymmetric."""
    from precond.amg import _symmetric_level

    A = matrices.random_diffusion2d(100).tocsr()
    M = amg(A)
    coarse = M.hierarchy.levels[1].A
    assert not np.array_equal((coarse - coarse.T).toarray(), 0 * coarse.toarray())  # rounding
    assert _symmetric_level(coarse)
    assert "l1" in M.levels[1].smoother
    res = precond.solve(A, A @ np.ones(A.shape[0]), M, rtol=1e-8)
    assert res.converged and res.iterations <= 7
    T = sp.diags([-2.5, 2.0, 0.5], [-1, 0, 1], shape=(30, 30), format="csr")
    assert not _symmetric_level(T) and _symmetric_level((T + T.T).tocsr())
    upper = sp.triu(matrices.poisson2d(6), format="csr")  # as many entries as its transpose, not the same
    assert not _symmetric_level(upper) and _symmetric_level(sp.csr_matrix((4, 4)))
    assert _symmetric_level(matrices.poisson2d(8).astype(np.float32).tocsr())


def test_too_dense_smoothed_level_is_not_formed(monkeypatch):
    """A hub row (memplus has rows of 574 entries) makes the smoothed Galerkin product
    dense: the level keeps its unsmoothed aggregates, and R (A P) is never formed when
    A P already shows it would be too dense."""
    import kernels.amg.hierarchy as hierarchy

    n = 600
    rng = np.random.default_rng(5)
    hub = sp.csr_matrix((-rng.uniform(0.5, 1.0, n - 1), (np.zeros(n - 1, int), np.arange(1, n))), shape=(n, n))
    chain = sp.diags([-np.ones(n - 1)], [1], shape=(n, n))
    L = (hub + chain).tocsr()
    A = (L + L.T).tocsr()
    A = (A + sp.diags(np.asarray(abs(A).sum(axis=1)).ravel() + 1.0)).tocsr()
    calls = []
    original = hierarchy.ordered_product
    monkeypatch.setattr(hierarchy, "ordered_product", lambda X, Y: calls.append(X.shape) or original(X, Y))
    H = hierarchy.pairwise_hierarchy(A, coarse_size=50)
    assert H.levels[0].aggregates is not None  # unsmoothed: the smoothed one was too dense
    assert (n, n) in calls and not any(shape[1] == n and shape[0] < n for shape in calls[:2])


# ------------------------------------------------- automatic smoothing steps
def test_least_work_choice_rule():
    from kernels.amg.cycle import least_work_choice

    # per digit: 10 / 0.301 = 33.2 against 18 / 0.699 = 25.8
    assert least_work_choice([(1, 0.5, 10.0), (2, 0.2, 18.0)]) == 2
    # 10 / 1 = 10 against 18 / 1.3 = 13.8
    assert least_work_choice([(1, 0.1, 10.0), (2, 0.05, 18.0)]) == 1
    # within the margin the fewer iterations: 33.2 against 31.9 (4%), and 10.0 against 10.6
    assert least_work_choice([(1, 0.5, 10.0), (2, 0.3, 16.7)]) == 2
    assert least_work_choice([(1, 0.1, 10.0), (2, 0.02, 18.0)]) == 2
    assert least_work_choice([(1, 0.1, 10.0), (2, 0.02, 18.0)], margin=0.0) == 1
    # equal factors: the first; no convergence with one, convergence with the other
    assert least_work_choice([("a", 0.3, 10.0), ("b", 0.3, 10.0)]) == "a"
    assert least_work_choice([(1, 1.2, 10.0), (2, 0.5, 18.0)]) == 2
    assert least_work_choice([(1, 1.2, 10.0), (2, 1.1, 18.0)]) == 1
    # a cycle that solved the trial exactly (factor 0) costs its work over 16 digits
    assert least_work_choice([(1, 0.01, 10.0), (2, 0.0, 70.0)]) == 2  # 5.0 against 4.4


def test_krylov_work_counts_spmvs_and_vector_passes():
    from kernels.amg.cycle import KRYLOV_VECTOR_PASSES, krylov_work

    A = matrices.poisson2d(16)  # 5 nonzeros a row but at the boundary
    assert krylov_work(A) == pytest.approx(2 + KRYLOV_VECTOR_PASSES * A.shape[0] / A.nnz)


def test_cycle_work_counts_smoothing_and_visits():
    from kernels.amg.cycle import cycle_work

    A = matrices.poisson2d(32)
    M = amg(A, coarsening="pairwise", smoother="jacobi", max_coarse=20)
    one = cycle_work(M._cycle)
    two = cycle_work(amg(A, coarsening="pairwise", smoother="jacobi", max_coarse=20, presmooth=2)._cycle)
    # each level's smoothing doubles, its transfers stay: per level (pre + post) x 2 updates
    # (symmetric sweep) x (nnz + n) more
    extra = sum(4 * (lvl.A.nnz + lvl.n) for lvl in M.hierarchy.levels) / A.nnz
    assert two - one == pytest.approx(extra)
    w = cycle_work(amg(A, coarsening="pairwise", smoother="jacobi", max_coarse=20, cycle="W")._cycle)
    assert w > one


def test_auto_steps_choose_the_count_with_less_work_per_digit():
    from kernels.amg.cycle import krylov_factor, least_work_choice

    A = matrices.aniso2(48)
    M = amg(A, presmooth="auto")
    assert [s for s, _, _ in M.step_measurements] == [1, 2]
    assert [m[:2] for m in M.cycle_measurements] == [("richardson", 1), ("richardson", 2)]
    assert M.relaxation_measurements == []
    factors = {s: f for s, f, _ in M.step_measurements}
    work = {s: w for s, _, w in M.step_measurements}
    assert factors[2] < factors[1] < 1 and work[2] > work[1]
    assert M.presmooth == M.postsmooth == least_work_choice(M.step_measurements)
    assert M.symmetric and "smoothing steps" in M.setup_time
    # the chosen cycle is the one measured
    assert krylov_factor(A, M.matvec, precond.bicgstab) == pytest.approx(factors[M.presmooth], rel=1e-9)
    # given counts are not measured; one given count is both
    G = amg(A, presmooth=2)
    assert (G.presmooth, G.postsmooth, G.step_measurements, G.cycle_measurements) == (2, 2, [], [])
    with pytest.raises(ValueError, match="auto"):
        amg(A, presmooth="auto", postsmooth=2)


@pytest.mark.parametrize("name, steps", [("cage9", 2), ("bcsstk21", 2), ("aniso1", 1)])
def test_auto_steps_take_a_second_step_where_it_costs_no_more_per_digit(name, steps):
    """On small matrices the dense coarse inverse and the transfers are a large share of a
    cycle, so that a second smoothing step costs little more per digit (cage9: less) and
    saves iterations: 2 instead of 3 on cage9, 13 instead of 18 on bcsstk21 (pyamg's
    smoothed aggregation with Gauss-Seidel: 2 and 15). On ANISO1 one step is cheaper."""
    A = matrices.aniso1(64) if name == "aniso1" else _real_matrix(name)
    M = amg(A, presmooth="auto")
    assert M.presmooth == steps
    b = A @ np.sin(np.arange(A.shape[0]))
    auto = precond.solve(A, b, M, rtol=1e-8)
    one = precond.solve(A, b, amg(A), rtol=1e-8)
    assert auto.converged and auto.iterations <= one.iterations


def test_auto_relaxation_and_steps_are_chosen_together():
    from kernels.amg.cycle import least_work_choice

    A = _real_matrix("pde2961")
    M = amg(A, presmooth="auto", smoother=("algebraic_tridiagonal", {"relaxation": "auto"}))
    assert [m[:2] for m in M.cycle_measurements] == [("richardson", 1), ("richardson", 2), ("gauss_seidel", 1),
                                                     ("gauss_seidel", 2)]
    chosen = least_work_choice([((r, k), f, w) for r, k, f, w in M.cycle_measurements])
    assert (M.relaxation, M.presmooth) == chosen == ("gauss_seidel", 1)
    assert [m[0] for m in M.relaxation_measurements] == ["richardson", "gauss_seidel"]
    assert [m[0] for m in M.step_measurements] == [1, 2]
    assert "relaxation and smoothing steps" in M.setup_time


# ------------------------------------------------------------ multicolour line Gauss-Seidel
def _block_gauss_seidel_reference(A, gs, x, b, backward=False):
    """The sweep of :class:`LineGaussSeidel` written densely: colour by colour, every line
    of the colour solved with its tridiagonal system from the residual with the current x."""
    A = A.toarray()
    c = gs.colouring
    dl, inv, cp = gs._factors
    # the line systems as dense matrices from the factors: T = L U with U unit upper
    n = A.shape[0]
    order = c.order
    T = np.zeros((n, n))
    den = 1 / inv
    for k in range(n):
        T[k, k] = den[k] + (dl[k] * cp[k - 1] if k > 0 else 0.0)
        if k > 0:
            T[k, k - 1] = dl[k]
        if k < n - 1:
            T[k, k + 1] = cp[k] * den[k]
    colours = range(c.n_colours)
    for col in (reversed(colours) if backward else colours):
        rows = order[c.colour_start[col]:c.colour_start[col + 1]]
        block = slice(c.colour_start[col], c.colour_start[col + 1])
        r = b[rows] - A[rows] @ x
        x[rows] += np.linalg.solve(T[block, block], r)
    return x


@pytest.mark.parametrize("l1", [False, True])
@pytest.mark.parametrize("name", ["rotated_anisotropic2d", "convection_diffusion3d"])
def test_line_gauss_seidel_sweep_is_block_gauss_seidel_by_colours(name, l1, rng, monkeypatch):
    from kernels.amg import line_gs
    from kernels.amg.line_gs import LineGaussSeidel

    A = matrices.get(name, n=12 if name.startswith("rot") else 6).tocsr()
    f = precond.algebraic_tridiagonal(A).forest
    gs = LineGaussSeidel(A, f.permutation, f.path_start, f.neighbors, l1=l1)
    c = gs.colouring
    assert sorted(c.order.tolist()) == list(range(A.shape[0])) and c.n_colours >= 2
    # no two lines of one colour are coupled, in either direction
    colour_of = np.empty(A.shape[0], dtype=int)
    for col in range(c.n_colours):
        colour_of[c.order[c.colour_start[col]:c.colour_start[col + 1]]] = col
    C = sp.coo_matrix(A)
    same = (colour_of[C.row] == colour_of[C.col]) & (c.line_of[C.row] != c.line_of[C.col])
    assert not same.any()
    # the lines are the forest's paths, whole and in their order
    paths = {tuple(p) for p in f.paths()}
    lines = {}
    for v in c.order:
        lines.setdefault(c.line_of[v], []).append(int(v))
    assert {tuple(p) for p in lines.values()} == paths
    b, x0 = rng.standard_normal((2, A.shape[0]))
    for backward in (False, True):
        ref = _block_gauss_seidel_reference(A, gs, x0.copy(), b, backward)
        serial = gs.sweep(x0.copy(), b, backward=backward)
        np.testing.assert_allclose(serial, ref, rtol=1e-10, atol=1e-12)
        monkeypatch.setattr(line_gs, "PARALLEL_ROWS", 0)  # the lines of a colour in threads: the same values
        np.testing.assert_array_equal(gs.sweep(x0.copy(), b, backward=backward), serial)
        monkeypatch.undo()


def _coupled_lines(A, line_of):
    """{line: the set of other lines coupled to it by an entry in either direction}."""
    C = sp.coo_matrix(A)
    out = {}
    for i, j in zip(C.row, C.col):
        a, b = int(line_of[i]), int(line_of[j])
        if a != b:
            out.setdefault(a, set()).add(b)
            out.setdefault(b, set()).add(a)
    return out


def _check_first_fit_by_priority(A, c):
    """Every line's colour is the least that no coupled line of higher priority has."""
    from kernels.amg.line_gs import line_priority

    n_lines = len(c.line_start) - 1
    colour = np.empty(n_lines, dtype=int)
    for col in range(c.n_colours):
        colour[c.colour_lines[col]:c.colour_lines[col + 1]] = col
    line_colour = {}
    for pos, line in enumerate(np.asarray(c.line_of)[np.asarray(c.order)[np.asarray(c.line_start)[:-1]]]):
        line_colour[int(line)] = colour[pos]
    prio = line_priority(n_lines).astype(np.int64)
    for line, others in _coupled_lines(A, c.line_of).items():
        before = {line_colour[o] for o in others if (prio[o], -o) > (prio[line], -line)}
        assert line_colour[line] == min(set(range(len(before) + 1)) - before)


@pytest.mark.parametrize("name", ["rotated_anisotropic2d", "convection_diffusion3d", "unsymmetric"])
def test_line_colouring_is_first_fit_by_priority(name):
    """The colouring the GPU computes in Jones-Plassmann rounds is defined sequentially:
    first-fit over the lines by decreasing hash priority (coupled lines apart)."""
    from kernels.amg.line_gs import line_colouring

    if name == "unsymmetric":  # a pattern that is not symmetric: the transpose's couplings count
        A = (sp.random(300, 300, density=0.01, random_state=3, format="csr") + sp.eye(300)).tocsr()
        c = line_colouring(A, None, None)
        assert c.n_colours >= 2
        _check_first_fit_by_priority(A, c)
        return
    A = matrices.get(name, n=30 if name.startswith("rot") else 8).tocsr()
    f = precond.algebraic_tridiagonal(A).forest
    c = line_colouring(A, f.permutation, f.path_start, symmetric_pattern=True)
    _check_first_fit_by_priority(A, c)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["rotated_anisotropic2d", "unsymmetric", "points"])
def test_gpu_line_colouring_and_chords_are_the_cpus(name):
    import cupy

    from kernels.amg.line_gs import chord_weights, line_colouring
    from kernels.backend import to_device, to_host

    if name == "unsymmetric":
        A = (sp.random(3000, 3000, density=0.002, random_state=4, format="csr") + sp.eye(3000)).tocsr()
        perm = starts = partners = None
    else:
        A = matrices.get("rotated_anisotropic2d", n=60).tocsr()
        f = precond.algebraic_tridiagonal(A).forest
        perm, starts, partners = f.permutation, f.path_start, np.asarray(f.neighbors, dtype=np.int64)
        if name == "points":
            perm = starts = partners = None
    symmetric = name != "unsymmetric"
    cpu = line_colouring(A, perm, starts, symmetric_pattern=symmetric)
    gpu = line_colouring(to_device(A), perm, starts, symmetric_pattern=symmetric)
    assert gpu.n_colours == cpu.n_colours
    for key in ("order", "line_start", "line_of", "colour_start", "colour_lines"):
        np.testing.assert_array_equal(to_host(getattr(gpu, key)), getattr(cpu, key))
    if partners is None:
        partners = np.full((A.shape[0], 2), -1)
    chords = chord_weights(A, cpu, partners)
    assert chord_weights(to_device(A), gpu, cupy.asarray(partners)).get().tobytes() == chords.tobytes()


def test_line_gauss_seidel_l1_adds_the_chords():
    from kernels.amg.line_gs import LineGaussSeidel, chord_weights

    # one line 0-1-2-3 (the forest's partners) with a chord 0-2 of weight 0.5
    A = sp.csr_matrix(np.array([[4.0, -1, 0.5, 0], [-1, 4, -1, 0], [0.5, -1, 4, -1], [0, 0, -1, 4]]))
    partners = np.array([[1, -1], [0, 2], [1, 3], [2, -1]])
    perm, starts = np.arange(4), np.array([0, 4])
    gs = LineGaussSeidel(A, perm, starts, partners, l1=True)
    np.testing.assert_allclose(chord_weights(A, gs.colouring, partners), [0.5, 0, 0.5, 0])
    assert gs.n_colours == 1
    b = np.ones(4)
    x = gs.sweep(None, b)  # one line, one colour: the l1-modified tridiagonal solve
    T = np.diag([4.5, 4, 4.5, 4]) + np.diag([-1.0, -1, -1], 1) + np.diag([-1.0, -1, -1], -1)
    np.testing.assert_allclose(x, np.linalg.solve(T, b))


@pytest.mark.parametrize("smoother", [("algebraic_tridiagonal", {"relaxation": "gauss_seidel"}),
                                      ("algebraic_tridiagonal", {"relaxation": "gauss_seidel", "sweep": "forward"}),
                                      ("jacobi", {"relaxation": "gauss_seidel"})])
def test_gauss_seidel_cycle_is_fixed_symmetric_linear_operator(smoother, rng):
    A = matrices.random_diffusion2d(24, contrast=2.0)
    M = amg(A, max_coarse=30, smoother=smoother)
    assert M.symmetric and "Gauss-Seidel" in M.levels[0].smoother and "(Gauss-Seidel)" in repr(M)
    x, y = rng.standard_normal((2, A.shape[0]))
    Mx, My = M.matvec(x), M.matvec(y)
    np.testing.assert_allclose(M.matvec(x), Mx, rtol=0, atol=0)
    np.testing.assert_allclose(M.matvec(2 * x - 3 * y), 2 * Mx - 3 * My, atol=1e-10 * np.abs(Mx).max())
    assert abs(y @ Mx - x @ My) <= 1e-9 * abs(x @ Mx)
    assert x @ Mx > 0


def _real_matrix(name):
    from matrices.suitesparse import shared_data_dir

    path = shared_data_dir() / "matrices" / f"{name}.mtx"
    if not path.is_file():
        pytest.skip(f"{path} not present")
    return matrices.get(str(path)).tocsr()


@pytest.mark.parametrize("name, better", [("rotated_anisotropic2d", "richardson"), ("pde2961", "gauss_seidel"),
                                          ("orsreg_1", "richardson")])
def test_auto_relaxation_keeps_the_measured_better_one(name, better):
    """Equal cycle work; BiCGStab gains more digits per iteration with the multiplicative
    sweep on pde2961 (5 iterations to rtol 1e-8 against 8) and fewer on rotated anisotropy
    (25 against 13); on orsreg_1 line Gauss-Seidel does not converge. The set-up measures
    both and keeps the better, with the smoothers of that relaxation."""
    from kernels.amg.cycle import krylov_factor
    from kernels.amg.line_gs import GaussSeidelSmoother

    A = matrices.get(name, n=48) if name.startswith("rot") else _real_matrix(name)
    small = A.shape[0] < 3000
    M = amg(A, max_coarse=40 if not small else 500, smoother=("algebraic_tridiagonal", {"relaxation": "auto"}))
    (r, fr, wr), (g, fg, wg) = M.relaxation_measurements
    assert (r, g) == ("richardson", "gauss_seidel") and wr == pytest.approx(wg)
    assert M.relaxation == better and "relaxation" in M.setup_time
    assert isinstance(M.smoothers[0], GaussSeidelSmoother) == (better == "gauss_seidel")
    fixed = amg(A, max_coarse=40 if not small else 500, smoother=("algebraic_tridiagonal", {"relaxation": better}))
    assert krylov_factor(A, fixed.matvec, precond.bicgstab) == pytest.approx(min(fr, fg), rel=1e-6)
    b = A @ np.ones(A.shape[0])
    chosen, other = (precond.solve(A, b, amg(A, max_coarse=40 if not small else 500, smoother=(
        "algebraic_tridiagonal", {"relaxation": rel})), rtol=1e-8, maxiter=100)
        for rel in (better, "gauss_seidel" if better == "richardson" else "richardson"))
    assert chosen.converged and (not other.converged or chosen.iterations < other.iterations)


def test_gauss_seidel_bad_options():
    A = matrices.poisson2d(10)
    with pytest.raises(ValueError, match="relaxation"):
        amg(A, smoother=("algebraic_tridiagonal", {"relaxation": "sor"}))
    with pytest.raises(ValueError, match="gauss_seidel"):
        amg(A, smoother=("algebraic_block_tridiagonal", {"relaxation": "gauss_seidel"}))
    with pytest.raises(ValueError, match="adjoint"):
        amg(matrices.convection_diffusion3d(6), symmetric=True, max_coarse=20,
            smoother=("algebraic_tridiagonal", {"relaxation": "gauss_seidel"}))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["rotated_anisotropic2d", "convection_diffusion3d"])
def test_gpu_line_gauss_seidel_sweep_is_the_cpus(name, dtype):
    """The same colouring and line systems; one sweep each way agrees to rounding (the GPU's
    residual sums in lanes, its tridiagonal solver is the partitioned one)."""
    import cupy

    from kernels.amg.line_gs import LineGaussSeidel
    from kernels.backend import to_device

    A = matrices.get(name, n=40 if name.startswith("rot") else 12, dtype=dtype).tocsr()
    f = precond.algebraic_tridiagonal(A).forest
    cpu = LineGaussSeidel(A, f.permutation, f.path_start, f.neighbors, l1=True)
    gpu = LineGaussSeidel(to_device(A), f.permutation, f.path_start, f.neighbors, l1=True)
    assert np.array_equal(cpu.colouring.order, gpu.colouring.order.get()) and gpu.n_colours == cpu.n_colours
    b = np.sin(np.arange(A.shape[0])).astype(dtype)
    for backward in (False, True):
        x = cpu.sweep(None, b, backward=backward)
        xg = gpu.sweep(None, cupy.asarray(b), backward=backward)
        tol = 1e-4 if dtype == np.float32 else 1e-10
        np.testing.assert_allclose(xg.get(), x, rtol=0, atol=tol * np.abs(x).max())


@pytest.mark.gpu
def test_gpu_auto_relaxation_and_steps_measure_as_the_cpu():
    """Both "auto" on the GPU: the four cycles' BiCGStab factors as on the CPU, their
    work as measured time, the choice by the same rule; the chosen cycle converges as the
    CPU's choice does where the two choose alike."""
    import cupy

    from kernels.amg.cycle import least_work_choice
    from kernels.backend import to_device

    A = _real_matrix("cage9")
    opts = dict(presmooth="auto", smoother=("algebraic_tridiagonal", {"relaxation": "auto"}))
    cpu, gpu = amg(A, **opts), amg(to_device(A), **opts)
    assert [m[:2] for m in gpu.cycle_measurements] == [m[:2] for m in cpu.cycle_measurements]
    for (_, _, fc, _), (_, _, fg, wg) in zip(cpu.cycle_measurements, gpu.cycle_measurements):
        # (a trial that reaches 1e-10 stops; near there rounding may move the stop by one)
        assert (fg == pytest.approx(fc, rel=1e-2) or max(fc, fg) < 1e-3) and 0 < wg < np.inf
    assert (gpu.relaxation, gpu.presmooth) == least_work_choice(
        [((r, k), f, w) for r, k, f, w in gpu.cycle_measurements])
    b = A @ np.sin(np.arange(A.shape[0]))
    res = precond.solve(to_device(A), cupy.asarray(b), gpu, rtol=1e-8)
    assert res.converged
    if (gpu.relaxation, gpu.presmooth) == (cpu.relaxation, cpu.presmooth):
        assert abs(res.iterations - precond.solve(A, b, cpu, rtol=1e-8).iterations) <= 1


@pytest.mark.gpu
def test_gpu_auto_relaxation_measures_time():
    """On the GPU relaxation="auto" takes the cycles' Krylov factors as the CPU does, and
    their work as measured time (in SpMVs of the finest matrix, launches included):
    a Gauss-Seidel cycle measures slower than its memory traffic says, and the choice is
    the one with the least measured time per digit."""
    from kernels.amg.cycle import least_work_choice
    from kernels.backend import to_device

    for A, max_coarse in ((matrices.rotated_anisotropic2d(48), 40), (_real_matrix("pde2961"), 500)):
        opts = dict(max_coarse=max_coarse, smoother=("algebraic_tridiagonal", {"relaxation": "auto"}))
        cpu, gpu = amg(A, **opts), amg(to_device(A), **opts)
        assert [m[0] for m in gpu.relaxation_measurements] == ["richardson", "gauss_seidel"]
        for (rc, fc, wc), (rg, fg, wg) in zip(cpu.relaxation_measurements, gpu.relaxation_measurements):
            assert rc == rg and fg == pytest.approx(fc, rel=1e-3) and 0 < wg < np.inf
        (_, _, w_rich), (_, _, w_gs) = gpu.relaxation_measurements
        (_, _, m_rich), (_, _, m_gs) = cpu.relaxation_measurements
        assert w_gs / w_rich > m_gs / m_rich  # the launches of the colours count on the device
        assert gpu.relaxation == least_work_choice(gpu.relaxation_measurements)
