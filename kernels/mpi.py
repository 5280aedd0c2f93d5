"""MPI plumbing shared by ``precond.distributed`` and ``graphkit.distributed_cliques``: mpi4py
imported on first use, errors that every rank agrees on (no rank left waiting in a
collective), one GPU per rank.

Nothing here imports mpi4py at module level: ``import precond`` works without it, and
the first call that needs MPI raises an ``ImportError`` that names the ``mpi`` extra.
"""
from __future__ import annotations

import os
import sys
import time
import traceback

__all__ = ["mpi", "world", "DistributedError", "agree", "select_device", "cuda_aware", "abort_on_error"]


def mpi():
    """The ``mpi4py.MPI`` module (MPI is initialized by this first import).

    Raises
    ------
    ImportError
        When mpi4py (or the MPI library it loads) is missing, with the install hint.
    """
    try:
        from mpi4py import MPI
    except ImportError as exc:  # mpi4py missing, or present without a loadable MPI library
        raise ImportError(
            "precond.distributed needs mpi4py and an MPI library: pip install 'gpuforest[mpi]' "
            f"(mpi4py and the mpich wheel), or mpi4py built against your cluster's MPI ({exc})") from exc
    return MPI


def world():
    """``MPI.COMM_WORLD``."""
    return mpi().COMM_WORLD


class DistributedError(RuntimeError):
    """An error that one or more ranks found, raised on every rank of the communicator.

    ``ranks`` lists the ranks that failed; the message names each with its own text.
    """

    def __init__(self, message, ranks=()):
        super().__init__(message)
        self.ranks = tuple(ranks)


def agree(comm, error, what="input"):
    """Collective: raise :class:`DistributedError` on every rank if any rank has an error.

    Every rank calls this at the same point with ``error`` None (all good) or an exception
    or message of its own. A rank that raised alone would leave the others blocked in the
    next collective; here the messages are gathered (one ``allgather`` of small objects)
    and all ranks raise the same error, naming the ranks that failed.

    Examples
    --------
    >>> from kernels.mpi import agree, world   # doctest: +SKIP
    >>> agree(world(), None)                                 # doctest: +SKIP
    """
    text = None
    if error is not None:
        text = f"{type(error).__name__}: {error}" if isinstance(error, BaseException) else str(error)
    texts = comm.allgather(text)
    failed = [(r, t) for r, t in enumerate(texts) if t is not None]
    if failed:
        lines = "; ".join(f"rank {r}: {t}" for r, t in failed)
        raise DistributedError(f"bad {what} on {len(failed)} of {comm.size} rank(s): {lines}",
                               [r for r, _ in failed]) from (error if isinstance(error, BaseException) else None)


def _local_rank(comm):
    """Rank among the processes of this node (shared-memory split of ``comm``)."""
    MPI = mpi()
    node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.rank)
    try:
        return node.rank, node.size
    finally:
        node.Free()


def select_device(comm, device="auto"):
    """``"cpu"`` or ``"gpu"`` for this rank; on ``"gpu"`` makes ``local rank % GPUs of the
    node`` the current CUDA device before anything allocates on one. Collective: every rank
    gets the same answer (the GPU only where every rank has one), and ``device="gpu"``
    without a GPU on some rank raises :class:`DistributedError` everywhere.

    Launchers that give each rank one GPU of its own (``CUDA_VISIBLE_DEVICES`` set per
    rank by Slurm's ``--gpus-per-task`` or a wrapper script) see one device: index 0.
    """
    if device not in ("auto", "cpu", "gpu"):
        raise ValueError(f"device must be 'auto', 'cpu' or 'gpu', got {device!r}")
    local, _ = _local_rank(comm)
    usable, err = False, None
    if device != "cpu":
        try:
            import cupy

            count = cupy.cuda.runtime.getDeviceCount()
            if count > 0:
                cupy.cuda.Device(local % count).use()
                from .backend import gpu_available

                usable = gpu_available()
        except Exception as exc:  # noqa: BLE001 - CuPy missing or no CUDA: no GPU on this rank
            err = exc
    everywhere = comm.allreduce(int(usable), op=mpi().MIN) == 1
    if device == "gpu" and not everywhere:
        agree(comm, None if usable else RuntimeError(f"device='gpu' but no usable CUDA GPU ({err or 'none found'})"),
              "device")
    return "gpu" if everywhere else "cpu"


def cuda_aware() -> bool:
    """Whether the MPI library accepts CUDA device buffers.

    ``GPUFOREST_CUDA_AWARE_MPI=0|1`` decides when set; otherwise the library is asked
    through its extensions (``MPIX_Query_cuda_support`` of Open MPI and MVAPICH,
    ``MPIX_GPU_query_support`` of MPICH 4); any failure means no. The ``mpich`` wheel
    of PyPI is built without CUDA: its answer is no, and device vectors are staged through
    pinned host buffers.
    """
    env = os.environ.get("GPUFOREST_CUDA_AWARE_MPI")
    if env is not None:
        return env.strip().lower() in ("1", "yes", "true", "on")
    mpi()  # the library is loaded (and initialized) before its symbols are looked up
    import ctypes

    try:
        lib = ctypes.CDLL(None)
    except OSError:
        return False
    try:
        query = lib.MPIX_Query_cuda_support
        query.restype = ctypes.c_int
        return bool(query())
    except AttributeError:
        pass
    try:
        query = lib.MPIX_GPU_query_support
        flag = ctypes.c_int(0)
        # MPIX_GPU_SUPPORT_CUDA is 0 in MPICH's mpi.h
        return query(ctypes.c_int(0), ctypes.byref(flag)) == 0 and bool(flag.value)
    except AttributeError:
        return False


def abort_on_error(main):
    """Wrap a program's ``main``: an exception on any rank prints ``rank r: ...`` with its
    traceback to stderr and aborts every rank (``MPI_Abort``), so a failure is never a hang.

    Errors found collectively (:class:`DistributedError`) are printed by rank 0 only, and
    every rank leaves through the same abort.
    """
    def wrapped(*args, **kwargs):
        try:
            return main(*args, **kwargs)
        except SystemExit:
            raise
        except BaseException as exc:  # noqa: BLE001 - any failure must take every rank down
            MPI = mpi()
            comm = MPI.COMM_WORLD
            if not isinstance(exc, DistributedError) or comm.rank == 0:
                detail = "" if isinstance(exc, DistributedError) else "".join(traceback.format_exc())
                sys.stderr.write(f"{detail}rank {comm.rank} of {comm.size}: error: {type(exc).__name__}: {exc}\n")
                sys.stderr.flush()
            # the launcher forwards a rank's output asynchronously: give it a moment before
            # the abort tears the job down, or the message can be lost
            time.sleep(0.5)
            comm.Abort(1)
            raise  # not reached

    wrapped.__name__ = getattr(main, "__name__", "main")
    wrapped.__doc__ = main.__doc__
    return wrapped
