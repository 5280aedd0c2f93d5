"""Linear forests from [0,2]-factors: validity, cycle breaking, ruling set == walk, CPU == GPU."""
import functools

import numpy as np
import pytest
import scipy.sparse as sp

import matrices
import precond
from helpers import random_symmetric
from kernels.forest import linear_forest_ruling, linear_forest_walk_cpu


def _ring(N, w=None):
    rows = np.arange(N)
    w = np.linspace(1, 2, N) if w is None else w
    A = sp.csr_matrix((w, (rows, (rows + 1) % N)), shape=(N, N))
    return (A + A.T + sp.eye(N)).tocsr()


def _check_forest(A, lf):
    N = A.shape[0]
    nb = np.asarray(lf.neighbors)
    assert np.all((nb >= 0).sum(axis=1) <= 2)
    perm = np.asarray(lf.permutation)
    assert sorted(perm.tolist()) == list(range(N))
    inv = np.empty(N, int)
    inv[perm] = np.arange(N)
    np.testing.assert_array_equal(lf.inverse_permutation, inv)
    for v in range(N):
        for w in nb[v][nb[v] >= 0]:
            assert v in nb[w], "forest partner relation not symmetric"
            assert abs(inv[v] - inv[w]) == 1, "forest edge not tridiagonal after permutation"
            assert lf.path_id[v] == lf.path_id[w]
    # acyclic: N vertices, (edges) = N - (number of paths)
    assert (nb >= 0).sum() // 2 == N - lf.n_paths
    # positions 0..len-1 along each path, path id = smaller end
    starts = np.asarray(lf.path_start)
    for t in range(lf.n_paths):
        seg = perm[starts[t]:starts[t + 1]]
        np.testing.assert_array_equal(lf.position[seg], np.arange(len(seg)))
        assert lf.path_id[seg[0]] == min(seg[0], seg[-1]) == seg[0]
    # the permuted forest adjacency is tridiagonal
    rows = np.repeat(np.arange(N), 2)
    cols = nb.ravel()
    keep = cols >= 0
    F = sp.csr_matrix((np.ones(keep.sum()), (inv[rows[keep]], inv[cols[keep]])), shape=(N, N))
    assert sp.triu(F, 2).nnz == 0 and sp.tril(F, -2).nnz == 0


def _assert_same_forest(a, b):
    names = ["neighbors", "path_id", "position", "permutation", "path_start"]
    for x, y, name in zip(a[:5], b[:5], names):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y), err_msg=name)
    ra, rb = np.asarray(a[5]), np.asarray(b[5])
    np.testing.assert_array_equal(ra[np.lexsort(ra.T[::-1])], rb[np.lexsort(rb.T[::-1])], err_msg="removed_edges")


def test_already_tridiagonal_matrix_keeps_one_path():
    N = 50
    A = sp.diags([np.full(N - 1, -1.0), np.full(N, 4.0), np.full(N - 1, -1.0)], [-1, 0, 1], format="csr")
    f = precond.factor(A, n=2)
    assert precond.weight_coverage(A, f) == pytest.approx(1.0)
    lf = precond.linear_forest(A, f)
    assert lf.n_paths == 1 and len(lf.removed_edges) == 0
    np.testing.assert_array_equal(lf.permutation, np.arange(N))
    np.testing.assert_array_equal(lf.position, np.arange(N))


def test_single_long_cycle_broken_at_weakest_edge():
    N = 40
    w = np.linspace(2.0, 3.0, N)
    w[17] = 0.5  # edge (17, 18) is the weakest
    A = _ring(N, w) + sp.eye(N) * 9
    f = precond.factor(A, n=2, iterations=50, m=1)
    assert (f.neighbors >= 0).sum() == 2 * N  # the whole cycle
    for method in ("walk", "ruling"):
        lf = precond.linear_forest(A, f, method=method)
        assert lf.removed_edges.tolist() == [[17, 18]]
        assert lf.n_paths == 1 and lf.path_id[0] == 17
        assert lf.position[17] == 0 and lf.position[18] == N - 1
        _check_forest(A, lf)


def test_extraction_from_the_factors_partners_equals_the_forests():
    """A factor edge between rows adjacent in the forest's order is a forest edge: the
    extraction may read the factor's partners (before the forest exists)."""
    from kernels.tridiag import extract_tridiagonal, partner_entries

    N = 40
    w = np.linspace(2.0, 3.0, N)
    w[17] = 0.5
    ring = (_ring(N, w) + sp.eye(N) * 9).tocsr()
    for A in (ring, matrices.random_diffusion2d(20), matrices.convection_diffusion3d(6)):
        f = precond.factor(A, n=2, iterations=50, m=1)
        lf = precond.linear_forest(A, f)
        ref = extract_tridiagonal(A, lf.permutation, lf.neighbors)
        for got in (extract_tridiagonal(A, lf.permutation, f.neighbors),
                    extract_tridiagonal(A, lf.permutation, f.neighbors, entries=partner_entries(A, f.neighbors))):
            for a, b in zip(got, ref):
                np.testing.assert_array_equal(a, b)
        B = A[lf.permutation][:, lf.permutation].toarray()
        forest = np.zeros_like(B, dtype=bool)
        k = lf.inverse_permutation
        for i, p in enumerate(lf.neighbors):
            forest[k[i], k[p[p >= 0]]] = True
        np.testing.assert_array_equal(ref[2][:-1], np.where(np.diag(forest, 1), np.diag(B, 1), 0))
        np.testing.assert_array_equal(ref[0][1:], np.where(np.diag(forest, -1), np.diag(B, -1), 0))
        if A is ring:  # one path, its edge (17, 18) cut
            assert lf.removed_edges.tolist() == [[17, 18]] and np.count_nonzero(ref[0]) == N - 1


def test_partner_entries_bad_input_and_other_dtypes():
    from kernels.tridiag import extract_tridiagonal, partner_entries

    A = matrices.convection_diffusion3d(6)
    f = precond.factor(A, n=2)
    perm = precond.linear_forest(A, f).permutation
    entries = partner_entries(A, f.neighbors)
    ref = extract_tridiagonal(A, perm, f.neighbors)
    with pytest.raises(ValueError, match="shape"):
        partner_entries(A, f.neighbors[:, :1])
    with pytest.raises(ValueError, match="entries must have shape"):
        extract_tridiagonal(A, perm, f.neighbors, entries=entries[:-1])
    for a, b in zip(extract_tridiagonal(A, perm, f.neighbors, entries=entries.astype(np.float32)), ref):
        assert a.dtype == A.dtype  # entries of another precision are cast to A's
        np.testing.assert_allclose(a, b, rtol=1e-6)
    C = A.astype(complex) * (1 + 0.5j)  # complex on the CPU: the same system, scaled
    for a, b in zip(extract_tridiagonal(C, perm, f.neighbors), ref):
        np.testing.assert_allclose(a, b * (1 + 0.5j))


@pytest.mark.parametrize("method, device", [("walk", "cpu"), ("ruling", "cpu"),
                                            pytest.param("ruling", "gpu", marks=pytest.mark.gpu),
                                            pytest.param("scan", "gpu", marks=pytest.mark.gpu)])
def test_overlap_is_called_once(method, device):
    from kernels.backend import to_device, to_host
    from kernels.forest import linear_forest_arrays

    A = matrices.aniso2(12)
    f = precond.factor(to_device(A) if device == "gpu" else A, n=2)
    calls = []
    out = linear_forest_arrays(f.neighbors, f.weights, method, overlap=lambda: calls.append(len(calls)))
    assert calls == [0]
    np.testing.assert_array_equal(to_host(out[3]), precond.linear_forest(A).permutation)


def test_equal_weight_cycle_ties_by_vertex_ids():
    A = _ring(7, np.ones(7))  # all edges equal: the weakest is the smallest (lo, hi) = (0, 1)
    f = precond.factor(A, n=2, iterations=50, m=1)
    for method in ("walk", "ruling"):
        lf = precond.linear_forest(A, f, method=method)
        assert lf.removed_edges.tolist() == [[0, 1]]
        assert lf.path_id.tolist() == [0] * 7
        assert lf.position.tolist() == [0, 6, 5, 4, 3, 2, 1]


def test_isolated_and_zero_rows():
    A = sp.csr_matrix(np.diag([1.0, 2.0, 3.0]))
    f = precond.factor(A, n=2)
    assert np.all(f.neighbors == -1) and f.maximal
    for method in ("walk", "ruling"):
        lf = precond.linear_forest(A, f, method=method)
        assert lf.n_paths == 3
        np.testing.assert_array_equal(lf.position, 0)
        np.testing.assert_array_equal(lf.path_id, [0, 1, 2])


@pytest.mark.parametrize("m", [1, 5])
def test_linear_forest_valid(rng, m):
    A = random_symmetric(rng, N=200, density=0.03)
    f = precond.factor(A, n=2, iterations=20, m=m)
    lf = precond.linear_forest(A, f)
    _check_forest(A, lf)
    assert precond.weight_coverage(A, lf) <= precond.weight_coverage(A, f) + 1e-12


def test_linear_forest_needs_two_factor():
    A = matrices.poisson2d(5)
    with pytest.raises(ValueError, match="0,2"):
        precond.linear_forest(A, precond.factor(A, n=3))
    with pytest.raises(ValueError, match="method"):
        precond.linear_forest(A, precond.factor(A, n=2), method="sort")
    with pytest.raises(ValueError, match="GPU"):
        precond.linear_forest(A, precond.factor(A, n=2), method="scan")
    f = precond.factor(A, n=2)
    for bad in ({"spacing": 0}, {"run": 0}, {"run": 2.5}):
        with pytest.raises(ValueError, match="ruler"):
            linear_forest_ruling(f.neighbors, f.weights, **bad)


def _forest_cases(rng):
    cases = [random_symmetric(rng, N=N, density=min(1.0, 4 / N), ties=True) for N in (3, 40, 400, 3000)]
    cases += [_ring(3000), _ring(3), matrices.aniso3(40), matrices.aniso1(48), matrices.poisson2d(20)]
    return cases


@functools.lru_cache(maxsize=1)
def _factored_forest_cases():
    """The [0,2]-factors of :func:`_forest_cases` (seeded as the ``rng`` fixture) with m = 1
    and 5, and the walk's forest of each: computed once for every parametrization."""
    out = []
    for A in _forest_cases(np.random.default_rng(12345)):
        for m in (1, 5):
            f = precond.factor(A, n=2, iterations=40, m=m)
            out.append((f.neighbors, f.weights, linear_forest_walk_cpu(f.neighbors, f.weights)))
    return out


@pytest.mark.parametrize("spacing, run", [(1, 1), (3, 1), (32, 1), (10_000, 1), (3, 4), (32, 16)])
def test_ruling_set_equals_walk(spacing, run):
    """The ruling-set algorithm (Numba twins of the CUDA kernels) gives the walk's forest,
    whatever the ruler density (10_000: most cycles have no ruler and walk themselves) and
    the length of the runs of rulers."""
    for neighbors, weights, ref in _factored_forest_cases():
        for dtype in (np.int64, np.int32):
            got = linear_forest_ruling(neighbors.astype(dtype), weights, spacing=spacing, run=run, seed=spacing)
            _assert_same_forest(got, ref)


def test_ruler_runs_only_across_the_ids():
    """Runs of rulers are drawn only for vertices whose partners are not their id
    neighbours: a path along the ids (0-1-2-...) gets the same rulers whatever the run,
    a path across them (0-2-4-..., 1-3-5-...) gets fewer, longer-spaced draws."""
    N = 20_000
    along = np.stack([np.arange(N) - 1, np.arange(N) + 1], axis=1)
    along[-1, 1] = -1
    across = np.stack([np.arange(N) - 2, np.arange(N) + 2], axis=1)
    across[across >= N] = -1
    W = np.ones((N, 2))
    rulers = {}
    for name, P in (("along", along), ("across", across)):
        for run in (1, 16):
            stats = {}
            got = linear_forest_ruling(P, W, run=run, stats=stats)
            _assert_same_forest(got, linear_forest_walk_cpu(P, W))
            rulers[name, run] = stats["rulers"]
    assert rulers["along", 1] == rulers["along", 16]
    assert rulers["across", 1] != rulers["across", 16]
    assert 0.5 < rulers["across", 16] / rulers["across", 1] < 2


def test_rulers_sparser_among_dense_path_ends():
    """Where at least 1 in 8 of 256 consecutive ids are path ends (short paths), rulers
    between the ends are drawn half as often: paths of 4 vertices (half of them ends) get
    about N / (4 * spacing) interior rulers, paths of 400 about N / spacing; the forest is
    the walk's either way."""
    N, spacing = 40_000, 4
    for length, dense in ((4, True), (400, False)):
        v = np.arange(N)
        P = np.stack([v - 1, v + 1], axis=1)
        P[v % length == 0, 0] = -1
        P[v % length == length - 1, 1] = -1
        W = np.ones((N, 2))
        stats = {}
        _assert_same_forest(linear_forest_ruling(P, W, spacing=spacing, stats=stats), linear_forest_walk_cpu(P, W))
        interior = N - 2 * N // length
        expected = interior / (2 * spacing if dense else spacing)
        assert abs((stats["rulers"] - 2 * N // length) - expected) < 0.15 * expected


@pytest.mark.parametrize("lockstep, scan_start", [(True, 3), (False, 3), (True, 1), (True, 7)])
def test_ruling_set_on_many_cycles(lockstep, scan_start, monkeypatch):
    """Rings of all lengths 3..60 plus a path: many cycles with and without rulers. The
    walks run in lockstep rounds (the two walks of a gap meet halfway) or one after the
    other (one walk claims the whole gap): both are interleavings of the CUDA kernel. The
    scan's first level folded gap by gap (``SCAN_START``) changes nothing."""
    import kernels.forest
    from kernels.forest.ruling import ruling_forest
    from kernels.forest.ruling_cpu import RulingCpuLauncher

    monkeypatch.setattr(kernels.forest.ruling, "SCAN_START", scan_start)

    blocks = [_ring(L, np.linspace(1, 2, L)[::-1].copy()) for L in range(3, 61)]
    blocks.append(sp.diags([np.ones(99), np.ones(100), np.ones(99)], [-1, 0, 1]))
    A = sp.block_diag(blocks, format="csr")
    f = precond.factor(A, n=2, iterations=60, m=1)
    ref = linear_forest_walk_cpu(f.neighbors, f.weights)
    assert len(ref[5]) == 58
    for spacing, guess in ((1, None), (2, 0.01), (16, 1.0), (64, 0.01)):
        launcher = RulingCpuLauncher(f.neighbors.dtype, f.weights.dtype, lockstep=lockstep)
        _assert_same_forest(ruling_forest(f.neighbors, f.weights, launcher, spacing=spacing, seed=spacing,
                                           ruler_guess=guess), ref)


@pytest.mark.parametrize("scan_start", [1, 3, 5])
def test_ruling_set_on_paths_of_every_length(scan_start, monkeypatch):
    """Paths of 1..80 vertices, every vertex a ruler: lists of every length up to 79 gaps,
    so the scan's steps read windows folded to their path's end (``SCAN_START``), and
    paths short enough to end in the fold leave their windows unwritten (the twin makes
    them unreadable)."""
    import kernels.forest

    monkeypatch.setattr(kernels.forest.ruling, "SCAN_START", scan_start)
    blocks = [sp.diags([np.ones(L - 1), np.linspace(1, 2, L), np.ones(L - 1)], [-1, 0, 1]) for L in range(1, 81)]
    A = sp.block_diag(blocks, format="csr")
    f = precond.factor(A, n=2, iterations=60, m=1)
    _assert_same_forest(linear_forest_ruling(f.neighbors, f.weights, spacing=1), linear_forest_walk_cpu(f.neighbors,
                                                                                                  f.weights))


@pytest.mark.parametrize("scan_start", [0, 2, 31, 3.0])
def test_scan_start_must_be_an_odd_level(scan_start, monkeypatch):
    import kernels.forest

    monkeypatch.setattr(kernels.forest.ruling, "SCAN_START", scan_start)
    P = np.array([[1, -1], [0, 2], [1, -1]])
    with pytest.raises(ValueError, match="SCAN_START must be an odd integer"):
        linear_forest_ruling(P, np.ones((3, 2)))


@pytest.mark.parametrize("long_piece, max_steps, min_steps", [("path", 10, 8), ("ring", 16, 13)])
def test_ruler_scan_stops_early(long_piece, max_steps, min_steps):
    """The scan over the ruler slots stops on the device once every list is done: 3000
    triangles and one piece of 100 (path) or 5000 (ring) vertices, every vertex a ruler
    (16 steps at most). The path needs 2^7 >= 100 and stops after 8 steps; the ring needs
    2^13 >= 5000 and runs on; the forest is the walk's either way."""
    blocks = [_ring(3)] * 3000
    if long_piece == "path":
        blocks.append(sp.diags([np.ones(99), np.ones(100), np.ones(99)], [-1, 0, 1]))
    else:
        blocks.append(_ring(5000, np.linspace(1, 2, 5000)))
    A = sp.block_diag(blocks, format="csr")
    f = precond.factor(A, n=2, iterations=60, m=1)
    stats = {}
    got = linear_forest_ruling(f.neighbors, f.weights, spacing=1, stats=stats)
    _assert_same_forest(got, linear_forest_walk_cpu(f.neighbors, f.weights))
    assert min_steps <= stats["ruler_steps"] <= max_steps


@pytest.mark.slow
def test_ruling_set_large_aniso():
    A = matrices.aniso2(400)
    f = precond.factor(A, n=2)
    _assert_same_forest(linear_forest_ruling(f.neighbors, f.weights), linear_forest_walk_cpu(f.neighbors, f.weights))


@pytest.mark.gpu
@pytest.mark.parametrize("method, early_exit", [("ruling", True), ("scan", True), ("scan", False)])
def test_forest_gpu_equals_cpu(rng, method, early_exit):
    from kernels.backend import to_device
    from kernels.forest import linear_forest_scan_gpu

    cases = [random_symmetric(rng, N=5000, density=0.001, ties=True), matrices.aniso3(80), matrices.aniso1(64),
             matrices.aniso2(300), _ring(3000), _ring(5)]
    for A in cases:
        for m in (1, 5):
            f = precond.factor(A, n=2, iterations=40, m=m)
            lc = precond.linear_forest(A, f)
            Ad = to_device(A)
            fg = precond.factor(Ad, n=2, iterations=40, m=m)
            np.testing.assert_array_equal(fg.neighbors.get(), f.neighbors)
            out = (linear_forest_scan_gpu(fg.neighbors, fg.weights, early_exit=early_exit) if method == "scan"
                   else linear_forest_ruling(fg.neighbors, fg.weights))
            _assert_same_forest([x.get() for x in out], [lc.neighbors, lc.path_id, lc.position, lc.permutation,
                                                         lc.path_start, lc.removed_edges])
            lg = precond.linear_forest(Ad, fg)
            assert abs(precond.weight_coverage(Ad, lg) - precond.weight_coverage(A, lc)) < 1e-12


@pytest.mark.gpu
@pytest.mark.parametrize("spacing, run", [(1, 1), (4, 1), (10_000, 1), (4, 8)])
def test_ruling_gpu_equals_cpu_twins(rng, spacing, run):
    """Also with the walks queued on slots for too few rulers (queued again once the host
    has read the count) and for more than enough."""
    from kernels.backend import to_device
    from kernels.forest.ruling import ruling_forest
    from kernels.forest.ruling_gpu import RulingGpuLauncher

    for A in _forest_cases(rng):
        f = precond.factor(A, n=2, iterations=40, m=1)
        ref = linear_forest_ruling(f.neighbors.astype(np.int32), f.weights, spacing=spacing, run=run)
        P, W = to_device(f.neighbors.astype(np.int32)), to_device(f.weights)
        got = linear_forest_ruling(P, W, spacing=spacing, run=run)
        _assert_same_forest([x.get() for x in got], ref)
        for guess in (0.001, 1.0):
            got = ruling_forest(P, W, RulingGpuLauncher(P.dtype, W.dtype), spacing=spacing, run=run, ruler_guess=guess)
            _assert_same_forest([x.get() for x in got], ref)


def _random_two_factor(data):
    """A random [0,2]-factor: paths and cycles of random lengths on shuffled vertex ids,
    small integer weights (many ties), as partner and weight arrays."""
    from hypothesis import strategies as st

    pieces = data.draw(st.lists(st.tuples(st.booleans(), st.integers(1, 12)), min_size=1, max_size=12))
    N = sum(length + (2 if cyclic else 0) for cyclic, length in pieces)
    ids = np.array(data.draw(st.permutations(range(N))))
    P = np.full((N, 2), -1, dtype=np.int64)
    W = np.zeros((N, 2))
    start = 0
    for cyclic, length in pieces:
        L = length + (2 if cyclic else 0)  # cycles have at least 3 vertices
        verts = ids[start:start + L]
        edges = [(verts[k], verts[k + 1]) for k in range(L - 1)] + ([(verts[-1], verts[0])] if cyclic else [])
        for a, b in edges:
            w = float(data.draw(st.integers(1, 3)))
            for x, y in ((a, b), (b, a)):
                s = 0 if P[x, 0] < 0 else 1
                P[x, s], W[x, s] = y, w
        start += L
    return P, W


def test_ruling_set_property():
    """Random paths and cycles (ties in weight, shuffled ids), every ruler density and both
    walk interleavings: the ruling-set twins give the walk's forest."""
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import strategies as st

    from kernels.forest.ruling import ruling_forest
    from kernels.forest.ruling_cpu import RulingCpuLauncher

    @hypothesis.settings(max_examples=60, deadline=None, derandomize=True)
    @hypothesis.given(st.data())
    def check(data):
        P, W = _random_two_factor(data)
        spacing = data.draw(st.integers(1, 6))
        lockstep = data.draw(st.booleans())
        launcher = RulingCpuLauncher(P.dtype, W.dtype, lockstep=lockstep)
        # the walks queued on slots for too few rulers (queued again after the count) or enough
        got = ruling_forest(P, W, launcher, spacing=spacing, run=data.draw(st.integers(1, 4)),
                             seed=data.draw(st.integers(0, 5)), ruler_guess=data.draw(st.sampled_from([None, 0.01, 1.0])))
        _assert_same_forest(got, linear_forest_walk_cpu(P, W))

    check()
