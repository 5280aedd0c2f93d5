"""Block-Jacobi preconditioners for :class:`DistributedCSR`: each rank applies one of the
project's preconditioners to its own diagonal block, on its own device, with no
communication in the apply.

The local solvers are looked up by name in :data:`LOCAL_SOLVERS` (or given as any
callable ``A_local -> preconditioner``); :func:`register_local_solver` adds one. The name
``"amg"`` is looked up in ``precond.amg`` when first used (that module imports more than
the other local solvers need).
"""
from __future__ import annotations

import importlib
import time

from kernels.mpi import agree

__all__ = ["BlockJacobi", "block_jacobi", "LOCAL_SOLVERS", "register_local_solver", "local_solver"]


def _project_solvers():
    import precond

    return {
        "jacobi": precond.jacobi,
        "tridiagonal": precond.tridiagonal,
        "algebraic_tridiagonal": precond.algebraic_tridiagonal,
        "algebraic_block_tridiagonal": precond.algebraic_block_tridiagonal,
    }


#: Names accepted by :func:`block_jacobi` (besides ``"none"``, ``"amg"`` and callables);
#: filled on first use.
LOCAL_SOLVERS: dict = {}
ALIASES = {"triscal": "tridiagonal", "algtriscal": "algebraic_tridiagonal", "algtriblock": "algebraic_block_tridiagonal"}
# where "amg" is found (module, function)
_AMG_ENTRY_POINTS = (("precond.amg", "amg"),)


def register_local_solver(name, factory):
    """Make ``factory(A_local, **kwargs) -> preconditioner`` available under ``name``."""
    if not callable(factory):
        raise TypeError("factory must be callable")
    LOCAL_SOLVERS[str(name)] = factory


def local_solver(name):
    """The factory of a local solver name (see :data:`LOCAL_SOLVERS`)."""
    if not LOCAL_SOLVERS:
        LOCAL_SOLVERS.update(_project_solvers())
    key = ALIASES.get(name, name)
    if key in LOCAL_SOLVERS:
        return LOCAL_SOLVERS[key]
    if key == "amg":
        reasons = []
        for module, attr in _AMG_ENTRY_POINTS:
            try:
                factory = getattr(importlib.import_module(module), attr)
            except (ImportError, AttributeError) as exc:
                reasons.append(f"{module}.{attr}: {exc}")
                continue
            if callable(factory):
                LOCAL_SOLVERS["amg"] = factory
                return factory
        raise ValueError(f"local solver 'amg' needs precond.amg ({'; '.join(reasons)})")
    raise ValueError(f"unknown local solver {name!r}; choose from {sorted(set(LOCAL_SOLVERS) | {'none', 'amg'})} "
                     "or pass a callable")


class BlockJacobi:
    """``M^{-1} = diag(B_0^{-1}, ..., B_{p-1}^{-1})`` where ``B_r`` is a preconditioner of
    rank ``r``'s diagonal block (built and applied on the rank's device).

    Attributes
    ----------
    local : the rank's preconditioner object (None on a rank without rows)
    setup_time : float
        Seconds of this rank's set-up (synchronized on the GPU).
    """

    def __init__(self, A, local="algebraic_tridiagonal", **kwargs):
        self.comm = A.comm
        self.shape = A.shape
        self.n_local = A.n_local
        self.dtype = A.dtype
        self.name = local if isinstance(local, str) else getattr(local, "__name__", type(local).__name__)
        error, self.local = None, None
        try:
            factory = None if local == "none" else (local if callable(local) else local_solver(local))
        except Exception as exc:  # noqa: BLE001 - every rank gets the same name: all fail alike
            factory, error = None, exc
        agree(self.comm, error if self.comm.rank == 0 else None, "preconditioner")
        sync = _synchronizer(A)
        sync()
        t0 = time.perf_counter()
        error = None
        if factory is not None and A.n_local > 0:
            try:
                self.local = factory(A.diag, **kwargs)
            except Exception as exc:  # noqa: BLE001 - reported collectively
                error = exc
        sync()
        self.setup_time = time.perf_counter() - t0
        agree(self.comm, error, f"local block for {self.name}")
        self._apply = None if self.local is None else (self.local.matvec if hasattr(self.local, "matvec")
                                                       else self.local)

    def matvec(self, x):
        """``M^{-1} x`` for this rank's part ``x`` (no communication)."""
        if self._apply is None:
            return x.copy()
        y = self._apply(x)
        return y if y.dtype == x.dtype else y.astype(x.dtype)

    __call__ = matvec

    def __repr__(self):
        return f"<BlockJacobi({self.name}) {self.shape[0]}x{self.shape[1]}, local {self.local!r}>"


def _synchronizer(A):
    if A.device == "gpu":
        import cupy

        return lambda: cupy.cuda.Device().synchronize()
    return lambda: None


def block_jacobi(A, local="algebraic_tridiagonal", **kwargs) -> BlockJacobi:
    """Block-Jacobi preconditioner of a :class:`DistributedCSR`; collective.

    Parameters
    ----------
    A : DistributedCSR
    local : str or callable
        The local solver of each diagonal block: ``"jacobi"``, ``"tridiagonal"``,
        ``"algebraic_tridiagonal"`` (AlgTriScal), ``"algebraic_block_tridiagonal"``
        (AlgTriBlock), ``"amg"`` (:func:`precond.amg.amg`), ``"none"``, a name
        added by :func:`register_local_solver`, or ``callable(A_local) -> preconditioner``.
    **kwargs
        Passed to the local solver's factory.

    Returns
    -------
    BlockJacobi

    Examples
    --------
    Under ``mpiexec -n 2``::

        import matrices
        from precond import distributed as dist
        A = dist.DistributedCSR.from_global(matrices.aniso2(64))
        M = dist.block_jacobi(A, "algebraic_tridiagonal")
        x, info = dist.bicgstab(A, A @ A.ones(), M=M, rtol=1e-8)
    """
    return BlockJacobi(A, local, **kwargs)
