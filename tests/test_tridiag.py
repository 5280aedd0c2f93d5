"""Tridiagonal and 2x2 block tridiagonal solvers, coefficient extraction (CPU and GPU)."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import matrices
from kernels.tridiag import (BlockTridiagonalSolver, TridiagonalSolver, extract_tridiagonal, partner_entries,
                             tridiagonal_solve)


def _system(rng, n, dtype=np.float64, dominant=True):
    dl, du = rng.standard_normal(n), rng.standard_normal(n)
    d = (4 + rng.random(n)) if dominant else rng.standard_normal(n)
    return dl.astype(dtype), d.astype(dtype), du.astype(dtype)


def _dense(dl, d, du):
    return sp.diags([dl[1:], d, du[:-1]], [-1, 0, 1]).toarray()


@pytest.mark.parametrize("n", [1, 2, 7, 1000])
def test_solve_matches_dense(rng, n):
    dl, d, du = _system(rng, n)
    b = rng.standard_normal(n)
    x = TridiagonalSolver(dl, d, du).solve(b)
    np.testing.assert_allclose(_dense(dl, d, du) @ x, b, atol=1e-12)


def test_permuted_solve_and_multiple_rhs(rng):
    n = 300
    dl, d, du = _system(rng, n)
    perm = rng.permutation(n)
    s = TridiagonalSolver(dl, d, du, perm)
    b = rng.standard_normal((n, 3))
    x = s.solve(b)
    T = _dense(dl, d, du)
    for k in range(3):
        np.testing.assert_allclose(T @ x[perm, k], b[perm, k], atol=1e-12)


def test_batched_independent_systems(rng):
    dl, d, du = (a.reshape(4, 25) for a in _system(rng, 100))
    b = rng.standard_normal((4, 25))
    x = tridiagonal_solve(dl, d, du, b)
    for k in range(4):
        np.testing.assert_allclose(_dense(dl[k], d[k], du[k]) @ x[k], b[k], atol=1e-12)


def test_solve_does_not_mutate_input(rng):
    dl, d, du = _system(rng, 50)
    b = rng.standard_normal(50)
    keep = b.copy()
    x = TridiagonalSolver(dl, d, du).solve(b)
    assert x is not b and np.array_equal(b, keep)


def test_zero_pivot_warns_and_stays_finite():
    with pytest.warns(RuntimeWarning, match="zero or tiny pivot"):
        s = TridiagonalSolver(np.array([0.0, 1.0, 1.0]), np.array([1.0, 1.0, 1.0]), np.array([1.0, 1.0, 0.0]))
    assert np.all(np.isfinite(s.solve(np.ones(3))))


def test_bad_input():
    with pytest.raises(ValueError, match="same length"):
        TridiagonalSolver(np.ones(2), np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="empty"):
        TridiagonalSolver(np.ones(0), np.ones(0), np.ones(0))
    with pytest.raises(ValueError, match="length"):
        TridiagonalSolver(np.ones(3), np.ones(3), np.ones(3)).solve(np.ones(4))
    for sizes in ({"chunk": 1}, {"upper_chunk": 1}, {"chunk": 17}, {"upper_chunk": 32}):
        with pytest.raises(ValueError, match="chunk"):
            TridiagonalSolver(np.ones(3), np.ones(3), np.ones(3), **sizes)


def test_complex_cpu(rng):
    n = 20
    dl, d, du = (a + 1j * rng.standard_normal(n) for a in _system(rng, n))
    b = rng.standard_normal(n) + 0j
    x = TridiagonalSolver(dl, d, du).solve(b)
    np.testing.assert_allclose(_dense(dl, d, du) @ x, b, atol=1e-12)


def _symmetric_indefinite(rng, n, dtype=np.float64):
    """Symmetric tridiagonal system with a positive diagonal and some negative eigenvalues,
    its pivots well away from zero (couplings of size 1.2 between entries of size 1 to 2)."""
    d = (1 + rng.random(n)).astype(dtype)
    off = np.where(rng.random(n) < 0.3, 1.2, 0.3).astype(dtype)
    off[rng.random(n) < 0.05] = 0  # independent sub-systems
    dl = np.concatenate([[0], off[:-1]]).astype(dtype)
    du = np.concatenate([off[:-1], [0]]).astype(dtype)
    return dl, d, du


def _negative_eigenvalues(dl, d, du):
    return int((np.linalg.eigvalsh(_dense(dl, d, du).astype(np.float64)) < 0).sum())


@pytest.mark.parametrize("n", [1, 9, 300])
def test_negative_pivots_count_negative_eigenvalues(rng, n):
    dl, d, du = _symmetric_indefinite(rng, n)
    s = TridiagonalSolver(dl, d, du, rng.permutation(n))
    assert s.negative_pivots == _negative_eigenvalues(dl, d, du)
    assert s.negative_diagonal == 0
    neg = TridiagonalSolver(-dl, -d, -du)  # negative definite or not, every sign flips
    assert neg.negative_pivots == n - s.negative_pivots and neg.negative_diagonal == n
    definite = TridiagonalSolver(*_system(rng, n))
    assert definite.negative_pivots == definite.negative_diagonal == 0


def test_block_tiny_pivots_are_tiny_for_their_own_row(rng):
    """A pivot block is tiny relative to its own block row, as on the GPU: on a system whose
    rows span eight orders of magnitude (random_diffusion2d's coefficients span more) no
    well-conditioned block is boosted (a scale taken over the whole system boosted half)."""
    L, D, U, index = _block_system(rng, 400, np.float32)
    rows = np.where(np.arange(400) < 200, 1e8, 1.0).astype(np.float32)[:, None, None]
    L, D, U = L * rows, D * rows, U * rows  # row-scaled: still block tridiagonal, same solution scale
    s = BlockTridiagonalSolver(L, D, U, index)
    assert s.boosted == 0
    b = rng.standard_normal(s.n).astype(np.float32)
    ref = BlockTridiagonalSolver(L.astype(np.float64), D.astype(np.float64), U.astype(np.float64), index).solve(b)
    np.testing.assert_allclose(s.solve(b), ref, rtol=1e-3, atol=1e-3 * np.abs(ref).max())


def test_block_negative_pivots_count_negative_eigenvalues(rng):
    m = 40
    D = rng.standard_normal((m, 2, 2))
    D = D + D.transpose(0, 2, 1) + 2.5 * np.eye(2)
    L = rng.standard_normal((m, 2, 2)) * 0.9
    L[0] = 0
    U = np.concatenate([L[1:].transpose(0, 2, 1), np.zeros((1, 2, 2))])  # symmetric system
    dense = np.zeros((2 * m, 2 * m))
    for i in range(m):
        dense[2 * i:2 * i + 2, 2 * i:2 * i + 2] = D[i]
        if i:
            dense[2 * i:2 * i + 2, 2 * i - 2:2 * i] = L[i]
            dense[2 * i - 2:2 * i, 2 * i:2 * i + 2] = U[i - 1]
    s = BlockTridiagonalSolver(L, D, U, np.arange(2 * m).reshape(m, 2))
    assert s.negative_pivots == int((np.linalg.eigvalsh(dense) < 0).sum()) > 0
    assert s.negative_diagonal == sum(int((np.linalg.eigvalsh(b) < 0).sum()) for b in D)


def test_block_solver_exact_on_block_tridiagonal(rng):
    m = 30
    L, D, U = rng.standard_normal((m, 2, 2)), rng.standard_normal((m, 2, 2)) + 6 * np.eye(2), rng.standard_normal((m, 2, 2))
    index = np.arange(2 * m).reshape(m, 2)
    index[5, 1] = -1  # a ghost unknown
    D[5, 1, :] = D[5, :, 1] = 0
    D[5, 1, 1] = 1
    L[5, 1, :] = U[5, 1, :] = L[6, :, 1] = U[4, :, 1] = 0
    n = 2 * m
    dense = np.zeros((n, n))
    for i in range(m):
        dense[2 * i:2 * i + 2, 2 * i:2 * i + 2] = D[i]
        if i:
            dense[2 * i:2 * i + 2, 2 * i - 2:2 * i] = L[i]
            dense[2 * i - 2:2 * i, 2 * i:2 * i + 2] = U[i - 1]
    keep = index.ravel() >= 0
    ids = np.full(n, -1)
    ids[keep] = np.arange(keep.sum())
    index = np.where(index >= 0, ids.reshape(m, 2), -1)
    b = rng.standard_normal(int(keep.sum()))
    x = BlockTridiagonalSolver(L, D, U, index).solve(b)
    full_b = np.ones(n)
    full_b[keep] = b
    ref = np.linalg.solve(dense, full_b)
    np.testing.assert_allclose(x, ref[keep], atol=1e-10)


def test_extract_original_and_forest_orders():
    A = matrices.aniso1(6)
    dl, d, du = extract_tridiagonal(A)
    np.testing.assert_array_equal(d, A.diagonal())
    np.testing.assert_array_equal(du[:-1], A.diagonal(1))
    np.testing.assert_array_equal(dl[1:], A.diagonal(-1))
    perm = np.arange(36)[::-1].copy()
    partners = -np.ones((36, 2), dtype=np.int64)
    partners[0, 0], partners[1, 0] = 1, 0  # only the edge {0, 1} is a forest edge
    dl, d, du = extract_tridiagonal(A, perm, partners)
    # new position of 1 is 34, of 0 is 35: entry a_{1,0} becomes the upper coefficient of row 34
    assert du[34] == A[1, 0] and dl[35] == A[0, 1]
    assert np.count_nonzero(dl) == 1 and np.count_nonzero(du) == 1
    # a permutation without a forest: the tridiagonal part of the permuted matrix
    perm = np.random.default_rng(3).permutation(36)
    B = A[perm][:, perm]
    dl, d, du = extract_tridiagonal(A, perm)
    np.testing.assert_array_equal(d, B.diagonal())
    np.testing.assert_array_equal(du[:-1], B.diagonal(1))
    np.testing.assert_array_equal(dl[1:], B.diagonal(-1))
    assert dl[0] == 0 and du[-1] == 0
    # a forest in the original order: only the edge {0, 1} enters the off-diagonals
    dl, d, du = extract_tridiagonal(A, partners=partners)
    assert du[0] == A[0, 1] and dl[1] == A[1, 0]
    assert np.count_nonzero(dl) == 1 and np.count_nonzero(du) == 1
    for bad in ({"perm": perm[:-1]}, {"partners": partners[:, :1]}):
        with pytest.raises(ValueError, match="shape"):
            extract_tridiagonal(A, **bad)
    # the forest's system factorized at once: the extracted system's solver (the CPU extracts)
    perm = np.random.default_rng(4).permutation(36)
    b = np.arange(36.0)
    np.testing.assert_array_equal(TridiagonalSolver.from_forest(A, perm, partners).solve(b),
                                  TridiagonalSolver(*extract_tridiagonal(A, perm, partners), perm).solve(b))
    with pytest.raises(ValueError, match="needs the partners"):
        TridiagonalSolver.from_forest(A, perm, None)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [5, 64, 65, 1000, 33 * 32 + 7, 25_600, 200_000])
def test_gpu_solver_matches_cpu(rng, dtype, n):
    import cupy

    dl, d, du = _system(rng, n, dtype)
    dl[rng.random(n) < 0.05] = 0  # independent sub-systems
    perm = rng.permutation(n)
    b = rng.standard_normal(n).astype(dtype)
    cpu = TridiagonalSolver(dl, d, du, perm).solve(b)
    tol = 2e-4 if dtype == np.float32 else 1e-11
    # the default chunks, chunks shorter than either unrolled sweep, and the longest
    for sizes in ({}, {"chunk": 5, "upper_chunk": 11}, {"chunk": 16, "upper_chunk": 16}, {"chunk": 2, "upper_chunk": 3}):
        gpu = TridiagonalSolver(*(cupy.asarray(a) for a in (dl, d, du)), cupy.asarray(perm), **sizes)
        np.testing.assert_allclose(gpu.solve(cupy.asarray(b)).get(), cpu, rtol=tol, atol=tol, err_msg=str(sizes))
    plain = TridiagonalSolver(*(cupy.asarray(a) for a in (dl, d, du))).solve(cupy.asarray(b))
    np.testing.assert_allclose(plain.get(), TridiagonalSolver(dl, d, du).solve(b), rtol=tol, atol=tol)


@pytest.mark.parametrize("n, chunks, first_top, n_levels", [
    (1000, (8, 16), 1, 2),  # level 1 (8 chunks) is a top level
    (25_600, (8, 16), 1, 3),
    (200_000, (8, 16), 2, 4),
    (200_000, (2, 3), 6, 8),
    (64, (8, 16), 0, 0),  # no levels: the bottom alone
])
def test_top_levels_of_partitioned_plans(n, chunks, first_top, n_levels):
    """The GPU apply solves the levels above level 0 of at most TOP_LEVEL_CHUNKS chunks in
    one block (tridiag.cu: top_solve)."""
    from kernels.tridiag.partition import SCALAR_LAYOUT, TOP_LEVEL_CHUNKS, first_top_level, partition_plan

    levels, _, _ = partition_plan(n, *chunks, TridiagonalSolver.bottom_size, SCALAR_LAYOUT)
    assert (first_top_level(levels), len(levels)) == (first_top, n_levels)
    assert all(P > TOP_LEVEL_CHUNKS for _, _, P, _ in levels[1:first_top])
    assert all(P <= TOP_LEVEL_CHUNKS for _, _, P, _ in levels[first_top:])


@pytest.mark.gpu
def test_gpu_extract_matches_cpu(rng):
    from kernels.backend import to_device

    import precond

    A = matrices.convection_diffusion3d(10)
    f = precond.factor(A, n=2)
    lf = precond.linear_forest(A, f)
    ref = extract_tridiagonal(A, lf.permutation, lf.neighbors)
    Ad = to_device(A)
    fg = precond.factor(Ad, n=2)
    lg = precond.linear_forest(Ad, fg)
    np.testing.assert_array_equal(partner_entries(Ad, fg.neighbors).get(), partner_entries(A, f.neighbors))
    for got in (extract_tridiagonal(Ad, lg.permutation, lg.neighbors),
                extract_tridiagonal(Ad, lg.permutation, fg.neighbors)):  # the factor's partners
        for a, b in zip(got, ref):
            np.testing.assert_array_equal(a.get(), b)
    for a, b in zip(extract_tridiagonal(Ad, partners=lg.neighbors), extract_tridiagonal(A, partners=lf.neighbors)):
        np.testing.assert_array_equal(a.get(), b)  # a forest in the original order
    for a, b in zip(extract_tridiagonal(Ad), extract_tridiagonal(A)):
        np.testing.assert_array_equal(a.get(), b)
    perm = rng.permutation(A.shape[0])
    for a, b in zip(extract_tridiagonal(Ad, to_device(perm)), extract_tridiagonal(A, perm)):
        np.testing.assert_array_equal(a.get(), b)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gpu_forest_system_gathered_by_the_factorization(rng, dtype):
    """``TridiagonalSolver.from_forest`` (level 0 gathered by the factorization) equals the
    solver of the extracted system: the same solves and counts, bit for bit, for every
    chunk size (the last chunk padded or not), and below ``bottom_size`` (extracted)."""
    import cupy

    from kernels.backend import to_device

    import precond

    cases = [matrices.convection_diffusion3d(10), matrices.random_diffusion2d(40), -matrices.aniso1(30),
             matrices.poisson2d(7)]  # 49 rows: no levels
    for A in cases:
        Ad = to_device(A.astype(dtype))
        f = precond.factor(Ad, n=2)
        lf = precond.linear_forest(Ad, f)
        b = cupy.asarray(rng.standard_normal(A.shape[0]).astype(dtype))
        for partners in (f.neighbors, lf.neighbors):
            for sizes in ({}, {"chunk": 5, "upper_chunk": 11}, {"chunk": 16, "upper_chunk": 16},
                          {"chunk": 2, "upper_chunk": 3}):
                ref = TridiagonalSolver(*extract_tridiagonal(Ad, lf.permutation, partners), lf.permutation, **sizes)
                for entries in (None, partner_entries(Ad, partners)):
                    got = TridiagonalSolver.from_forest(Ad, lf.permutation, partners, entries=entries, **sizes)
                    np.testing.assert_array_equal(got.solve(b).get(), ref.solve(b).get(), err_msg=str(sizes))
                    assert (got.boosted, got.negative_pivots, got.negative_diagonal) == \
                        (ref.boosted, ref.negative_pivots, ref.negative_diagonal)
    with pytest.raises(ValueError, match="perm must have shape"):
        TridiagonalSolver.from_forest(Ad, lf.permutation[:-1], f.neighbors)


def _misaligned(x):
    """A C-contiguous device copy of ``x`` whose data starts one element into a buffer (not
    aligned to the pairs and quads of ``pairs.cuh``)."""
    import cupy

    buf = cupy.empty(x.size + 1, dtype=x.dtype)
    view = buf[1:].reshape(x.shape)
    view[...] = cupy.asarray(x)
    assert view.flags.c_contiguous and view.data.ptr % (2 * x.dtype.itemsize)
    return view


@pytest.mark.gpu
def test_gpu_pair_reads_of_misaligned_views():
    """Partners, weights and records given as views that start inside a row give the results
    of aligned arrays (the kernels read them in pairs and quads)."""
    from kernels.backend import to_device
    from kernels.forest import linear_forest_ruling

    import precond

    Ad = to_device(matrices.random_diffusion2d(30))
    f = precond.factor(Ad, n=2)
    ref = linear_forest_ruling(f.neighbors, f.weights)
    got = linear_forest_ruling(_misaligned(f.neighbors), _misaligned(f.weights))
    for a, b in zip(got, ref):
        np.testing.assert_array_equal(a.get(), b.get())
    entries = partner_entries(Ad, f.neighbors)
    np.testing.assert_array_equal(partner_entries(Ad, _misaligned(f.neighbors)).get(), entries.get())
    perm = ref[3]
    for a, b in zip(extract_tridiagonal(Ad, perm, _misaligned(f.neighbors), entries=_misaligned(entries)),
                    extract_tridiagonal(Ad, perm, f.neighbors, entries=entries)):
        np.testing.assert_array_equal(a.get(), b.get())


@pytest.mark.gpu
def test_gpu_zero_pivot_warns():
    import cupy

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = TridiagonalSolver(cupy.zeros(500), cupy.zeros(500), cupy.zeros(500))
    assert any("pivot" in str(w.message) for w in caught)
    assert bool(cupy.isfinite(s.solve(cupy.ones(500))).all())


def _block_system(rng, m, dtype):
    """Random diagonally dominant 2x2 block system with path breaks and ghost unknowns."""
    D = rng.standard_normal((m, 2, 2)) * 0.3 + 4 * np.eye(2)
    L, U = rng.standard_normal((m, 2, 2)) * 0.8, rng.standard_normal((m, 2, 2)) * 0.8
    breaks = rng.random(m) < 0.1
    L[breaks] = 0
    U[:-1][breaks[1:]] = 0
    ghost = rng.random(m) < 0.2
    for a in (D, L, U):
        a[ghost, 1, :] = 0
        a[ghost, :, 1] = 0
    D[ghost, 1, 1] = 1
    slots = np.ones((m, 2), dtype=bool)
    slots[ghost, 1] = False
    index = -np.ones((m, 2), dtype=np.int64)
    index[slots] = rng.permutation(int(slots.sum()))
    return L.astype(dtype), D.astype(dtype), U.astype(dtype), index


def test_block_solver_bad_input(rng):
    L, D, U, index = _block_system(rng, 10, np.float64)
    with pytest.raises(ValueError, match="shape"):
        BlockTridiagonalSolver(L[:, :1], D, U, index)
    with pytest.raises(ValueError, match="index"):
        BlockTridiagonalSolver(L, D, U, index[:5])
    for chunk in (1, 17):
        with pytest.raises(ValueError, match="chunk"):
            BlockTridiagonalSolver(L, D, U, index, chunk=chunk)
    s = BlockTridiagonalSolver(L, D, U, index)
    with pytest.raises(ValueError, match="right-hand side"):
        s.solve(np.ones(s.n + 1))
    with pytest.warns(RuntimeWarning, match="pivot"):
        s = BlockTridiagonalSolver(np.zeros((3, 2, 2)), np.zeros((3, 2, 2)), np.zeros((3, 2, 2)),
                                   np.arange(6).reshape(3, 2))
    assert np.all(np.isfinite(s.solve(np.ones(6))))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m", [3, 64, 65, 1000, 17 * 16 + 5, 100_000])
def test_gpu_block_solver_matches_cpu(rng, dtype, m):
    import cupy

    L, D, U, index = _block_system(rng, m, dtype)
    cpu = BlockTridiagonalSolver(L, D, U, index)
    b = rng.standard_normal(cpu.n).astype(dtype)
    tol = 2e-4 if dtype == np.float32 else 1e-11
    # the default chunks, and chunks for the longer and the shorter unrolled sweep
    for chunk in (8, 16, 3):
        gpu = BlockTridiagonalSolver(*(cupy.asarray(a) for a in (L, D, U, index)), chunk=chunk)
        assert gpu.n == cpu.n
        bd = cupy.asarray(b)
        got = gpu.solve(bd)
        assert bool((bd == cupy.asarray(b)).all())  # input untouched
        np.testing.assert_allclose(got.get(), cpu.solve(b), rtol=tol, atol=tol, err_msg=f"chunk {chunk}")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [50, 1000, 40_000])
def test_gpu_negative_pivots_match_cpu(rng, dtype, n):
    """The partitioned method's pivots over all levels have the inertia of the system."""
    import cupy

    dl, d, du = _symmetric_indefinite(rng, n, dtype)
    cpu = TridiagonalSolver(dl, d, du)
    gpu = TridiagonalSolver(*(cupy.asarray(a) for a in (dl, d, du)), cupy.asarray(rng.permutation(n)))
    assert gpu.negative_pivots == cpu.negative_pivots > 0
    assert gpu.negative_diagonal == cpu.negative_diagonal == 0
    neg = TridiagonalSolver(*(cupy.asarray(-a) for a in (dl, d, du)))
    assert (neg.negative_pivots, neg.negative_diagonal) == (n - cpu.negative_pivots, n)


@pytest.mark.gpu
@pytest.mark.parametrize("m", [40, 5000])
def test_gpu_block_negative_pivots_match_cpu(rng, m):
    import cupy

    L, D, U, index = _block_system(rng, m, np.float64)
    # symmetric (pivot signs of an unsymmetric system depend on the elimination order), with
    # no coupling to a ghost unknown, and a fifth of the real blocks negated
    ghost = index[:, 1] < 0
    D = (D + D.transpose(0, 2, 1)) / 2
    L[1:][ghost[:-1], :, 1] = 0
    U = np.concatenate([L[1:].transpose(0, 2, 1), np.zeros((1, 2, 2))])
    D[(rng.random(m) < 0.2) & ~ghost] *= -1
    cpu = BlockTridiagonalSolver(L, D, U, index)
    gpu = BlockTridiagonalSolver(*(cupy.asarray(a) for a in (L, D, U, index)))
    assert (gpu.negative_pivots, gpu.negative_diagonal) == (cpu.negative_pivots, cpu.negative_diagonal)
    assert cpu.negative_diagonal > 0


def test_extract_block_tridiagonal_matches_dense():
    from kernels.tridiag import extract_block_tridiagonal

    A = sp.random(9, 9, density=0.6, random_state=6, format="csr") + sp.eye(9) * 4
    # blocks: (0, 3) (5, ghost) | (1, 2) (4, 8) (6, 7) -- two paths
    index = np.array([[0, 3], [5, -1], [1, 2], [4, 8], [6, 7]])
    starts = np.array([0, 2, 5])
    L, D, U, cov = extract_block_tridiagonal(A, index, starts)
    dense = A.toarray()
    rows = lambda k: [r for r in index[k] if r >= 0]
    path = np.repeat([0, 1], np.diff(starts))
    covered = 0.0
    for k in range(len(index)):
        for s, r in enumerate(index[k]):
            for t, c in enumerate(index[k]):
                want = 1.0 if (r < 0 and c < 0 and s == t == 1) else (dense[r, c] if r >= 0 and c >= 0 else 0.0)
                assert D[k, s, t] == pytest.approx(want)
        for nb, blocks in ((k - 1, L), (k + 1, U)):
            coupled = 0 <= nb < len(index) and path[nb] == path[k]
            for s, r in enumerate(index[k]):
                for t, c in enumerate(index[nb] if 0 <= nb < len(index) else [-1, -1]):
                    want = dense[r, c] if (coupled and r >= 0 and c >= 0) else 0.0
                    assert blocks[k, s, t] == pytest.approx(want)
                    covered += abs(want) if coupled else 0.0
        covered += sum(abs(dense[r, c]) for r in rows(k) for c in rows(k) if r != c)
    total = np.abs(dense).sum() - np.abs(np.diag(dense)).sum()
    assert cov == pytest.approx(covered / total)
    # duplicate entries are summed before the weights are taken
    dup = sp.csr_matrix((np.array([1.0, -1.0, 2.0]), np.array([1, 1, 0]), np.array([0, 2, 3])), shape=(2, 2))
    _, _, _, c = extract_block_tridiagonal(dup, np.array([[0, -1], [1, -1]]), np.array([0, 2]))
    assert c == 1.0  # only the (1, 0) entry is left off the diagonal, and it couples the two blocks
    with pytest.raises(ValueError, match="every row"):  # row 7 in no block
        extract_block_tridiagonal(A, index[:4], np.array([0, 2, 4]))
    with pytest.raises(ValueError, match="starts"):  # paths that do not end at the last block
        extract_block_tridiagonal(A, index, np.array([0, 2, 4]))
    with pytest.raises(ValueError, match="row ids"):  # a row id beyond the matrix
        extract_block_tridiagonal(A, np.vstack([index, [[9, -1]]]), np.array([0, 2, 6]))
    with pytest.raises(ValueError, match="row ids"):  # below -1
        extract_block_tridiagonal(A, np.vstack([index, [[-2, -1]]]), np.array([0, 2, 6]))
    with pytest.raises(ValueError, match="starts"):  # a path of negative length
        extract_block_tridiagonal(A, index, np.array([0, 3, 2, 5]))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gpu_extract_block_tridiagonal_equals_cpu(dtype):
    """The GPU's two passes (rows in A's order, then blocks in theirs) give the CPU's blocks,
    with ghosts in either position, paths of one block and rows read in a scattered order."""
    import cupy

    from kernels.backend import to_device
    from kernels.tridiag import extract_block_tridiagonal

    rng = np.random.default_rng(8)
    N = 2000
    A = (sp.random(N, N, density=0.004, random_state=8, format="csr") + sp.eye(N) * 4).astype(dtype)
    order = rng.permutation(N)
    pairs, singles = order[:1200].reshape(-1, 2), order[1200:]
    ghost_first = np.column_stack([np.full(200, -1), singles[:200]])
    ghost_last = np.column_stack([singles[200:], np.full(len(singles) - 200, -1)])
    index = np.vstack([pairs, ghost_first, ghost_last])[rng.permutation(600 + len(singles))]
    m = len(index)
    starts = np.concatenate([[0], np.sort(rng.choice(np.arange(1, m), 150, replace=False)), [m]])
    want = extract_block_tridiagonal(A, index, starts)
    for check in (True, False):
        got = extract_block_tridiagonal(to_device(A), cupy.asarray(index), cupy.asarray(starts), check=check)
        for g, w in zip(got[:3], want[:3]):
            np.testing.assert_array_equal(g.get(), w)
        assert got[3] == pytest.approx(want[3], rel=1e-12)
