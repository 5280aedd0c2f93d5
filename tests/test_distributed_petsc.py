"""precond.petsc: the project's preconditioners as PETSc PCPYTHON contexts (skipped
without petsc4py)."""
from __future__ import annotations

import numpy as np
import pytest

import matrices


def test_module_imports_without_petsc():
    from precond import petsc

    assert isinstance(petsc.petsc_available(), bool)
    ctx = petsc.AlgebraicTridiagonalPC()
    assert ctx.name == "algebraic_tridiagonal" and ctx.M is None
    with pytest.raises(ValueError):
        petsc.ProjectPC("jacobi", device="tpu")


@pytest.fixture
def PETSc():
    petsc4py = pytest.importorskip("petsc4py")
    petsc4py.init([])
    from petsc4py import PETSc

    return PETSc


def _system(PETSc, A):
    M = PETSc.Mat().createAIJ(size=A.shape, csr=(A.indptr.astype(np.int32), A.indices.astype(np.int32), A.data),
                              comm=PETSc.COMM_SELF)
    M.assemble()
    b = M.createVecLeft()
    b.getArray()[...] = A @ np.ones(A.shape[0])
    return M, b, M.createVecRight()


def _bcgs(PETSc, M, context=None, pc_type="python"):
    """A BiCGStab KSP on ``M``; its PC a python context (or ``pc_type``)."""
    ksp = PETSc.KSP().create(comm=PETSc.COMM_SELF)
    ksp.setOperators(M)
    ksp.setType("bcgs")
    ksp.setTolerances(rtol=1e-10, max_it=2000)
    if context is not None:
        ksp.getPC().setType("python")
        ksp.getPC().setPythonContext(context)
    elif pc_type != "python":
        ksp.getPC().setType(pc_type)
    return ksp


@pytest.mark.parametrize("name", ["JacobiPC", "AlgebraicTridiagonalPC", "AlgebraicBlockTridiagonalPC"])
def test_pcpython_context_in_a_petsc_solve(PETSc, name):
    from precond import petsc

    A = matrices.aniso2(24)
    M, b, x = _system(PETSc, A)
    ksp = _bcgs(PETSc, M, getattr(petsc, name)())
    ksp.solve(b, x)
    assert ksp.getConvergedReason() > 0
    assert np.allclose(x.getArray(), 1, atol=1e-7)


def test_block_jacobi_sub_solvers(PETSc):
    from precond import petsc

    A = matrices.aniso2(24)
    M, b, x = _system(PETSc, A)
    ksp = _bcgs(PETSc, M, pc_type="none")
    contexts = petsc.use_in_block_jacobi(ksp, petsc.AlgebraicTridiagonalPC)
    ksp.solve(b, x)
    assert len(contexts) in (0, 1) and all(c.M is not None for c in contexts)
    assert ksp.getConvergedReason() > 0 and np.allclose(x.getArray(), 1, atol=1e-7)
    # one process, one block: the same iterations as AlgTriScal as the whole preconditioner
    direct = _bcgs(PETSc, M, petsc.AlgebraicTridiagonalPC())
    direct.solve(b, M.createVecRight())
    assert ksp.getIterationNumber() == direct.getIterationNumber()
    plain = _bcgs(PETSc, M, pc_type="none")
    plain.solve(b, M.createVecRight())
    assert direct.getIterationNumber() < plain.getIterationNumber()
