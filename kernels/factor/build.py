"""The [0,n]-factor of a sparse matrix: the one place of the factor's policy.

:func:`factor` decides which weight graph the rounds (:mod:`kernels.factor.rounds`) read:

1. a float32/float64 matrix whose symmetry is not known is factored speculatively on
   ``A`` itself, its first round testing at once that the entries are finite and that
   ``A' = |A| - diag(A)`` is symmetric (on the GPU a sample of rows tested before it sends
   a matrix whose values it proves unsymmetric to ``A' + A'^T`` at once);
2. where ``A'`` is unsymmetric the factor is recomputed on ``A' + A'^T`` built on ``A``'s
   own pattern (:func:`kernels.factor.mirror_factor_rounds`) when the pattern holds it;
3. else on the weight graph ``A' + A'^T`` built by a transpose and a sum
   (:func:`weight_source`).

The host waits for the first proposal of each attempt only. :func:`greedy_factor` is the
sequential reference (Algorithm 1).

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Algorithms 1 and 2, Section 3.
"""
from __future__ import annotations

import numpy as np

from ..backend import all_finite, is_device_array, to_device, to_host
from ..graph import abs_graph, offdiag_abs, transpose_sum
from ..matrix import mirror_weights, weights_symmetric
from ..timing import PhaseClock
from ..validation import check_integer, validate_matrix
from .greedy import greedy_factor_cpu
from .result import Factor
from .rounds import charge_threshold, mirror_factor_rounds, rounds_used, run_factor_rounds

#: Largest seed of the charge hash (32 bits on the CPU and in the CUDA kernels alike).
SEED_MAX = 2**32 - 1

__all__ = ["factor", "greedy_factor", "weight_source"]


def weight_source(A, symmetric=None, *, mirror=True):
    """The CSR the proposals of :func:`factor` read, and whether it is read as a matrix.

    ``A`` itself when ``|A| - diag(A)`` is symmetric (``symmetric``; tested when None): no
    weight graph is built, the kernels take absolute values and skip the diagonal. Else
    the weight graph ``A' + A'^T``: on ``A``'s own pattern when that pattern is symmetric
    (:func:`kernels.matrix.mirror_weights`, one pass), else by a transpose and a sum
    (:func:`kernels.graph.transpose_sum`); other dtypes through :func:`kernels.graph.abs_graph`.
    ``mirror=False`` skips the attempt on ``A``'s own pattern (known to fail).
    Returns ``(matrix, from_matrix)``. ``A`` is not scanned for NaN or infinite entries
    (:func:`factor` does that once).
    """
    A = validate_matrix(A, dtypes="fcbiu", finite=False, what="weight_source")
    if np.dtype(A.dtype) in (np.float32, np.float64):
        C = validate_matrix(A, dtypes="fcbiu", finite=False, canonical="make")
        if symmetric is None:
            symmetric = weights_symmetric(C)
        if symmetric:
            return C, True
        W = mirror_weights(C) if mirror else None
        if W is not None:
            return W, True
        return transpose_sum(offdiag_abs(C)), False  # the pattern is not symmetric either
    return abs_graph(A, symmetric=symmetric), False


def factor(A, n: int = 2, iterations: int = 5, m: int = 5, k_m: int = 0, p: float = 0.5, seed: int = 0, *,
           symmetric: bool | None = None, validated: bool = False, entries: bool = False,
           timed: bool = True) -> Factor:
    """Parallel [0,n]-factor of the matrix graph (Algorithm 2).

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
        Seed of the charge hash (vertex id, iteration, seed), in ``0 .. 2**32 - 1`` (the
        hash's seed is 32 bits wide, on both devices).
    symmetric : bool, optional
        Whether ``|A| - diag(A)`` is symmetric. When None (float32/float64 matrices) the
        first proposal round tests it, and the finiteness of the entries, while it reads
        the rows (no pass of its own; :func:`kernels.matrix.weights_symmetric`). When it is,
        the proposals read ``A`` directly; otherwise they use the weight graph
        ``A' + A'^T``, built on ``A``'s own pattern when that pattern is symmetric (by the
        first proposal round while it reads the rows, no pass of its own), else by a
        transpose and a sparse sum. On the GPU a sample of 4,096 rows tested first sends a
        matrix whose values it proves unsymmetric to ``A' + A'^T`` at once.
    validated : bool
        The entries are known to be finite (not tested again).
    entries : bool
        Keep what the GPU's rounds record of ``A``'s entries to the partners where the
        factor is on ``A`` itself (``Factor.matrix_entries``; ``n = 2``).
    timed : bool
        False: no ``Factor.time`` (a caller timing its own phases; on the GPU two CUDA
        events fewer, one of them before the first kernel).

    Returns
    -------
    Factor

    Examples
    --------
    >>> import matrices, kernels.factor as kf
    >>> A = matrices.aniso2(50)
    >>> f = kf.factor(A, n=2)
    >>> f.neighbors.shape, round(kf.weight_coverage(A, f), 2)
    ((2500, 2), 0.67)
    """
    A = validate_matrix(A, dtypes="fcbiu", finite=False, what="matrix")
    n = check_integer("n", n, 1, 4)
    iterations = check_integer("iterations", iterations, 0)
    m = check_integer("m", m, 1)
    k_m = check_integer("k_m", k_m, 0)
    threshold = charge_threshold(p)
    seed = check_integer("seed", seed, 0, SEED_MAX)
    clock = PhaseClock(is_device_array(A)) if timed else None
    rounds = (n, iterations, m, k_m, threshold, seed)  # run_factor_rounds' (arguments checked)
    real = np.dtype(A.dtype).char in "fd"  # float32 or float64
    G, source = A, None  # source: Factor.weight_source's pair, or a function building it
    weight_graph = None  # builds A' + A'^T on A's own pattern, when the factor is on it
    pattern_tried = False  # whether the factor on A' + A'^T on A's own pattern was tried
    records = None  # Factor.matrix_entries
    if symmetric is None and real:  # the factor of A, valid if the check of its first round passes
        G = validate_matrix(A, dtypes="fcbiu", finite=False, canonical="make")
        entries = entries and n == 2 and iterations > 0
        partners, weights, flags, check, *found = run_factor_rounds(G, *rounds, True, check=True, entries=entries)
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
        G = validate_matrix(G, dtypes="fcbiu", finite=False, canonical="make")
        mirrored = mirror_factor_rounds(G, n, iterations, m, k_m, p, seed)
        if mirrored is not None:
            partners, weights, flags, weight_graph = mirrored
    if weight_graph is not None:
        source = lambda: (weight_graph(), True)  # noqa: E731 - A' + A'^T on A's pattern, its zeros kept
    if source is None:
        G, from_matrix = weight_source(G, False if pattern_tried else symmetric, mirror=not pattern_tried)
        partners, weights, flags = run_factor_rounds(G, *rounds, from_matrix)
        source = (G, from_matrix)
    if clock is not None:
        clock.mark("factor")
    return Factor(partners, weights, n, lambda: rounds_used(flags, m, k_m), None, clock, source=source,
                  max_iterations=iterations, matrix_entries=records)


def greedy_factor(A, n: int = 2, *, ties: str = "index", seed: int = 0) -> Factor:
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
    >>> import matrices, kernels.factor as kf
    >>> A = matrices.aniso1(30)
    >>> round(kf.weight_coverage(A, kf.greedy_factor(A, 2)), 2)
    0.67
    >>> round(kf.weight_coverage(A, kf.greedy_factor(A, 1, ties="hash")), 1)
    0.3
    """
    A = validate_matrix(A, dtypes="fcbiu")
    n = check_integer("n", n, 1, 4)
    seed = check_integer("seed", seed, 0, SEED_MAX)
    if ties not in ("index", "hash"):
        raise ValueError(f"ties must be 'index' or 'hash', got {ties!r}")
    clock = PhaseClock()  # computed on the host
    W = abs_graph(to_host(A))
    partners, weights = greedy_factor_cpu(W, n, ties=ties, seed=seed)
    if is_device_array(A):  # the result follows the backend of A
        partners, weights = to_device(partners), to_device(weights)
    clock.mark("greedy factor")
    return Factor(partners, weights, n, 1, True, clock, source=lambda: (abs_graph(A), False))
