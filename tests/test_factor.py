"""kernels.factor (and its precond face): [0,n]-factors' validity, greedy vs brute force, coverage,
the rounds' checks and weight graphs, CPU == GPU."""

import numpy as np
import pytest
import scipy.sparse as sp

import matrices
import precond
from helpers import mirror_cases, one_sided_lower, random_symmetric
from kernels.graph import abs_graph


def _check_factor(A, f, n):
    nb = f.neighbors
    W = abs_graph(A).tocsr()
    assert nb.shape == (A.shape[0], n)
    assert np.all((nb >= 0).sum(axis=1) <= n)
    for v, row in enumerate(nb):
        ws = row[row >= 0]
        assert len(set(ws.tolist())) == len(ws) and v not in ws
        for w in ws:
            assert W[v, w] != 0, "factor edge not in graph"
            assert v in nb[w], "partner relation not symmetric"


@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("m, k_m", [(1, 0), (5, 0), (5, 1)])
def test_parallel_factor_valid(rng, n, m, k_m):
    A = random_symmetric(rng, ties=(n == 2))
    f = precond.factor(A, n=n, iterations=30, m=m, k_m=k_m)
    _check_factor(A, f, n)
    if f.iterations < 30:
        assert f.maximal  # stopped early only when maximal


def _brute_force_greedy(A, n):
    W = sp.triu(abs_graph(A), 1).tocoo()
    edges = sorted(zip(-W.data, W.row, W.col))
    cnt = np.zeros(A.shape[0], int)
    chosen = set()
    for _, u, v in edges:
        if cnt[u] < n and cnt[v] < n:
            chosen.add((u, v))
            cnt[u] += 1
            cnt[v] += 1
    return chosen


@pytest.mark.parametrize("n", [1, 2, 3])
def test_greedy_equals_definition(rng, n):
    for _ in range(5):
        A = random_symmetric(rng, N=25, density=0.3, ties=True)
        g = precond.greedy_factor(A, n)
        got = {(min(v, w), max(v, w)) for v in range(25) for w in g.neighbors[v] if w >= 0}
        assert got == _brute_force_greedy(A, n)
        assert g.maximal


def test_greedy_matching_at_least_half_of_maximum(rng):
    import networkx as nx

    A = random_symmetric(rng, N=30, density=0.2)
    g = precond.greedy_factor(A, 1)
    W = sp.triu(abs_graph(A), 1).tocoo()
    G = nx.Graph()
    G.add_weighted_edges_from(zip(W.row.tolist(), W.col.tolist(), W.data.tolist()))
    best = sum(G[u][v]["weight"] for u, v in nx.max_weight_matching(G))
    ours = sum(A[v, w] for v in range(30) for w in g.neighbors[v] if w > v)
    assert ours >= best / 2


def test_aniso_coverage_matches_paper():
    # Paper Table 4/5: c_pi = 0.67 for n=2 on ANISO1/2/3; c_id = 0.68, 0.13, 0.68
    for gen, cid in ((matrices.aniso1, 0.68), (matrices.aniso2, 0.13), (matrices.aniso3, 0.68)):
        A = gen(120)
        f = precond.factor(A, n=2, iterations=5, m=5, k_m=0)
        assert abs(precond.weight_coverage(A, f) - 0.67) <= 0.02
        assert abs(precond.identity_coverage(A) - cid) <= 0.02


def test_all_equal_weights_deterministic():
    A = matrices.poisson2d(15)
    f1, f2 = precond.factor(A, n=2), precond.factor(A, n=2)
    np.testing.assert_array_equal(f1.neighbors, f2.neighbors)
    assert not np.array_equal(precond.factor(A, n=2, seed=3).neighbors, f1.neighbors)


def test_unsymmetric_uses_symmetrized_graph(rng):
    A = matrices.convection_diffusion3d(6)
    f = precond.factor(A, n=2)
    _check_factor(A, f, 2)
    assert 0 < precond.weight_coverage(A, f) <= 1


@pytest.mark.parametrize(
    "kwargs, exc",
    [({"n": 0}, ValueError), ({"n": 5}, ValueError), ({"iterations": -1}, ValueError),
     ({"m": 0}, ValueError), ({"p": 1.5}, ValueError)],
)


def test_bad_parameters(kwargs, exc):
    with pytest.raises(exc):
        precond.factor(matrices.poisson2d(4), **kwargs)


def test_bad_matrices():
    with pytest.raises(ValueError, match="square"):
        precond.factor(sp.csr_matrix(np.ones((2, 3))))
    with pytest.raises(ValueError, match="empty"):
        precond.factor(sp.csr_matrix((0, 0)))
    with pytest.raises(ValueError, match="NaN"):
        precond.factor(sp.csr_matrix(np.array([[1.0, np.inf], [1.0, 1.0]])))
    with pytest.raises(TypeError):
        precond.factor(np.eye(3))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n, m, k_m", [(1, 5, 0), (2, 5, 0), (2, 1, 0), (3, 5, 1), (4, 5, 0)])
def test_factor_gpu_equals_cpu(rng, dtype, n, m, k_m):
    from kernels.backend import to_device

    for A in (random_symmetric(rng, N=3000, density=0.003, ties=True).astype(dtype), matrices.aniso2(60, dtype=dtype),
              matrices.convection_diffusion3d(12, dtype=dtype)):
        fc = precond.factor(A, n=n, iterations=12, m=m, k_m=k_m)
        fg = precond.factor(to_device(A), n=n, iterations=12, m=m, k_m=k_m)
        assert fg.iterations == fc.iterations and fg.maximal == fc.maximal
        np.testing.assert_array_equal(fg.neighbors.get(), fc.neighbors)
        np.testing.assert_array_equal(fg.weights.get(), fc.weights)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gpu_rounds_with_int64_indices_equal_cpu(dtype):
    """The GPU rounds on 64-bit index arrays (CuPy gives a matrix those only beyond 2**31
    entries; their later rounds' proposal records hold the targets first and pad the
    weights) give the CPU factor: random_diffusion2d leaves most rows open after the
    first round."""
    from types import SimpleNamespace

    import cupy

    from kernels.factor import charge_threshold, factor_rounds, factor_rounds_gpu

    A = matrices.random_diffusion2d(40, dtype=dtype)
    wide = SimpleNamespace(shape=A.shape, nnz=A.nnz, data=cupy.asarray(A.data),
                           indices=cupy.asarray(A.indices.astype(np.int64)),
                           indptr=cupy.asarray(A.indptr.astype(np.int64)))
    for n in (1, 2):
        pc, wc, _ = factor_rounds(A, n, 5, 5, 0, 0.5, 3, from_matrix=True)
        pg, wg, _, _ = factor_rounds_gpu(wide, n, 5, 5, 0, 3, charge_threshold(0.5), True)
        assert pg.dtype == np.int64
        np.testing.assert_array_equal(pg.get(), pc)
        np.testing.assert_array_equal(wg.get(), wc)


def test_factor_from_matrix_equals_weight_graph(rng):
    from kernels.factor import parallel_factor

    for A in (random_symmetric(rng, N=300, density=0.02, ties=True), matrices.aniso1(30), matrices.poisson2d(12)):
        A = A.tocsr()
        A.data[::7] *= -1  # signs must not matter
        A = (A + A.T).tocsr()
        for n in (1, 2, 3):
            f = precond.factor(A, n=n, iterations=9, m=3)
            p, w, used = parallel_factor(abs_graph(A, symmetric=True), n, 9, 3, 0, 0.5, 0)
            np.testing.assert_array_equal(f.neighbors, p)
            np.testing.assert_array_equal(f.weights, w)
            assert f.iterations == used
            assert np.all(f.weights[f.neighbors >= 0] > 0)


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("kernel", ["thread", "warp"])
def test_mirror_factor_rounds_equal_the_rounds_on_mirror_weights(rng, device, kernel):
    """mirror_factor_rounds (on the GPU: the weights computed by the first proposal) gives
    the factor of the weight graph of mirror_weights, and None where that graph is None."""
    from kernels.backend import to_device, to_host
    from kernels.factor import factor_rounds, mirror_factor_rounds, rounds_used
    from kernels.matrix import mirror_weights

    for A in mirror_cases(rng):
        A.sum_duplicates()
        M = to_device(A) if device == "gpu" else A
        out = mirror_factor_rounds(M, 2, 7, 3, 0, 0.5, 4, kernel=kernel)
        W = mirror_weights(A)
        assert (out is None) == (W is None)
        if W is None:
            continue
        p, w, flags, graph = out
        p0, w0, flags0 = factor_rounds(W, 2, 7, 3, 0, 0.5, 4, from_matrix=True)
        np.testing.assert_array_equal(to_host(p), p0)
        np.testing.assert_array_equal(to_host(w), w0)
        assert rounds_used(flags, 3, 0) == rounds_used(flags0, 3, 0)
        np.testing.assert_array_equal(to_host(graph().data), W.data)


def test_paper_table1_proposals_of_vertex_4():
    """Klein and Strzodka (2022), Table 1: row 4 of A' = (3: 0.2, 5: 0.3, 6: 0.9, 7: 0.4, 9: 0.5); vertex 4
    is (-), vertices 3, 7, 9 are (+) and 5, 6 are (-). Without charging it proposes to 6
    and 9, with charging to 9 and 7."""
    from kernels.factor import charge_threshold, propose_cpu
    from kernels.hashing import hash32_array

    cols, vals = [3, 5, 6, 7, 9], [0.2, 0.3, 0.9, 0.4, 0.5]
    W = sp.csr_matrix((vals, ([4] * 5, cols)), shape=(10, 10))
    W = (W + W.T).tocsr()
    W.sort_indices()
    thr = charge_threshold(0.5)
    want = {3: True, 4: False, 5: False, 6: False, 7: True, 9: True}  # True = positive
    seed = next(s for s in range(5000)
                if all((hash32_array(v, 1, s) < thr) == pos for v, pos in want.items()))
    args = (W.indptr.astype(np.int64), W.indices.astype(np.int64), W.data)
    partners = -np.ones((10, 2), dtype=np.int64)
    count = np.zeros(10, dtype=np.int64)
    prop, prop_w = np.empty((10, 2), dtype=np.int64), np.empty((10, 2))
    propose_cpu(*args, partners, count, prop, prop_w, 2, 1, seed, False, thr, False, np.arange(10))
    assert prop[4].tolist() == [6, 9] and prop_w[4].tolist() == [0.9, 0.5]
    propose_cpu(*args, partners, count, prop, prop_w, 2, 1, seed, True, thr, False, np.arange(10))
    assert prop[4].tolist() == [9, 7] and prop_w[4].tolist() == [0.5, 0.4]


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", ["thread", "warp"])
@pytest.mark.parametrize("n", [1, 2, 4])
def test_gpu_proposal_kernels_equal_cpu(rng, kernel, n):
    """One thread per row and one warp per row give the CPU factor, long rows and hubs too."""
    from kernels.backend import to_device
    from kernels.factor import parallel_factor

    hub = sp.random(3000, 3000, density=0.002, random_state=5, format="lil")
    hub[0, :] = np.round(rng.random(3000) * 4) + 1  # a dense row with ties
    hub = sp.csr_matrix(hub)
    # random_diffusion2d: most rows stay open after the first round and many die later
    cases = [random_symmetric(rng, N=1500, density=0.05, ties=True), (hub + hub.T).tocsr(), matrices.aniso2(50),
             matrices.random_diffusion2d(60)]
    for A in cases:
        W = abs_graph(A, symmetric=None)
        for m, k_m in ((5, 0), (1, 0), (5, 1)):
            pc, wc, uc = parallel_factor(W, n, 10, m, k_m, 0.5, 7)
            pg, wg, ug = parallel_factor(to_device(W), n, 10, m, k_m, 0.5, 7, kernel=kernel)
            assert ug == uc
            np.testing.assert_array_equal(pg.get(), pc)
            np.testing.assert_array_equal(wg.get(), wc)


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_zero_iterations_give_the_empty_factor(device):
    """M = 0 rounds: no partners and M_max 0."""
    from kernels.backend import to_device

    A = matrices.aniso2(10)
    f = precond.factor(to_device(A) if device == "gpu" else A, n=2, iterations=0)
    assert f.iterations == 0 and f.n_edges == 0
    assert bool((f.neighbors == -1).all())


def _check_cases(rng):
    """Matrices for the fused matrix check: symmetric, unsymmetric values on a symmetric
    pattern, one-sided entries, and NaN / infinite entries (on and off the diagonal)."""
    cases = [random_symmetric(rng, N=300), matrices.aniso2(20), matrices.convection_diffusion3d(6)] + one_sided_lower(rng)
    for where, bad in ((0, np.nan), (7, np.inf)):
        A = random_symmetric(rng, N=120).tocsr()
        A.data[where] = bad  # the first entry of row 0 is the diagonal or an off-diagonal one
        cases.append(A)
    out = []
    for A in cases:
        A = A.tocsr()
        A.sum_duplicates()
        out.append(A)
    return out


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("kernel", ["thread", "warp"])
def test_first_round_checks_the_matrix(rng, device, kernel):
    """factor_rounds(check=True): finiteness and symmetry as the separate tests find them,
    and the rounds themselves unchanged by the check (both GPU proposal kernels)."""
    from kernels.backend import all_finite, to_device, to_host
    from kernels.factor import factor_rounds, rounds_used
    from kernels.matrix import mirror_weights, weights_symmetric

    for A in _check_cases(rng):
        M = to_device(A) if device == "gpu" else A
        kw = {"kernel": kernel} if device == "gpu" else {}
        p, w, flags, check = factor_rounds(M, 2, 5, 5, 0, 0.5, 3, from_matrix=True, check=True, **kw)
        assert check.finite == all_finite(A.data)
        if check.finite:
            assert check.symmetric == weights_symmetric(A)
        if check.finite and check.symmetric:  # else the factor is void (the GPU stops its rounds)
            p0, w0, flags0 = factor_rounds(M, 2, 5, 5, 0, 0.5, 3, from_matrix=True, **kw)
            np.testing.assert_array_equal(to_host(p), to_host(p0))
            np.testing.assert_array_equal(to_host(w), to_host(w0))
        if check.finite and check.on_weight_graph:  # the GPU's sample saw unsymmetric values
            W = mirror_weights(A)
            assert check.mirrored == (W is not None)
            if W is not None:  # the factor of A' + A'^T, as mirror_factor_rounds gives it
                p0, w0, flags0 = factor_rounds(W, 2, 5, 5, 0, 0.5, 3, from_matrix=True)
                np.testing.assert_array_equal(to_host(p), p0)
                np.testing.assert_array_equal(to_host(w), w0)
                assert rounds_used(flags, 5, 0) == rounds_used(flags0, 5, 0)
                np.testing.assert_array_equal(to_host(check.weight_graph().data), W.data)


@pytest.mark.gpu
@pytest.mark.filterwarnings("ignore:tridiagonal factorization met")  # the rows without a diagonal
@pytest.mark.parametrize("kernel", ["thread", "warp"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gpu_rounds_record_the_partner_entries(rng, kernel, dtype):
    """factor_rounds(entries=True) leaves the factor as it was and, where the check finds
    it on the matrix itself, its diagonal and signs give partner_entries' values bit for
    bit, and the extraction from them equals the one from A (signed entries, a missing or
    zero diagonal, explicit zeros, long rows)."""
    from kernels.backend import to_device, to_host
    from kernels.factor import factor_rounds
    from kernels.tridiag import TridiagonalSolver, extract_tridiagonal, partner_entries

    signed = random_symmetric(rng, N=400)
    signed.data *= np.where(rng.random(signed.nnz) < 0.5, -1.0, 1.0)
    signed = ((signed + signed.T) / 2).tocsr()
    no_diag = signed.tolil()
    no_diag.setdiag(0)  # explicit zeros on the diagonal
    no_diag = no_diag.tocsr()
    no_diag[5, 5] = 0.0
    no_diag.eliminate_zeros()  # rows without a diagonal entry
    cases = _check_cases(rng) + [signed, no_diag, matrices.random_diffusion2d(40), -matrices.aniso1(30)]
    for A in cases:
        A = A.astype(dtype).tocsr()
        A.sum_duplicates()
        M = to_device(A)
        perm = to_device(rng.permutation(A.shape[0]))
        for it in (1, 5):
            p, w, flags, check, (diagonal, signs) = factor_rounds(M, 2, it, 5, 0, 0.5, 3, from_matrix=True,
                                                                  check=True, kernel=kernel, entries=True)
            p0, w0, _, _ = factor_rounds(M, 2, it, 5, 0, 0.5, 3, from_matrix=True, check=True, kernel=kernel)
            if not (check.finite and check.symmetric):  # a void factor, or one on A' + A'^T
                continue
            np.testing.assert_array_equal(to_host(p), to_host(p0))
            np.testing.assert_array_equal(to_host(w), to_host(w0))
            records = to_host(partner_entries(M, p))
            s, wh = to_host(signs), to_host(w)
            np.testing.assert_array_equal(to_host(diagonal), records[:, 0])
            for slot in range(2):
                np.testing.assert_array_equal(np.where(s >> (3 + slot) & 1, -wh[:, slot], wh[:, slot]),
                                              records[:, 1 + slot])
            for order in (None, perm):
                ours = extract_tridiagonal(M, order, p, factor_entries=(diagonal, w, signs))
                for a, b in zip(ours, extract_tridiagonal(M, order, p)):
                    np.testing.assert_array_equal(to_host(a), to_host(b))
            # the system gathered by the factorization from the recorded entries
            ours = TridiagonalSolver.from_forest(M, perm, p, factor_entries=(diagonal, w, signs))
            ref = TridiagonalSolver(*extract_tridiagonal(M, perm, p), perm)
            rhs = to_device(np.linspace(-1, 1, A.shape[0]).astype(dtype))
            np.testing.assert_array_equal(to_host(ours.solve(rhs)), to_host(ref.solve(rhs)))
            assert (ours.negative_pivots, ours.negative_diagonal) == (ref.negative_pivots, ref.negative_diagonal)


def test_recorded_entries_need_the_check_and_the_gpu():
    from kernels.factor import factor_rounds
    from kernels.tridiag import extract_tridiagonal

    A = matrices.aniso2(5)
    with pytest.raises(ValueError, match="entries=True needs check=True"):
        factor_rounds(A, 2, from_matrix=True, entries=True)
    for n, iterations in ((1, 5), (2, 0)):
        with pytest.raises(ValueError, match="a \\[0,2\\]-factor's partners in at least one round"):
            factor_rounds(A, n, iterations, from_matrix=True, check=True, entries=True)
    p, w, flags, check, recorded = factor_rounds(A, 2, from_matrix=True, check=True, entries=True)
    assert recorded is None  # the CPU records nothing
    recorded = (A.diagonal(), w, np.zeros(A.shape[0], np.uint8))
    with pytest.raises(ValueError, match="factor_entries are recorded by the GPU"):
        extract_tridiagonal(A, None, p, factor_entries=recorded)
    with pytest.raises(ValueError, match="given with the factor's partners"):
        extract_tridiagonal(A, None, factor_entries=recorded)
    with pytest.raises(ValueError, match="factor_entries' weights must have shape"):
        extract_tridiagonal(A, None, p, factor_entries=(recorded[0], w[:-1], recorded[2]))


@pytest.mark.gpu
def test_gpu_sample_chooses_the_weight_graph(rng):
    """The GPU's sample of rows sends a matrix with unsymmetric values to A' + A'^T at once;
    an asymmetry outside the sample is found by the full check, and the factor is the
    same either way."""
    from kernels.backend import to_device, to_host
    from kernels.factor import SAMPLE_ROWS, factor_rounds

    cd = matrices.convection_diffusion3d(20).tocsr()  # 8,000 rows, every one unsymmetric
    cd.sum_duplicates()
    check = factor_rounds(to_device(cd), 2, 5, 5, 0, 0.5, 3, from_matrix=True, check=True)[3]
    assert check.finite and check.on_weight_graph and check.mirrored and not check.symmetric
    N = 3 * SAMPLE_ROWS
    sampled = set(np.arange(SAMPLE_ROWS) * N // SAMPLE_ROWS)
    row = next(i for i in range(N // 2, N) if i not in sampled and i + 1 not in sampled)
    A = random_symmetric(rng, N=N, density=2e-3).tolil()
    A[row, row + 1] = A[row + 1, row] * 2 + 1  # unsymmetric values in two unsampled rows
    A = A.tocsr()
    A.sum_duplicates()
    M = to_device(A)
    check = factor_rounds(M, 2, 5, 5, 0, 0.5, 3, from_matrix=True, check=True)[3]
    assert check.finite and not check.on_weight_graph and not check.symmetric
    for B in (cd, A):
        f, g = precond.factor(to_device(B), n=2), precond.factor(B, n=2, symmetric=False)
        np.testing.assert_array_equal(to_host(f.neighbors), g.neighbors)
        np.testing.assert_array_equal(to_host(f.weights), g.weights)


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_unsymmetric_matrix_falls_back_to_the_weight_graph(rng, device):
    """symmetric=None on a matrix with unsymmetric |A| - diag(A): the factor of A' + A'^T,
    as when the symmetry is given; NaN entries raise."""
    from kernels.backend import to_device, to_host

    for A in (matrices.convection_diffusion3d(6), one_sided_lower(rng)[0]):
        M = to_device(A) if device == "gpu" else A
        f = precond.factor(M, n=2)
        g = precond.factor(M, n=2, symmetric=False)
        np.testing.assert_array_equal(to_host(f.neighbors), to_host(g.neighbors))
        np.testing.assert_array_equal(to_host(f.weights), to_host(g.weights))
    A = random_symmetric(rng, N=50).tocsr()
    A.data[3] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        precond.factor(to_device(A) if device == "gpu" else A, n=2)


@pytest.mark.gpu
def test_gpu_row_slots_equal_cpu(rng):
    """The later rounds read the rows of a float32 matrix of at most five entries per row
    from the slots the first proposal wrote (kernels.factor.ROW_SLOT_ENTRIES): the same
    factor as the CPU's, with rows too long for a slot (read from A), explicit zeros, and
    values that are not symmetric (the sample sends the rounds to A' + A'^T, which ignore
    the slots)."""
    from kernels.backend import to_device, to_host
    from kernels.factor import ROW_SLOT_ENTRIES

    grid = matrices.random_diffusion2d(60).tocsr()
    long_rows = grid.tolil()
    for i in rng.choice(grid.shape[0], 20, replace=False):  # rows of 5-8 off-diagonal entries
        for j in rng.choice(grid.shape[0], 4, replace=False):
            if i != j:
                long_rows[i, j] = long_rows[j, i] = -rng.random()
    long_rows = long_rows.tocsr()
    for i, j in ((7, 8), (8, 7)):  # an explicit zero
        row = slice(long_rows.indptr[i], long_rows.indptr[i + 1])
        long_rows.data[row][long_rows.indices[row] == j] = 0.0
    unsymmetric = grid.tolil()
    unsymmetric[100, 101] = unsymmetric[100, 101] * 3  # inside the sample (every row is)
    for A in (grid, long_rows, unsymmetric.tocsr()):
        A = A.astype(np.float32).tocsr()
        A.sum_duplicates()
        assert A.nnz <= (ROW_SLOT_ENTRIES + 1) * A.shape[0]
        for m in (1, 5):
            f = precond.factor(to_device(A), n=2, m=m)
            g = precond.factor(A, n=2, m=m)
            np.testing.assert_array_equal(to_host(f.neighbors), g.neighbors)
            np.testing.assert_array_equal(to_host(f.weights), g.weights)
