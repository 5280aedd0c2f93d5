"""Sparse products of the pairwise hierarchy that give the same bits on the CPU and the GPU.

The smoothed pairwise hierarchy's coarse operators are Galerkin products ``R (A P)``.
SciPy's and cuSPARSE's sparse products sum each entry in different orders (and cuSPARSE
may fuse a product into an addition), so the two backends' coarse operators differed in
their last bits; and the set-up of the next levels makes discrete choices on them (the
heavy edges first of the smoothers' linear forests, the strong couplings and matchings
of the next aggregation, the symmetry test), which the last bits can flip: the CPU's and
the GPU's cycles of one matrix were then different operators. :func:`ordered_product`
sums every entry in one order, with separately rounded operations, on both backends
(``hash_product`` in ``kernels/cuda/amg.cu``: a lane group per row, the row's entries in a
table in shared memory; ``ordered_product`` there, a thread per row, for rows the table
cannot hold; the Numba twin in :mod:`kernels.amg._cpu`); :func:`piecewise_constant_minus` forms the smoothed
prolongator from it with elementwise operations only.
"""
from __future__ import annotations

import math

import numpy as np

from ..backend import get_array_module, is_device_array, sparse_module

__all__ = ["ordered_product", "piecewise_constant_minus", "row_work", "table_plan", "GPU_ROW_WORK", "HOST_RATIO",
           "TABLE_THREADS", "TABLE_BYTES"]

_THREADS = 128
#: The GPU kernel's thread of row ``i`` makes up to :func:`row_work` binary searches one
#: after the other, while the host twin's time grows with the products in all (``flops``):
#: a product whose worst row exceeds ``GPU_ROW_WORK`` and a ``1 / HOST_RATIO`` share of
#: ``flops`` is formed on the host, with the same bits (memplus, whose rows reach 574
#: entries, took 45 s on the GPU; a 5-point matrix's products stay far below).
GPU_ROW_WORK = 1 << 18
HOST_RATIO = 64


def _canonical(M, itype, dtype):
    """``M`` as canonical CSR with index arrays of ``itype`` and values of ``dtype``."""
    M = M.tocsr()
    if not M.has_canonical_format:
        M = M.copy()
        M.sum_duplicates()
    xp = get_array_module(M)
    return (xp.ascontiguousarray(M.indptr, dtype=itype), xp.ascontiguousarray(M.indices, dtype=itype),
            xp.ascontiguousarray(M.data, dtype=dtype))


def _pass(xp, n, n_cols, a, b, counts=None, out=(None, None, None)):
    """One pass of the ``ordered_product`` kernel (``counts``: count; else fill ``out``)."""
    if xp is np:
        from ._cpu import ordered_product

        ordered_product(n_cols, *a, *b, counts, *out)
        return
    from ..nvrtc import get_kernel

    itype, vt = a[1].dtype, a[2].dtype
    get_kernel("amg", "ordered_product", vt, itype)(
        (max(1, (n + _THREADS - 1) // _THREADS),), (_THREADS,),
        (itype.type(n), itype.type(n_cols), *a, *b, counts, *out))


def row_work(A, B):
    """``(work, flops)``: the largest, over the rows ``i`` of ``A``, of
    ``nnz(A[i]) * sum_k nnz(B[k])`` (``k`` over the columns of row ``i``), a bound on the
    binary searches of the GPU kernel's thread of row ``i``, and the number of products
    ``a_ik b_kj`` in all (host integers; for canonical CSR ``A`` and ``B``)."""
    xp = get_array_module(A)
    if A.nnz == 0:
        return 0, 0
    lengths = xp.diff(B.indptr).astype(np.int64)[A.indices]
    cumulative = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(lengths)])
    indptr = A.indptr.astype(np.int64)
    products = cumulative[indptr[1:]] - cumulative[indptr[:-1]]
    return int((xp.diff(indptr) * products).max()), int(cumulative[-1])


def ordered_product(A, B):
    """The sparse product ``A B`` with every entry summed in one order on either backend.

    Entry ``(i, j)`` is the sum over the entries ``a_ik`` of row ``i`` of ``A``, in column
    order, of ``a_ik b_kj``, accumulated from zero with separately rounded products and
    additions (the order of SciPy's own product); entries that sum to exactly zero are
    left out (as SciPy leaves them out). The CPU runs a Numba loop per row; the GPU a group
    of lanes per row that accumulates the row in a table in shared memory (the
    ``hash_product`` kernel), one entry ``a_ik`` after the other, so that both give the
    same bits. Rows with more columns than that table holds are formed by a thread per
    row (``ordered_product`` kernel), or on the host where such a row would keep one
    thread busy too long (see :data:`GPU_ROW_WORK`), with the same bits.

    Parameters
    ----------
    A, B : CSR matrices (SciPy or cupyx, one backend), float32 or float64, of one dtype

    Returns
    -------
    CSR matrix of shape ``(A.shape[0], B.shape[1])``, canonical, on the backend of ``A``.

    References
    ----------
    Y. Nagasaka, A. Nukada and S. Matsuoka, "High-performance and memory-saving sparse
    general matrix-matrix multiplication for NVIDIA Pascal GPU", ICPP 2017 (rows grouped
    by their products, hash tables in shared memory).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[1.0, 2.0], [0.0, 3.0]]))
    >>> B = sp.csr_matrix(np.array([[4.0, -6.0], [0.0, 3.0]]))
    >>> ordered_product(A, B).toarray()
    array([[4., 0.],
           [0., 9.]])
    """
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"shapes {A.shape} and {B.shape} do not multiply")
    if is_device_array(A) != is_device_array(B):
        raise TypeError("the factors live on different devices")
    dtype = np.dtype(A.dtype)
    if dtype not in (np.float32, np.float64) or np.dtype(B.dtype) != dtype:
        raise TypeError(f"ordered_product takes two float32 or two float64 matrices, got {A.dtype} and {B.dtype}")
    if get_array_module(A) is np or A.nnz == 0 or B.nnz == 0:
        return _row_product(A, B)
    return _table_product(A, B)


#: Threads per block of the ``hash_product`` kernel, and the shared memory its tables may
#: take per block.
TABLE_THREADS = 128
TABLE_BYTES = 48 * 1024


def _power_of_two_above(x) -> int:
    """The least power of two >= ``x`` (1 for ``x <= 1``)."""
    return 1 << max(0, math.ceil(math.log2(max(float(x), 1.0))))


def table_plan(nnz_a, flops, widest, value_bytes, index_bytes, group=None, slots=None):
    """``(group, slots)`` of the GPU product: lanes per row about the mean row length of
    ``B`` over the entries of ``A`` (``flops / nnz_a``), more where the row with the most
    products (``widest``) needs a larger table than that many lanes' share of
    :data:`TABLE_BYTES` per block holds (a piecewise constant ``B`` after a coarse level's
    dense rows), and a table that large (rows with more columns than a table of 32 lanes
    holds overflow)."""
    per_block = TABLE_BYTES // (value_bytes + index_bytes)

    def largest(g):
        return 1 << int(math.log2(per_block // (TABLE_THREADS // g)))

    if group is None:
        group = min(32, _power_of_two_above(flops / max(nnz_a, 1)))
        while group < 32 and largest(group) < widest:
            group *= 2
    largest = largest(group)
    if slots is None:
        slots = min(largest, max(2, _power_of_two_above(widest)))
    return group, max(2, group, min(int(slots), largest))


def _rows_of(a, rows, n_cols, dtype):
    """The CSR matrix of the rows ``rows`` (sorted) of the canonical CSR arrays ``a``
    (indptr, indices, data) on the GPU."""
    import cupy

    indptr, indices, data = a
    lengths = (indptr[rows + 1] - indptr[rows]).astype(np.int64)
    sub = cupy.concatenate([cupy.zeros(1, dtype=np.int64), cupy.cumsum(lengths)])
    entries = cupy.arange(int(sub[-1]), dtype=np.int64)
    owner = cupy.searchsorted(sub[1:], entries, side="right")  # the subset row of each entry
    source = indptr[rows].astype(np.int64)[owner] + entries - sub[owner]
    S = sparse_module(cupy).csr_matrix((data[source], indices[source], sub.astype(indptr.dtype)),
                                       shape=(rows.shape[0], n_cols))
    S.has_canonical_format = True
    return S


def _table_product(A, B, group=None, slots=None):
    """``ordered_product`` on the GPU by the ``hash_product`` kernel (``group``, ``slots``:
    override :func:`table_plan`'s choice, for tests)."""
    import cupy

    from ..nvrtc import get_kernel

    xp = cupy
    n, n_cols = A.shape[0], B.shape[1]
    dtype = np.dtype(A.dtype)
    if max(n, n_cols, A.shape[1], A.nnz, B.nnz) >= np.iinfo(np.int32).max:
        return _row_product(A, B)
    itype = np.dtype(np.int32)
    a, b = _canonical(A, itype, dtype), _canonical(B, itype, dtype)
    lengths = xp.diff(b[0]).astype(np.int64)[a[1]]
    cumulative = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(lengths)])
    products = cumulative[a[0][1:]] - cumulative[a[0][:-1]]  # a_ik b_kj of each row
    flops, widest = (int(v) for v in xp.stack([cumulative[-1], products.max()]).get())
    group, slots = table_plan(A.nnz, flops, min(widest, n_cols), dtype.itemsize, itype.itemsize, group, slots)
    room = xp.minimum(products, slots)  # a row's entries: at most its products, or it overflows
    Tp = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(room)])
    total = min(flops, n * slots)  # >= Tp[-1], known without a read
    Tj, Tx = xp.empty(total, dtype=itype), xp.empty(total, dtype=dtype)
    counts = xp.empty(n, dtype=itype)
    groups = TABLE_THREADS // group
    get_kernel("amg", "hash_product", dtype, itype)(
        ((n + groups - 1) // groups,), (TABLE_THREADS,),
        (itype.type(n), np.int32(group), np.int32(slots), *a, *b, Tp, counts, Tj, Tx),
        shared_mem=groups * slots * (dtype.itemsize + itype.itemsize))
    overflow = counts < 0
    lengths = xp.where(overflow, 0, counts).astype(np.int64)
    indptr = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(lengths)])
    n_over, nnz = (int(v) for v in xp.stack([overflow.sum(dtype=np.int64), indptr[-1]]).get())  # the host waits
    rest = None
    if n_over:  # rows with more columns than a table holds: a thread each (or the host)
        rows = xp.flatnonzero(overflow).astype(itype)
        rest = _row_product(_rows_of(a, rows, A.shape[1], dtype), B)
        lengths[rows] = xp.diff(rest.indptr).astype(np.int64)
        indptr = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(lengths)])
        nnz = int(indptr[-1])
    if nnz >= np.iinfo(itype).max:
        return _row_product(A, B)
    indptr = indptr.astype(itype)
    indices, data = xp.empty(nnz, dtype=itype), xp.empty(nnz, dtype=dtype)
    copy = get_kernel("amg", "copy_rows", dtype, itype)
    lanes = min(32, _power_of_two_above(nnz / max(n, 1)))
    copy((max(1, (n * lanes + 255) // 256),), (256,),
         (itype.type(n), np.int32(lanes), None, counts, Tp, Tj, Tx, indptr, indices, data))
    if rest is not None:
        rest_ptr = rest.indptr.astype(np.int64)
        copy((max(1, (n_over * lanes + 255) // 256),), (256,),
             (itype.type(n_over), np.int32(lanes), rows, None, rest_ptr, rest.indices.astype(itype, copy=False),
              rest.data, indptr, indices, data))
    C = sparse_module(xp).csr_matrix((data, indices, indptr), shape=(n, n_cols))
    C.has_canonical_format = True
    return C


def _row_product(A, B):
    """``ordered_product`` by a thread per row of ``A B`` on the GPU (two passes: count,
    then fill; a product whose longest row would keep one thread busy too long, see
    :data:`GPU_ROW_WORK`, on the host), by the Numba twin on the CPU."""
    dtype = np.dtype(A.dtype)
    xp = get_array_module(A)
    work, flops = row_work(A, B) if xp is not np else (0, 0)
    if work > GPU_ROW_WORK and work * HOST_RATIO > flops:  # a row too long for one thread: the host's twin
        import cupy

        H = ordered_product(A.get(), B.get())
        C = sparse_module(xp).csr_matrix((cupy.asarray(H.data), cupy.asarray(H.indices), cupy.asarray(H.indptr)),
                                         shape=H.shape)
        C.has_canonical_format = True
        return C
    n, n_cols = A.shape[0], B.shape[1]
    fits = max(n, n_cols, A.shape[1], A.nnz, B.nnz) < np.iinfo(np.int32).max
    itype = np.dtype(np.int32 if fits else np.int64)
    a, b = _canonical(A, itype, dtype), _canonical(B, itype, dtype)
    counts = xp.zeros(n, dtype=itype)
    _pass(xp, n, n_cols, a, b, counts=counts)
    indptr = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(counts, dtype=np.int64)])
    nnz = int(indptr[-1])  # the host waits for the count (a set-up step)
    if nnz >= np.iinfo(itype).max:  # the product does not fit the index type: again in int64
        itype = np.dtype(np.int64)
        a, b = _canonical(A, itype, dtype), _canonical(B, itype, dtype)
    indptr = indptr.astype(itype, copy=False)
    indices, data = xp.empty(nnz, dtype=itype), xp.empty(nnz, dtype=dtype)
    _pass(xp, n, n_cols, a, b, out=(indptr, indices, data))
    C = sparse_module(xp).csr_matrix((data, indices, indptr), shape=(n, n_cols))
    C.has_canonical_format = True
    return C


def piecewise_constant_minus(aggregates, n_coarse, Y):
    """``P - Y`` for the piecewise constant prolongator ``P`` of ``aggregates`` (a 1 at
    ``(i, aggregates[i])`` in every row) and a canonical CSR ``Y`` of its shape, with
    elementwise operations only: ``1 - y`` where ``Y`` has ``(i, aggregates[i])``, ``-y``
    elsewhere, a 1 where it has not; exact zeros left out (SciPy's ``P - Y``, bit for
    bit, on either backend). Canonical CSR on the backend of ``Y``.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> Y = sp.csr_matrix(np.array([[0.5, 0.25], [0.0, 1.0], [0.0, 0.5]]))
    >>> piecewise_constant_minus(np.array([0, 1, 0]), 2, Y).toarray()
    array([[ 0.5 , -0.25],
           [ 0.  ,  0.  ],
           [ 1.  , -0.5 ]])
    """
    from .aggregation import row_indices

    xp = get_array_module(Y)
    n = Y.shape[0]
    if Y.shape != (aggregates.shape[0], n_coarse):
        raise ValueError(f"Y of shape {Y.shape} does not fit {aggregates.shape[0]} aggregates of {n_coarse}")
    itype = Y.indices.dtype
    aggregates = aggregates.astype(itype, copy=False)
    indptr = Y.indptr.astype(np.int64)
    rows = row_indices(Y)
    own_column = aggregates[rows]
    own = Y.indices == own_column
    data = xp.where(own, 1 - Y.data, -Y.data)

    def per_row(flags):  # the number of flagged entries of each row (a prefix sum, no sort)
        total = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(flags, dtype=np.int64)])
        return total[indptr[1:]] - total[indptr[:-1]]

    missing = per_row(own) == 0  # rows without an entry in their aggregate's column: a 1 goes in
    left = per_row(Y.indices < own_column)  # where it goes: after the row's entries left of it
    inserted = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(missing, dtype=np.int64)])
    nnz = Y.nnz + int(inserted[-1])  # the host waits (a set-up step)
    # every entry moves by the insertions in the rows above, and by one where its row's
    # insertion lands left of it; an inserted entry goes to slot nnz (dropped) in other rows
    dest = xp.arange(Y.nnz, dtype=np.int64) + inserted[rows] + (missing[rows] & (Y.indices > own_column))
    place = xp.where(missing, indptr[:-1] + inserted[:-1] + left, nnz)
    indices, values = xp.empty(nnz + 1, dtype=itype), xp.empty(nnz + 1, dtype=Y.dtype)
    indices[dest], values[dest] = Y.indices, data
    indices[place], values[place] = aggregates, 1
    indices, values = indices[:nnz], values[:nnz]
    indptr = (indptr + inserted).astype(itype)
    zeros = values == 0  # 1 - y == 0, or an explicit zero of Y: left out
    if bool(zeros.any()):
        keep = ~zeros
        kept = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(keep, dtype=np.int64)])
        indptr = kept[indptr.astype(np.int64)].astype(itype)
        indices, values = indices[keep], values[keep]
    S = sparse_module(xp).csr_matrix((values, indices, indptr), shape=Y.shape)
    S.has_canonical_format = True
    return S
