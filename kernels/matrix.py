"""Symmetry of a matrix's weight graph, and the mirrored weights of an unsymmetric one.

The [0,n]-factor reads the weight graph ``A' = |A| - diag(A)`` of a matrix, which must be
symmetric; these general matrix utilities test that and, where it fails, build
``A' + A'^T`` on ``A``'s own pattern without a transpose:

* :func:`weights_symmetric` - whether ``A'`` equals its transpose (one pass);
* :func:`mirror_weights` - ``|a_ij| + |a_ji|`` on a structurally symmetric pattern;
* :class:`MatrixCheck` - the verdict of these tests, read when first asked (on the GPU the
  factor's first proposal makes them while it reads the rows; see
  :func:`kernels.factor.factor_rounds`).

The GPU kernels (``sym_check``, ``mirror_sum``) live in ``kernels/cuda/factor.cu`` beside
the proposals, which fuse the same per-entry tests.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .backend import EarlyRead, get_array_module, is_device_array, sparse_module
from .nvrtc import get_kernel, row_grid
from .validation import REAL_DTYPES, validate_matrix

__all__ = ["weights_symmetric", "mirror_weights", "MatrixCheck", "check_flags", "validate_canonical", "ROW_THREADS", "csr_position"]

#: Threads per block of the thread-per-row passes over a matrix (the symmetry test, the
#: mirrored weights and the factor's rounds): a block's rows then come from a few cache lines.
ROW_THREADS = 128


def validate_canonical(A, what):
    """The preconditions of the binary-search passes: a square canonical CSR matrix of
    float32 or float64 whose index arrays share one dtype (:func:`kernels.validation.validate_matrix`)."""
    return validate_matrix(A, dtypes=REAL_DTYPES, finite=False, csr="require", canonical="require", empty=True,
                           what=what)


class MatrixCheck:
    """Whether a matrix has only finite entries and a symmetric ``|A| - diag(A)``, from
    the flags ``[non-finite, unmirrored, upper - lower balance, on the weight graph]`` (an
    :class:`kernels.backend.EarlyRead`), read on first access. Unmirrored: on the CPU an
    upper ``|a_ij|`` without an equal ``|a_ji|`` (the check of
    :func:`kernels.factor.factor_rounds`); on either, a nonzero entry without a mirror
    entry (:func:`kernels.factor.mirror_factor_rounds`, and a checked factor computed on
    the weight graph). The balance is zero when the entries above the diagonal pair up
    with those below it: on the CPU their counts, on the GPU the sums of 64-bit
    fingerprints of ``(i, j, |a_ij|)`` (``factor.cu``, ``check_entry``: no entry looks its
    mirror up; an unsymmetric matrix passes with probability about ``2**-64``).

    On the GPU a checked factor is computed on the weight graph ``A' + A'^T`` on ``A``'s
    pattern at once when a sample of rows proves ``A'`` unsymmetric (``on_weight_graph``;
    ``mirrored`` then tells whether the pattern holds that graph, and
    :meth:`weight_graph` builds it)."""

    def __init__(self, flags, matrix=None):
        self._flags = flags
        self._matrix = matrix

    def _read(self):
        return self._flags.get().view(np.int64)  # the balance: a signed count on the CPU

    @property
    def finite(self) -> bool:
        return not self._read()[0]

    @property
    def mirrored(self) -> bool:
        return not self._read()[1]

    @property
    def on_weight_graph(self) -> bool:
        return bool(self._read()[3])

    @property
    def symmetric(self) -> bool:
        return not self.on_weight_graph and self.mirrored and bool(self._read()[2] == 0)

    def weight_graph(self):
        """``A' + A'^T`` as a CSR matrix on ``A``'s pattern (explicit zeros kept), for a
        factor ``on_weight_graph`` whose pattern is ``mirrored`` (computed here: the
        proposals looked the weights up without storing them)."""
        if not (self.on_weight_graph and self.mirrored):
            raise ValueError("the factor was not computed on the weight graph on A's pattern")
        return mirror_weights(self._matrix)


def _pattern_matrix(values, A):
    """A CSR matrix of ``values`` on ``A``'s pattern (sharing its index arrays)."""
    return sparse_module(get_array_module(A)).csr_matrix((values, A.indices, A.indptr), shape=A.shape)


@njit(cache=True, inline="always")
def csr_position(indptr, indices, j, i):
    """Position of column ``i`` in the sorted row ``j`` of a CSR matrix (binary search), or
    -1 when the row has no such entry (Numba)."""
    lo, hi = indptr[j], indptr[j + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        if indices[mid] < i:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < indptr[j + 1] and indices[lo] == i else -1


@njit(cache=True, parallel=True)
def _sym_check_cpu(indptr, indices, data):
    """Per row: 1 where an upper off-diagonal ``|a_ij|`` (j > i) has no equal mirror
    ``|a_ji|`` (binary search, sorted rows), and the count of nonzero upper minus lower
    off-diagonal entries."""
    N = len(indptr) - 1
    bad = np.zeros(N, dtype=np.uint8)
    balance = np.zeros(N, dtype=np.int64)
    for i in prange(N):
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            w = abs(data[e])
            if j == i or w == 0:
                continue
            if j < i:
                balance[i] -= 1
                continue
            balance[i] += 1
            m = csr_position(indptr, indices, j, i)
            if m < 0 or abs(data[m]) != w:
                bad[i] = 1
                break
    return bad, balance


def weights_symmetric(A) -> bool:
    """True when ``|A| - diag(A)`` (explicit zeros dropped) equals its transpose.

    ``A`` must be a canonical CSR matrix (sorted indices, no duplicates), float32 or
    float64, SciPy or cupyx. One pass, no transpose. On the CPU every upper entry looks its
    mirror up by binary search, and the nonzero entries above and below the diagonal must
    be equally many (then the mirroring is a bijection). On the GPU the sums of 64-bit
    fingerprints of the entries ``(i, j, |a_ij|)`` above and below the diagonal must be
    equal (see :class:`MatrixCheck`).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> weights_symmetric(sp.csr_matrix([[2.0, -1.0], [-1.0, 2.0]]))
    True
    >>> weights_symmetric(sp.csr_matrix([[2.0, -1.0], [-3.0, 2.0]]))
    False
    """
    validate_canonical(A, "weights_symmetric")
    return MatrixCheck(check_flags(A)).symmetric


def check_flags(A):
    """The flags of :class:`MatrixCheck` in a pass of their own (on the GPU the
    ``sym_check`` kernel, whose fingerprints the first proposal also sums; on the CPU the
    exact test of :func:`weights_symmetric` and a finiteness test), as an
    :class:`kernels.backend.EarlyRead`. ``A``: a canonical CSR matrix (not checked here)."""
    if not is_device_array(A):
        bad, balance = _sym_check_cpu(A.indptr, A.indices, A.data)
        return EarlyRead(np.array([not np.isfinite(A.data).all(), bad.any(), balance.sum(), 0], dtype=np.int64))
    import cupy

    N = A.shape[0]
    flags = cupy.zeros(4, dtype=np.uint64)
    threads = ROW_THREADS
    get_kernel("factor", "sym_check", A.data.dtype, A.indices.dtype)(
        (row_grid(N, threads),), (threads,), (A.indices.dtype.type(N), A.indptr, A.indices, A.data, flags))
    return EarlyRead(flags)


@njit(cache=True, parallel=True)
def _mirror_sum_cpu(indptr, indices, data, w):
    """Twin of the CUDA ``mirror_sum``; returns per row 1 where a nonzero entry has no mirror."""
    N = len(indptr) - 1
    bad = np.zeros(N, dtype=np.uint8)
    for i in prange(N):
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            a = abs(data[e])
            if j == i:
                w[e] = 0
                continue
            m = csr_position(indptr, indices, j, i)
            if m >= 0:
                w[e] = a + abs(data[m])
            else:
                w[e] = a
                if a != 0:
                    bad[i] = 1
    return bad


def mirror_weights(A):
    """The weight graph ``A' + A'^T`` on ``A``'s own pattern, or None.

    ``A`` must be a canonical CSR matrix (sorted indices, no duplicates), float32 or
    float64, SciPy or cupyx. When every nonzero off-diagonal ``a_ij`` has an entry
    ``a_ji`` (a structurally symmetric pattern, as in most PDE matrices even when the
    values are not symmetric), the result shares ``A``'s index arrays and holds
    ``|a_ij| + |a_ji|`` (0 on the diagonal): one pass with binary searches instead of a
    transpose and a sparse sum. The factor reads it like a symmetric matrix
    (``from_matrix=True``). None when some nonzero entry has no mirror.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> mirror_weights(sp.csr_matrix([[2.0, -1.0], [-3.0, 2.0]])).toarray()
    array([[0., 4.],
           [4., 0.]])
    """
    validate_canonical(A, "mirror_weights")
    if is_device_array(A):
        import cupy

        N = A.shape[0]
        w = cupy.empty_like(A.data)
        flags = cupy.zeros(2, dtype=np.uint64)  # [non-finite, unmirrored]
        threads = ROW_THREADS
        get_kernel("factor", "mirror_sum", A.data.dtype, A.indices.dtype)(
            (row_grid(N, threads),), (threads,), (A.indices.dtype.type(N), A.indptr, A.indices, A.data, w, flags))
        if int(flags[1]):
            return None
        return _pattern_matrix(w, A)
    w = np.empty_like(A.data)
    if _mirror_sum_cpu(A.indptr, A.indices, A.data, w).any():
        return None
    return _pattern_matrix(w, A)
