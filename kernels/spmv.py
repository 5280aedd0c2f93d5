"""Sparse matrix-vector product that a CUDA graph can capture.

CuPy refuses cuSPARSE calls during stream capture, so the GPU iteration of
:func:`precond.bicgstab` uses this CSR kernel (``kernels/cuda/spmv.cu``) when it replays
its iterations from a CUDA graph. On the CPU it is ``A @ x``.
"""
from __future__ import annotations

import numpy as np

from .backend import is_device_array

__all__ = ["spmv", "spmv_lanes"]


def spmv_lanes(nnz: int, n_rows: int, itemsize: int = 8) -> int:
    """Threads per row: the power of two at or below the mean row's values in bytes / 36,
    1..32 (from a sweep of lanes against cuSPARSE on stencil matrices). Short rows want one thread each (their entries
    come through L1 together); long rows want several, reading together."""
    per_row = nnz * itemsize / max(n_rows, 1) / 36
    lanes = 1
    while lanes * 2 <= min(per_row, 32):
        lanes *= 2
    return lanes


def spmv(A, x, out=None, *, lanes=None):
    """``A @ x`` for a CSR matrix ``A`` (SciPy or cupyx) and a vector ``x``.

    On the GPU one CUDA kernel with ``lanes`` threads per row (a power of two up to 32;
    default :func:`spmv_lanes`), float32 / float64 only, written into ``out`` when given.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> spmv(sp.csr_matrix(np.array([[2.0, 1.0], [0.0, 3.0]])), np.ones(2))
    array([3., 3.])
    """
    if A.shape[1] != x.shape[0] or x.ndim != 1:
        raise ValueError(f"matrix of shape {A.shape} and vector of shape {x.shape} do not match")
    if not is_device_array(A):
        y = A @ x
        if out is not None:
            out[...] = y
            return out
        return y
    import cupy

    from .nvrtc import get_kernel

    if A.format != "csr":
        raise TypeError(f"expected a CSR matrix, got {A.format}")
    vt = np.dtype(A.dtype)
    if x.dtype != vt:
        raise TypeError(f"vector dtype {x.dtype} does not match matrix dtype {vt}")
    n = A.shape[0]
    y = cupy.empty(n, vt) if out is None else out
    lanes = spmv_lanes(A.nnz, n, vt.itemsize) if lanes is None else int(lanes)
    if lanes not in (1, 2, 4, 8, 16, 32):
        raise ValueError(f"lanes must be a power of two up to 32, got {lanes}")
    threads = 256
    itype = A.indices.dtype
    indptr = A.indptr if A.indptr.dtype == itype else A.indptr.astype(itype)
    blocks = (n * lanes + threads - 1) // threads
    get_kernel("spmv", "csr_spmv", vt, itype)(
        (max(blocks, 1),), (threads,),
        (itype.type(n), np.int32(lanes), indptr, A.indices, A.data, cupy.ascontiguousarray(x), y))
    return y
