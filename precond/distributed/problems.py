"""Test problems built where they are used: the rows of a 3x3-stencil matrix are generated
by the rank that owns them (no rank ever holds the global matrix, so ANISO2 at 10^8 rows
is as cheap per rank as at 10^8 / p); other generators and files go through rank 0 or
the distributed reader.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from kernels.mpi import world
from .matrix import DistributedCSR, partition_rows

__all__ = ["stencil_rows_2d", "distributed_matrix", "STENCILS"]


def _stencils():
    from matrices.generators import ANISO1_STENCIL, ANISO2_STENCIL

    return {
        "aniso1": ANISO1_STENCIL,
        "aniso2": ANISO2_STENCIL,
        "poisson2d": np.array([[0.0, -1.0, 0.0], [-1.0, 4.0, -1.0], [0.0, -1.0, 0.0]]),
    }


#: The 2D generators whose rows each rank builds itself (name -> 3x3 stencil).
STENCILS = tuple(sorted(("aniso1", "aniso2", "poisson2d")))


def stencil_rows_2d(stencil, n, lo, hi, dtype=np.float64):
    """Rows ``[lo, hi)`` of :func:`matrices.stencil_matrix_2d` (``stencil``, ``n x n`` grid)
    as a CSR matrix of shape ``(hi - lo, n * n)`` with global, sorted column indices.

    Examples
    --------
    >>> import matrices
    >>> from matrices.generators import ANISO2_STENCIL
    >>> A = matrices.aniso2(7)
    >>> B = stencil_rows_2d(ANISO2_STENCIL, 7, 10, 30)
    >>> float(abs(A[10:30] - B).max())
    0.0
    """
    stencil = np.asarray(stencil, dtype=np.float64)
    N = n * n
    if not 0 <= lo <= hi <= N:
        raise ValueError(f"row range [{lo}, {hi}) outside the {N} rows")
    itype = np.int32 if N < 2 ** 31 - 1 else np.int64
    rows = np.arange(lo, hi, dtype=itype)
    iy, ix = np.divmod(rows, itype(n))
    # taps in increasing column order: south row first (dy = -1), west to east
    taps = [(dy, dx, stencil[1 - dy, dx + 1]) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if stencil[1 - dy, dx + 1] != 0]
    dy = np.array([t[0] for t in taps], dtype=itype)
    dx = np.array([t[1] for t in taps], dtype=itype)
    # (row, tap) arrays built by broadcasting, contiguous in the CSR order
    mask = (ix[:, None] + dx >= 0) & (ix[:, None] + dx < n)
    mask &= (iy[:, None] + dy >= 0) & (iy[:, None] + dy < n)
    cols = (rows[:, None] + (dy * itype(n) + dx))[mask]
    values = np.array([a for _, _, a in taps], dtype=dtype)
    indptr = np.zeros(hi - lo + 1, itype)
    np.cumsum(mask.sum(axis=1, dtype=itype), out=indptr[1:])
    A = sp.csr_matrix((np.broadcast_to(values, mask.shape)[mask], cols, indptr), shape=(hi - lo, N))
    A.has_sorted_indices = True
    return A


def distributed_matrix(spec, n=None, comm=None, *, dtype=np.float64, device="auto", row_starts=None,
                       cuda_aware_mpi=None, transport=None):
    """Collective: a :class:`DistributedCSR` by name, as :func:`matrices.get` names them.

    The 2D stencil generators of :data:`STENCILS` (grid size ``n``, ``n^2`` rows) are
    generated row block by row block on their ranks; an uncompressed or compressed
    ``.mtx`` file is read by :func:`read_matrix_market`; anything else (other generators,
    SuiteSparse names) is made on rank 0 by :func:`matrices.get` and scattered.
    """
    from kernels.mpi import agree

    comm = world() if comm is None else comm
    key = str(spec).lower()
    stencils = _stencils()
    if key in stencils:
        error = None
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
            error = ValueError(f"generator {spec!r} needs a positive grid size n, got {n!r}")
        agree(comm, error if comm.rank == 0 else None)
        N = int(n) * int(n)
        starts = partition_rows(N, comm.size) if row_starts is None else np.asarray(row_starts, np.int64)
        local = stencil_rows_2d(stencils[key], int(n), int(starts[comm.rank]), int(starts[comm.rank + 1]), dtype)
        return DistributedCSR.from_local_rows(local, comm, row_starts=starts, device=device,
                                              cuda_aware_mpi=cuda_aware_mpi, transport=transport)
    if ".mtx" in key or Path(str(spec)).is_file():
        from .io import read_matrix_market

        return read_matrix_market(spec, comm, row_starts=row_starts, dtype=dtype, device=device,
                                  cuda_aware_mpi=cuda_aware_mpi, transport=transport)
    A, error = None, None
    if comm.rank == 0:
        try:
            import matrices

            A = matrices.get(spec, n, dtype=dtype)
        except Exception as exc:  # noqa: BLE001 - reported collectively
            error = exc
    agree(comm, error if comm.rank == 0 else None, "matrix")
    return DistributedCSR.from_global(A, comm, row_starts=row_starts, device=device, cuda_aware_mpi=cuda_aware_mpi,
                                      transport=transport)
