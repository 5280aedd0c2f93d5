"""The parallel [0,n]-factor of a weight graph: Algorithm 2 of Klein and Strzodka (2022).

The graph is a symmetric CSR weight matrix ``W`` with no diagonal (from
:func:`kernels.graph.abs_graph`), or a matrix ``A`` read as its weight graph
``|A| - diag(A)`` (``from_matrix=True``). A factor is stored as ``partners`` (``N x n``
int, -1 for empty slots) and ``weights`` (``N x n``, the edge weights, 0 for empty slots).

In each round every unsaturated vertex proposes its best admissible edges (a generalized
SpMV keeping the n largest ``(weight, -column)`` pairs per row), then non-mutual
proposals are dropped. Vertex charges come from :func:`kernels.hashing.hash32` of
(vertex, round, seed): in a charged round a vertex proposes only to vertices of the
other charge. The CPU twin (:mod:`kernels.factor.rounds_cpu`) and the GPU rounds
(:mod:`kernels.factor.rounds_gpu`) give the identical factor; this module dispatches on
the backend of the matrix and checks the arguments.

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Algorithm 2.
"""
from __future__ import annotations

import numpy as np

from ..backend import get_array_module, is_device_array, to_host
from ..matrix import mirror_weights, validate_canonical
from .rounds_cpu import factor_rounds_cpu
from .rounds_gpu import factor_rounds_gpu

__all__ = ["charge_threshold", "factor_rounds", "run_factor_rounds", "mirror_factor_rounds", "parallel_factor",
           "rounds_used", "is_maximal"]


def charge_threshold(p: float) -> int:
    """Hash values below this threshold are charged positive (probability ``p``).

    Examples
    --------
    >>> charge_threshold(0.5)
    2147483648
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"charge probability p must be in [0, 1], got {p}")
    return min(int(round(p * 2.0**32)), 2**32)


def rounds_used(flags, m: int, k_m: int) -> int:
    """M_max from the per-round flags of :func:`factor_rounds` (NumPy or CuPy; a CuPy
    array is read here): one past the first uncharged round without proposals
    (``flags[k] == 0``), else all rounds."""
    flags = to_host(flags)
    idle = [k for k in range(len(flags)) if k % m == k_m and flags[k] == 0]
    return idle[0] + 1 if idle else len(flags)


def factor_rounds(W, n=2, iterations=5, m=5, k_m=0, p=0.5, seed=0, from_matrix=False, kernel="auto", check=False,
                  entries=False):
    """:func:`parallel_factor` without reading anything back: returns ``(partners,
    weights, flags)``, where ``flags[k]`` is nonzero when round ``k`` confirmed a proposal
    (on the GPU a device array: the host does not wait for the rounds; see
    :func:`rounds_used`).

    ``check=True`` (with ``from_matrix``; ``W`` a canonical CSR matrix whose index arrays
    share one dtype) also tests the matrix and appends a :class:`kernels.matrix.MatrixCheck`:
    whether its entries are finite and ``|A| - diag(A)`` is symmetric, the factor being
    valid only then. On the GPU the first proposal makes these tests while it reads the
    rows anyway (no pass of its own), and the check is readable as soon as that kernel has
    run: the host need not wait for the later rounds. Before it, the GPU tests a sample of
    ``SAMPLE_ROWS`` rows; when the sample proves ``|A| - diag(A)`` unsymmetric, the rounds
    run on the weight graph ``A' + A'^T`` instead (:attr:`MatrixCheck.on_weight_graph`),
    whose weights the proposals look up on ``A``'s pattern (no buffer of them is stored;
    :meth:`MatrixCheck.weight_graph` builds the graph when asked).

    ``entries=True`` (with ``check``, ``n = 2`` and at least one round) appends, on the
    GPU, ``(diagonal, signs)``: ``W``'s diagonal, read by the first proposal, and a byte
    per row whose bit ``3 + s`` is set where the entry to partner ``s`` is negative (the
    rounds' partner counts, which they store anyway; the proposals keep the signed entries
    they read). With the weights they give ``A``'s entries to the partners
    (:func:`kernels.tridiag.extract_tridiagonal`'s ``factor_entries``), valid where the
    check finds the factor on ``W`` itself (:attr:`MatrixCheck.symmetric`): the AlgTriScal
    set-up then needs no pass of its own over ``A`` (:func:`kernels.tridiag.partner_entries`).
    None on the CPU."""
    threshold = charge_threshold(p)
    if check:
        validate_canonical(W, "factor_rounds(check=True)")
        if not from_matrix:
            raise ValueError("check=True tests a matrix read with from_matrix=True")
    elif entries:
        raise ValueError("entries=True needs check=True (the entries are valid where the check passes)")
    if entries and not (n == 2 and iterations > 0):
        raise ValueError(f"entries=True records the entries of a [0,2]-factor's partners in at least one round, "
                         f"got n={n}, iterations={iterations}")
    return run_factor_rounds(W, n, iterations, m, k_m, threshold, seed, from_matrix, kernel, check, entries)


def run_factor_rounds(W, n, iterations, m, k_m, threshold, seed, from_matrix, kernel="auto", check=False,
                      entries=False):
    """:func:`factor_rounds` of valid arguments (``threshold``: :func:`charge_threshold`'s),
    for callers that have checked them (on the GPU the device idles until the first
    proposal is queued)."""
    if is_device_array(W):
        out = factor_rounds_gpu(W, n, iterations, m, k_m, seed, threshold, bool(from_matrix), kernel, check,
                                entries=entries)
    else:
        out = factor_rounds_cpu(W, n, iterations, m, k_m, seed, threshold, bool(from_matrix), check)
        out = (*out, None) if entries else out
    return out if check else out[:3]


def mirror_factor_rounds(A, n=2, iterations=5, m=5, k_m=0, p=0.5, seed=0, kernel="auto"):
    """:func:`factor_rounds` on the weight graph ``A' + A'^T`` (``A' = |A| - diag(A)``) built
    on ``A``'s own pattern, for a matrix whose values are not symmetric but whose pattern
    is (as in most PDE matrices): see :func:`kernels.matrix.mirror_weights`.

    ``A``: a canonical float32/float64 CSR matrix whose index arrays share one dtype.
    Returns ``(partners, weights, flags, graph)``, where ``graph()`` builds the weight
    graph as a CSR matrix on ``A``'s pattern (explicit zeros kept, computed when called),
    or None when some nonzero entry of ``A`` has no mirror (the pattern does not hold
    ``A' + A'^T``). On the GPU the proposals look the weights up while they read the rows
    (``mirror_sum`` fused, no pass of its own) and the host waits for the first proposal
    only; a void factor stops the later rounds on the device.
    """
    validate_canonical(A, "mirror_factor_rounds")
    if not is_device_array(A) or iterations == 0:  # the CPU, or no proposal to compute the weights in
        W = mirror_weights(A)
        if W is None:
            return None
        return (*factor_rounds(W, n, iterations, m, k_m, p, seed, from_matrix=True, kernel=kernel), lambda: W)
    partners, weights, flags, check = factor_rounds_gpu(A, n, iterations, m, k_m, seed, charge_threshold(p), True,
                                                        kernel, mirror=True)
    if not check.mirrored:
        return None
    return partners, weights, flags, lambda: mirror_weights(A)


def parallel_factor(W, n=2, iterations=5, m=5, k_m=0, p=0.5, seed=0, from_matrix=False, kernel="auto"):
    """Algorithm 2 on a symmetric weight graph ``W`` (SciPy or cupyx CSR).

    With ``from_matrix=True``, ``W`` is the matrix ``A`` itself (canonical CSR whose
    ``|A| - diag(A)`` is symmetric, see :func:`kernels.matrix.weights_symmetric`): the
    proposals read ``|a_ij|`` and skip the diagonal and zeros, so ``abs_graph`` is never
    built. The result is identical to the one on ``abs_graph(A)``.

    ``kernel`` (GPU only): ``"thread"`` (one thread per row), ``"warp"`` (one warp per
    row, for long rows) or ``"auto"`` (warp when the mean row length is at least
    ``WARP_ROW_LENGTH``). Both give the identical factor.

    Returns ``(partners, weights, used_iterations)`` on the backend of ``W``. Charging is
    disabled in iterations with ``k % m == k_m``; an uncharged iteration without any
    proposal proves the factor maximal and ends the loop (``used = k + 1``).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> W = sp.csr_matrix([[0, 3.0, 1.0], [3.0, 0, 2.0], [1.0, 2.0, 0]])
    >>> partners, weights, used = parallel_factor(W, n=1, iterations=10, m=1)
    >>> partners.ravel().tolist(), used
    ([1, 0, -1], 2)
    """
    partners, weights, flags = factor_rounds(W, n, iterations, m, k_m, p, seed, from_matrix, kernel)
    return partners, weights, rounds_used(flags, m, k_m)


def is_maximal(W, partners) -> bool:
    """True when no edge of ``W`` joins two unsaturated vertices that are not yet partners."""
    xp = get_array_module(W)
    n = partners.shape[1]
    count = (partners >= 0).sum(axis=1)
    rows = xp.repeat(xp.arange(W.shape[0]), xp.diff(W.indptr).astype(np.int64))
    cols = W.indices
    free = (count[rows] < n) & (count[cols] < n) & (rows != cols)
    if not bool(free.any()):
        return True
    r, c = rows[free], cols[free]
    linked = (partners[r] == c[:, None]).any(axis=1)
    return bool(linked.all())
