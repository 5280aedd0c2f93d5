"""The project's preconditioners inside PETSc, through petsc4py's ``PCPYTHON``.

Each class below is a PETSc Python preconditioner context: PETSc calls its ``setUp(pc)``
when the operator changes and its ``apply(pc, x, y)`` in every iteration. The operator's
local rows are taken as SciPy CSR (on a parallel ``MPIAIJ`` matrix its diagonal block,
so used directly it is block Jacobi over the ranks), the project's preconditioner is built
on them (on the rank's GPU with ``device="gpu"``), and ``apply`` writes ``M^{-1} x`` into
``y``. The usual place for them is the local solver of ``PCBJACOBI`` or ``PCASM``
(:func:`use_in_block_jacobi` sets every sub-solver up), or the whole preconditioner of a
sequential solve.

From the options database::

    -pc_type python -pc_python_type precond.petsc.AlgebraicTridiagonalPC
    -pc_type bjacobi -sub_pc_type python -sub_pc_python_type precond.petsc.AlgebraicTridiagonalPC

petsc4py is imported only when a context is set up; without it this module imports fine
and :func:`petsc_available` is False.

References
----------
S. Balay et al., "PETSc/TAO Users Manual", Argonne National Laboratory, ANL-21/39, 2024.
L. Dalcin, R. Paz, P. Kler, A. Cosimo, "Parallel distributed computing using Python",
Advances in Water Resources 34(9), 2011 (petsc4py).
"""
from __future__ import annotations

import importlib.util

import numpy as np
import scipy.sparse as sp

__all__ = ["petsc_available", "ProjectPC", "JacobiPC", "TridiagonalPC", "AlgebraicTridiagonalPC",
           "AlgebraicBlockTridiagonalPC", "AMGPC", "use_in_block_jacobi", "local_csr"]


def petsc_available() -> bool:
    """Whether petsc4py can be imported."""
    return importlib.util.find_spec("petsc4py") is not None


def local_csr(P):
    """The rows of a PETSc AIJ matrix this process owns, as SciPy CSR: the whole matrix
    when sequential, the diagonal block (owned rows and columns) when parallel."""
    kind = P.getType()
    if "mpi" in kind:
        P = P.getDiagonalBlock()
        kind = P.getType()
    if "aij" not in kind:
        P = P.convert("aij")
    indptr, indices, data = P.getValuesCSR()
    n, m = P.getSize()  # a sequential matrix: the whole of it
    return sp.csr_matrix((np.asarray(data), np.asarray(indices), np.asarray(indptr)), shape=(n, m))


class ProjectPC:
    """A ``PCPYTHON`` context applying the project's preconditioner ``name`` (see
    :func:`precond.distributed.local_solver`: ``"jacobi"``, ``"tridiagonal"``,
    ``"algebraic_tridiagonal"``, ``"algebraic_block_tridiagonal"``, ``"amg"``) to the local
    block of the preconditioning matrix.

    Parameters
    ----------
    name : str
    device : {"cpu", "gpu"}
        ``"gpu"``: the preconditioner lives on the current CUDA device; each apply copies
        ``x`` there and ``M^{-1} x`` back (PETSc's vectors are host vectors here).
    **kwargs
        Passed to the preconditioner's factory (e.g. ``m=1``).

    Examples
    --------
    With petsc4py installed::

        from petsc4py import PETSc
        from precond.petsc import AlgebraicTridiagonalPC
        ksp = PETSc.KSP().create()
        ksp.setOperators(A_petsc)
        ksp.setType("bcgs")
        pc = ksp.getPC()
        pc.setType("python")
        pc.setPythonContext(AlgebraicTridiagonalPC())
    """

    name = "algebraic_tridiagonal"

    def __init__(self, name=None, device="cpu", **kwargs):
        if name is not None:
            self.name = name
        if device not in ("cpu", "gpu"):
            raise ValueError(f"device must be 'cpu' or 'gpu', got {device!r}")
        self.device = device
        self.kwargs = kwargs
        self.M = None

    def setUp(self, pc):  # noqa: N802 - PETSc's name
        from .distributed.preconditioners import local_solver

        _, P = pc.getOperators()
        A = local_csr(P)
        if self.device == "gpu":
            from kernels.backend import to_device

            A = to_device(A)
        self.M = local_solver(self.name)(A, **self.kwargs) if A.shape[0] else None

    def apply(self, pc, x, y):
        if self.M is None:  # no rows on this process
            return
        xa = x.getArray(readonly=True)
        if self.device == "gpu":
            import cupy

            out = self.M.matvec(cupy.asarray(xa)).get()
        else:
            out = self.M.matvec(np.asarray(xa))
        y.getArray()[...] = out

    def applyTranspose(self, pc, x, y):  # noqa: N802 - PETSc's name
        raise NotImplementedError(f"{type(self).__name__} has no transpose apply (BiCG or QMR need one)")

    def view(self, pc, viewer):
        viewer.printfASCII(f"  gpuforest {self.name} ({self.device}): {self.M!r}\n")

    def destroy(self, pc):
        self.M = None

    def reset(self, pc):
        self.M = None


class JacobiPC(ProjectPC):
    """``PCPYTHON`` context: :func:`precond.jacobi` (for testing the plumbing: PETSc's own
    ``PCJACOBI`` does the same)."""

    name = "jacobi"


class TridiagonalPC(ProjectPC):
    """``PCPYTHON`` context: :func:`precond.tridiagonal` (TriScal)."""

    name = "tridiagonal"


class AlgebraicTridiagonalPC(ProjectPC):
    """``PCPYTHON`` context: :func:`precond.algebraic_tridiagonal` (AlgTriScal)."""

    name = "algebraic_tridiagonal"


class AlgebraicBlockTridiagonalPC(ProjectPC):
    """``PCPYTHON`` context: :func:`precond.algebraic_block_tridiagonal` (AlgTriBlock)."""

    name = "algebraic_block_tridiagonal"


class AMGPC(ProjectPC):
    """``PCPYTHON`` context: the project's AMG (``precond.amg``, where installed)."""

    name = "amg"


def use_in_block_jacobi(ksp, context=AlgebraicTridiagonalPC, **kwargs):
    """Make ``ksp``'s preconditioner PETSc's block Jacobi with ``context`` (a class above, or
    any ``ProjectPC`` subclass) as the solver of every local block; call after
    ``ksp.setOperators``. Returns the sub-solvers' contexts (an empty list with petsc4py
    older than 3.20, which builds them from the options database).

    Examples
    --------
    With petsc4py installed::

        ksp.setOperators(A_petsc)
        use_in_block_jacobi(ksp, AlgebraicTridiagonalPC)
        ksp.solve(b, x)
    """
    pc = ksp.getPC()
    pc.setType("bjacobi")
    if not hasattr(pc, "getBJacobiSubKSP"):
        # older petsc4py (3.18) has no accessor for the sub-solvers: name the context in the
        # options database, PETSc builds one per block (without arguments)
        if kwargs:
            raise TypeError("this petsc4py cannot pass arguments to the sub-solvers' contexts")
        from petsc4py import PETSc

        opts = PETSc.Options(pc.getOptionsPrefix() or "")
        opts["sub_ksp_type"] = "preonly"
        opts["sub_pc_type"] = "python"
        opts["sub_pc_python_type"] = f"{context.__module__}.{context.__qualname__}"
        pc.setFromOptions()
        ksp.setUp()
        return []
    ksp.setUp()
    contexts = []
    for sub in pc.getBJacobiSubKSP():
        sub.setType("preonly")
        sub_pc = sub.getPC()
        sub_pc.setType("python")
        ctx = context(**kwargs)
        sub_pc.setPythonContext(ctx)
        contexts.append(ctx)
    return contexts
