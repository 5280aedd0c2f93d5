"""precond.distributed: solves across MPI ranks, one GPU per rank where usable.

A square matrix is split by contiguous row blocks (:class:`DistributedCSR`, PETSc's
MPIAIJ layout: a diagonal block of owned columns and an off-diagonal block of ghost
columns, the ghost exchange planned once and overlapped with the local product);
:func:`bicgstab` and :func:`cg` have SciPy's signature and info codes and two fused
all-reduces per iteration; :func:`block_jacobi` applies any of the project's
preconditioners to each rank's diagonal block on the rank's device.

mpi4py is imported on first use (``pip install 'gpuforest[mpi]'`` brings it with the
``mpich`` wheel); run programs under ``mpiexec -n P python ...``, one rank per GPU.

Examples
--------
Saved as ``solve.py`` and run with ``mpiexec -n 4 python solve.py``::

    import numpy as np
    from precond import distributed as dist

    A = dist.distributed_matrix("aniso2", 1000)          # each rank builds its rows
    b = A @ A.ones()
    M = dist.block_jacobi(A, "algebraic_tridiagonal")
    x, info = dist.bicgstab(A, b, rtol=1e-8, M=M)
    x_all = A.gather(x)                                  # on rank 0
"""
from __future__ import annotations

from kernels.mpi import DistributedError, abort_on_error, agree, cuda_aware, mpi, select_device, world
from .io import read_matrix_market
from .krylov import bicgstab, cg
from .matrix import DistributedCSR, GhostExchange, partition_rows, row_owner
from .preconditioners import LOCAL_SOLVERS, BlockJacobi, block_jacobi, local_solver, register_local_solver
from .problems import STENCILS, distributed_matrix, stencil_rows_2d

__all__ = [
    "DistributedCSR",
    "GhostExchange",
    "partition_rows",
    "row_owner",
    "read_matrix_market",
    "distributed_matrix",
    "stencil_rows_2d",
    "STENCILS",
    "bicgstab",
    "cg",
    "BlockJacobi",
    "block_jacobi",
    "LOCAL_SOLVERS",
    "local_solver",
    "register_local_solver",
    "DistributedError",
    "agree",
    "abort_on_error",
    "select_device",
    "cuda_aware",
    "mpi",
    "world",
]
