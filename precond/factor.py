"""[0,n]-factors, linear forests and weight coverage of sparse matrices (paper 001).

The factor is computed on the weight graph ``A' = |A| - diag(A)`` (``A' + A'^T`` when
``A'`` is not symmetric); coverage is measured against the original ``A'``. Everything
follows the backend of ``A``: SciPy in, NumPy results; cupyx in, CuPy results.
"""
from __future__ import annotations

import numbers

import numpy as np

from kernels.backend import (all_finite, get_array_module, inverse_permutation, is_device_array, sparse_module,
                             to_device, to_host)
from kernels.factor import greedy_factor as _greedy
from kernels.factor import (_factor_rounds, charge_threshold, is_maximal, mirror_factor_rounds, mirror_weights,
                            rounds_used, weights_symmetric)
from kernels.forest import linear_forest_arrays
from kernels.graph import abs_graph, offdiag_abs, transpose_sum
from kernels.timing import PhaseClock

__all__ = ["Factor", "LinearForest", "factor", "greedy_factor", "weight_coverage", "identity_coverage", "linear_forest"]


class Factor:
    """A [0,n]-factor: ``neighbors`` (N x n, -1 for empty), edge ``weights`` (N x n),
    ``iterations`` used (M_max), whether it is ``maximal``, and setup ``time`` (s, from a
    :class:`kernels.timing.PhaseClock`: read once the device has finished).

    ``iterations`` is read from the device on first access (the set-up does not wait for
    it). ``maximal`` is known without work when the iterations stopped early (an uncharged
    round proposed nothing); otherwise it is checked on first access.

    ``matrix_entries``: None, or ``(diagonal, signs)`` of the matrix the factor is of,
    which the GPU's rounds recorded while they read it (``signs``: a byte per row, bit
    ``3 + s`` set where the entry to partner ``s`` is negative): with ``weights`` they
    give its entries to the partners (see :func:`kernels.factor.factor_rounds`).
    """

    def __init__(self, neighbors, weights, n, iterations, maximal=None, clock=None, source=None, max_iterations=None,
                 matrix_entries=None):
        # iterations: an int, or a callable reading M_max from the round flags;
        # source: weight_source's pair, or a callable building it
        self.neighbors = neighbors
        self.weights = weights
        self.n = n
        self._iterations = iterations
        self._max_iterations = max_iterations
        self._clock = clock
        self._maximal = maximal
        self._source = source
        self.matrix_entries = matrix_entries

    def weight_source(self):
        """``(matrix, from_matrix)``: the CSR matrix the proposals read, whose entries are
        the factor's edge weights, or with ``from_matrix`` their absolute values off the
        diagonal (zeros are no edges): the matrix itself when ``|A| - diag(A)`` is
        symmetric, else the weight graph ``A' + A'^T`` (built at the first call where the
        GPU looked its weights up)."""
        if callable(self._source):
            self._source = self._source()
        return self._source

    @property
    def iterations(self) -> int:
        """M_max, the proposal rounds used."""
        if callable(self._iterations):
            self._iterations = self._iterations()
        return self._iterations

    @property
    def time(self) -> float:
        return self._clock.total if self._clock is not None else 0.0

    @property
    def maximal(self) -> bool:
        if self._maximal is None and self._max_iterations is not None and self.iterations < self._max_iterations:
            self._maximal = True  # stopped early: an uncharged round proposed nothing
        if self._maximal is None:
            M, from_matrix = self.weight_source()
            self._maximal = is_maximal(abs_graph(M, symmetric=True) if from_matrix else M, self.neighbors)
        return self._maximal

    @property
    def n_edges(self) -> int:
        return int((self.neighbors >= 0).sum()) // 2

    def __repr__(self) -> str:
        return f"Factor(n={self.n}, edges={self.n_edges}, iterations={self.iterations})"


class LinearForest:
    """Vertex-disjoint paths: ``path_id`` (smaller end id), ``position`` (0 at that end),
    ``permutation`` (new -> old; the forest is tridiagonal in this order) and
    ``inverse_permutation`` (old -> new), ``path_start`` (offsets of the paths in the new
    order, length ``n_paths + 1``), ``removed_edges`` (``k x 2``, the cycle edges
    dropped), ``neighbors`` (N x 2 forest partners) and setup ``time`` (s, read once the
    device has finished).

    ``path_start``, ``removed_edges`` and ``n_paths`` are computed on first access on the
    GPU (their sizes are counts on the device), ``neighbors`` and ``inverse_permutation`` on
    first access on either backend: the preconditioners need only the permutation and the
    factor's partners, and their set-up neither waits for the device nor writes arrays it
    does not read.
    """

    def __init__(self, path_id, position, permutation, neighbors, paths, clock=None):
        # paths: (path_start, removed_edges), or a function returning them
        self.path_id = path_id
        self.position = position
        self.permutation = permutation
        self._inverse = None
        self._neighbors = neighbors  # the array, or a function returning it
        self._paths = paths
        self._clock = clock

    def _path_arrays(self):
        if callable(self._paths):
            self._paths = tuple(self._paths())
        return self._paths

    @property
    def neighbors(self):
        """N x 2 forest partners (-1: none), computed on first access."""
        if callable(self._neighbors):
            self._neighbors = self._neighbors()
        return self._neighbors

    @property
    def inverse_permutation(self):
        """Old -> new, computed on first access (the set-up does not need it)."""
        if self._inverse is None:
            self._inverse = inverse_permutation(self.permutation)
        return self._inverse

    @property
    def path_start(self):
        return self._path_arrays()[0]

    @property
    def removed_edges(self):
        return self._path_arrays()[1]

    @property
    def n_paths(self) -> int:
        return len(self.path_start) - 1

    @property
    def time(self) -> float:
        return self._clock.total if self._clock is not None else 0.0

    def __repr__(self) -> str:
        return f"LinearForest(n_paths={self.n_paths})"


def _check_square(A):
    _check_structure(A)
    if A.nnz and not all_finite(A.data):
        raise ValueError("matrix has NaN or infinite entries")


def _check_structure(A):
    """Type, shape and dtype (no pass over the entries)."""
    xp = get_array_module(A)
    if not sparse_module(xp).issparse(A):
        raise TypeError(f"expected a scipy.sparse or cupyx.scipy.sparse matrix, got {type(A).__name__}")
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"matrix must be square, got shape {A.shape}")
    if A.shape[0] == 0:
        raise ValueError("matrix is empty")
    if np.dtype(A.dtype).kind not in "fcbiu":
        raise TypeError(f"unsupported matrix dtype {A.dtype}")


def _check_int(name, value, lo, hi=None):
    if type(value) is int and value >= lo and (hi is None or value <= hi):  # the common case, without ABC checks
        return value
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < lo or (hi is not None and value > hi):
        rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be an integer in {rng}, got {value!r}")
    return int(value)


def _canonical_csr(A):
    """``A`` as a canonical CSR matrix (sorted indices, no duplicates) whose index arrays
    share one dtype; ``A`` itself when it already is one."""
    C = A if A.format == "csr" else A.tocsr()
    if not C.has_canonical_format:
        C = C.copy()
        C.sum_duplicates()
    if C.indices.dtype != C.indptr.dtype:
        C = sparse_module(get_array_module(C)).csr_matrix((C.data, C.indices.astype(C.indptr.dtype), C.indptr),
                                                          shape=C.shape)
    return C


def weight_source(A, symmetric=None, *, mirror=True):
    """The CSR the proposals of :func:`factor` read, and whether it is read as a matrix.

    ``A`` itself when ``|A| - diag(A)`` is symmetric (``symmetric``; tested when None): no
    weight graph is built, the kernels take absolute values and skip the diagonal. Else
    the weight graph ``A' + A'^T``: on ``A``'s own pattern when that pattern is symmetric
    (:func:`kernels.factor.mirror_weights`, one pass), else by a transpose and a sum
    (:func:`kernels.graph.transpose_sum`); other dtypes through :func:`kernels.graph.abs_graph`.
    ``mirror=False`` skips the attempt on ``A``'s own pattern (known to fail).
    Returns ``(matrix, from_matrix)``. ``A`` is not scanned for NaN or infinite entries
    (:func:`factor` does that once).
    """
    _check_structure(A)
    if np.dtype(A.dtype) in (np.float32, np.float64):
        C = _canonical_csr(A)
        if symmetric is None:
            symmetric = weights_symmetric(C)
        if symmetric:
            return C, True
        W = mirror_weights(C) if mirror else None
        if W is not None:
            return W, True
        return transpose_sum(offdiag_abs(C)), False  # the pattern is not symmetric either
    return abs_graph(A, symmetric=symmetric), False


def factor(A, n=2, iterations=5, m=5, k_m=0, p=0.5, seed=0, *, symmetric=None) -> Factor:
    """Parallel [0,n]-factor of the matrix graph (Algorithm 2 of paper 001).

    Parameters
    ----------
    A : scipy.sparse or cupyx.scipy.sparse matrix, square
    n : int, 1..4
        Maximum partners per vertex (n=1: a matching; n=2: paths and cycles).
    iterations : int
        Maximum proposal rounds M (the loop stops early once the factor is maximal).
    m, k_m : int
        Charging period and offset: no vertex charging in rounds with ``k % m == k_m``.
    p : float
        Probability of a positive charge.
    seed : int
        Seed of the charge hash (vertex id, iteration, seed).
    symmetric : bool, optional
        Whether ``|A| - diag(A)`` is symmetric. When None (float32/float64 matrices) the
        first proposal round tests it, and the finiteness of the entries, while it reads
        the rows (no pass of its own; :func:`kernels.factor.weights_symmetric`). When it is, the
        proposals read ``A`` directly; otherwise they use the weight graph ``A' + A'^T``,
        built on ``A``'s own pattern when that pattern is symmetric (by the first
        proposal round while it reads the rows, no pass of its own), else by a transpose
        and a sparse sum. On the GPU a sample of 4,096 rows tested first sends a matrix
        whose values it proves unsymmetric to ``A' + A'^T`` at once.

    Returns
    -------
    Factor

    Examples
    --------
    >>> import matrices, precond
    >>> A = matrices.aniso2(50)
    >>> f = precond.factor(A, n=2)
    >>> f.neighbors.shape, round(precond.weight_coverage(A, f), 2)
    ((2500, 2), 0.67)
    """
    _check_structure(A)
    return _factor(A, n, iterations, m, k_m, p, seed, symmetric)


def _factor(A, n=2, iterations=5, m=5, k_m=0, p=0.5, seed=0, symmetric=None, validated=False,
            entries=False, timed=True) -> Factor:
    """:func:`factor` of a matrix of checked structure. Its entries are tested for NaN
    and infinity unless ``validated``; with ``symmetric=None`` and a float32/float64
    matrix the first proposal round makes that test and the symmetry test together (see
    :func:`kernels.factor.factor_rounds`): the factor is computed on ``A`` speculatively
    and recomputed on the weight graph ``A' + A'^T`` when ``A'`` turns out unsymmetric
    (on ``A``'s pattern by :func:`kernels.factor.mirror_factor_rounds` when it holds the
    graph). On the GPU a sample of rows that proves ``A'`` unsymmetric makes the first
    round compute on that weight graph at once. The host waits for the first proposal of
    each only. ``entries``: keep what the GPU's rounds record of ``A``'s entries to the
    partners where the factor is on ``A`` itself (``Factor.matrix_entries``; ``n = 2``).
    ``timed=False``: no ``Factor.time`` (a caller timing its own phases; on the GPU two
    CUDA events fewer, one of them before the first kernel)."""
    n = _check_int("n", n, 1, 4)
    iterations = _check_int("iterations", iterations, 0)
    m = _check_int("m", m, 1)
    k_m = _check_int("k_m", k_m, 0)
    threshold = charge_threshold(p)
    seed = _check_int("seed", seed, 0)
    clock = PhaseClock(is_device_array(A)) if timed else None
    rounds = (n, iterations, m, k_m, threshold, seed)  # _factor_rounds' (arguments checked)
    real = np.dtype(A.dtype).char in "fd"  # float32 or float64
    G, source = A, None  # source: Factor.weight_source's pair, or a function building it
    weight_graph = None  # builds A' + A'^T on A's own pattern, when the factor is on it
    pattern_tried = False  # whether the factor on A' + A'^T on A's own pattern was tried
    records = None  # Factor.matrix_entries
    if symmetric is None and real:  # the factor of A, valid if the check of its first round passes
        G = _canonical_csr(A)
        entries = entries and n == 2 and iterations > 0
        partners, weights, flags, check, *found = _factor_rounds(G, *rounds, True, check=True, entries=entries)
        finite = check.finite
        if finite and check.symmetric:
            source = (G, True)
            records = found[0] if found else None
        elif finite and check.on_weight_graph:  # the GPU's sample chose A' + A'^T on A's pattern
            pattern_tried = True
            weight_graph = check.weight_graph if check.mirrored else None
    else:
        finite = validated or not A.nnz or all_finite(A.data)
    if not finite:
        raise ValueError("matrix has NaN or infinite entries")
    if source is None and real and symmetric is not True and not pattern_tried:  # unsymmetric values
        pattern_tried = True
        G = _canonical_csr(G)
        mirrored = mirror_factor_rounds(G, n, iterations, m, k_m, p, seed)
        if mirrored is not None:
            partners, weights, flags, weight_graph = mirrored
    if weight_graph is not None:
        source = lambda: (weight_graph(), True)  # noqa: E731 - A' + A'^T on A's pattern, its zeros kept
    if source is None:
        G, from_matrix = weight_source(G, False if pattern_tried else symmetric, mirror=not pattern_tried)
        partners, weights, flags = _factor_rounds(G, *rounds, from_matrix)
        source = (G, from_matrix)
    if clock is not None:
        clock.mark("factor")
    return Factor(partners, weights, n, lambda: rounds_used(flags, m, k_m), None, clock, source=source,
                  max_iterations=iterations, matrix_entries=records)


def greedy_factor(A, n=2, *, ties="index", seed=0) -> Factor:
    """Sequential greedy [0,n]-factor (Algorithm 1): the quality reference.

    Edges are taken by decreasing weight and kept while both ends have fewer than ``n``
    partners. Always computed on the CPU (Numba); for a cupyx matrix the result is copied
    to the GPU.

    Parameters
    ----------
    A : scipy.sparse or cupyx.scipy.sparse matrix, square
    n : int, 1..4
    ties : {"index", "hash"}
        Order of equal weights: ``"index"`` by (row, column), smallest first;
        ``"hash"`` an arbitrary reproducible order (hash of the edge and ``seed``), like
        an unstable sort by weight alone. The paper's n = 1 values on ANISO1/2/3 (0.29)
        are those of an arbitrary order; ``"index"`` matches the lines of equal weights
        perfectly (0.33).
    seed : int
        Seed of the tie hash (``ties="hash"`` only).

    Returns
    -------
    Factor
        ``iterations`` is 1 and ``maximal`` is True.

    Examples
    --------
    >>> import matrices, precond
    >>> A = matrices.aniso1(30)
    >>> round(precond.weight_coverage(A, precond.greedy_factor(A, 2)), 2)
    0.67
    >>> round(precond.weight_coverage(A, precond.greedy_factor(A, 1, ties="hash")), 1)
    0.3
    """
    _check_square(A)
    n = _check_int("n", n, 1, 4)
    seed = _check_int("seed", seed, 0)
    if ties not in ("index", "hash"):
        raise ValueError(f"ties must be 'index' or 'hash', got {ties!r}")
    clock = PhaseClock()  # computed on the host
    W = abs_graph(to_host(A))
    partners, weights = _greedy(W, n, ties=ties, seed=seed)
    if is_device_array(A):  # the result follows the backend of A
        partners, weights = to_device(partners), to_device(weights)
    clock.mark("greedy factor")
    return Factor(partners, weights, n, 1, True, clock, source=lambda: (abs_graph(A), False))


def _factor_pattern(f: Factor, shape, xp):
    sps = sparse_module(xp)
    nb = f.neighbors
    rows = xp.repeat(xp.arange(shape[0]), nb.shape[1])
    cols = nb.ravel()
    keep = cols >= 0
    return sps.csr_matrix((xp.ones(int(keep.sum())), (rows[keep], cols[keep])), shape=shape)


def weight_coverage(A, f) -> float:
    """Relative weight coverage c_pi (Eq. 3-4): share of the off-diagonal absolute weight
    of ``A`` on the edges of the factor or forest ``f`` (both directions counted)."""
    _check_square(A)
    xp = get_array_module(A)
    Ap = offdiag_abs(A)
    total = float(Ap.sum())
    if total == 0.0:
        return 0.0
    covered = float(Ap.multiply(_factor_pattern(f, A.shape, xp)).sum())
    return covered / total


def identity_coverage(A) -> float:
    """c_id (Eq. 5): share of the off-diagonal absolute weight on the sub- and superdiagonal."""
    _check_square(A)
    Ap = offdiag_abs(A)
    total = float(Ap.sum())
    if total == 0.0:
        return 0.0
    return float(Ap.diagonal(1).sum() + Ap.diagonal(-1).sum()) / total


def linear_forest(A, f=None, *, method=None, **factor_kwargs) -> LinearForest:
    """Linear forest of a [0,2]-factor: break cycles, rank paths, permutation.

    Parameters
    ----------
    A : sparse matrix (SciPy or cupyx)
    f : Factor, optional
        A [0,2]-factor of ``A`` (computed with ``factor_kwargs`` when omitted).
    method : {None, "walk", "ruling", "scan"}
        None: the linear-time walk on the CPU, the sparse ruling set (O(N) work) on the
        GPU. ``"ruling"`` also runs on the CPU (the Numba twins of the CUDA kernels);
        ``"scan"`` is the paper's bidirectional scan with log2(N) steps (GPU only). All
        give the identical forest.

    Returns
    -------
    LinearForest
        Under ``permutation`` the forest's adjacency is tridiagonal.

    Examples
    --------
    >>> import matrices, precond
    >>> A = matrices.aniso3(20)
    >>> lf = precond.linear_forest(A)
    >>> P = lf.permutation
    >>> B = A[P][:, P]          # forest edges are now on the sub/superdiagonal
    >>> lf.n_paths < 20
    True
    """
    if f is None:
        _check_structure(A)
        f = _factor(A, n=2, **factor_kwargs)  # tests the entries itself
    else:
        _check_square(A)
    return _linear_forest(A, f, method)


def _linear_forest(A, f, method=None, overlap=None) -> LinearForest:
    """:func:`linear_forest` of a validated matrix and its factor; ``overlap``: see
    :func:`kernels.forest.linear_forest_arrays`."""
    if f.n != 2:
        raise ValueError(f"a linear forest needs a [0,2]-factor, got n={f.n}")
    if is_device_array(f.neighbors) != is_device_array(A):
        raise TypeError("factor and matrix live on different devices")
    clock = PhaseClock(is_device_array(A))
    nb, pid, pos, perm, paths = linear_forest_arrays(f.neighbors, f.weights, method=method, paths_later=True,
                                                     overlap=overlap)
    clock.mark("forest")
    return LinearForest(pid, pos, perm, nb, paths, clock)
