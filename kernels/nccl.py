"""NCCL through CuPy for the distributed layer: sums and neighbour exchanges of device
buffers, ordered on CUDA streams, so a distributed iteration on GPUs never waits on the host.

MPI stays the control plane (the communicator, the ranks, errors every rank agrees on, the
NCCL unique id's broadcast); NCCL moves the data of the iteration. Where CuPy was built
without NCCL, or the library is not found at run time, :func:`nccl_usable` says no on every
rank and the caller keeps the MPI path.

References
----------
.. [1] NVIDIA, "NCCL: NVIDIA Collective Communications Library", user guide, sections
   "Point-to-point communication" and "Group calls", 2024.
"""
from __future__ import annotations

import os

import numpy as np

__all__ = ["NcclComm", "nccl_usable", "choose_transport"]


def _nccl_module():
    """``cupy.cuda.nccl`` when it can run here, else None."""
    try:
        from cupy.cuda import nccl

        if not getattr(nccl, "available", False):
            return None
        nccl.get_version()  # loads the library
        return nccl
    except Exception:  # noqa: BLE001 - CuPy missing, built without NCCL, or no libnccl
        return None


def nccl_usable(comm) -> bool:
    """Collective: whether every rank of ``comm`` can use NCCL through CuPy."""
    from .mpi import mpi

    return comm.allreduce(int(_nccl_module() is not None), op=mpi().MIN) == 1


def choose_transport(comm, device, transport=None) -> str:
    """Collective: ``"nccl"`` or ``"mpi"`` for the data of a distributed iteration.

    ``transport`` None or ``"auto"`` (or ``GPUFOREST_TRANSPORT`` when set) picks NCCL for
    GPU ranks when more than one rank runs and every rank has it; ``"nccl"`` asks for it
    (``RuntimeError`` on every rank where it cannot run); ``"mpi"`` keeps MPI (host
    staging or a CUDA-aware MPI). CPU ranks always use MPI.
    """
    if transport is None:
        transport = os.environ.get("GPUFOREST_TRANSPORT", "auto").strip().lower() or "auto"
    if transport not in ("auto", "mpi", "nccl"):
        raise ValueError(f"transport must be 'auto', 'mpi' or 'nccl', got {transport!r}")
    if device != "gpu" or transport == "mpi":
        return "mpi"
    usable = nccl_usable(comm)
    if transport == "nccl" and not usable:
        raise RuntimeError("transport='nccl' but CuPy's NCCL (cupy.cuda.nccl) is not usable on every rank")
    if transport == "auto" and comm.size == 1:
        return "mpi"  # nothing travels
    return "nccl" if usable else "mpi"


def _nccl_type(nccl, dtype):
    """NCCL element type and the number of elements per array entry (complex: two reals)."""
    dtype = np.dtype(dtype)
    base = {np.dtype(np.float32): nccl.NCCL_FLOAT32, np.dtype(np.float64): nccl.NCCL_FLOAT64,
            np.dtype(np.int64): nccl.NCCL_INT64, np.dtype(np.int32): nccl.NCCL_INT32}
    if dtype.kind == "c":
        return base[np.dtype(dtype.char.lower())], 2
    if dtype not in base:
        raise TypeError(f"no NCCL type for {dtype}")
    return base[dtype], 1


class NcclComm:
    """An NCCL communicator over the ranks of an MPI communicator (collective to build:
    rank 0 makes the unique id, MPI broadcasts it). Each rank's current CUDA device is its
    GPU (:func:`kernels.mpi.select_device` chose it).

    Every call is enqueued on a CUDA stream and returns at once; the data is valid on that
    stream afterwards, in stream order, like a kernel's result.
    """

    def __init__(self, comm):
        nccl = _nccl_module()
        if nccl is None:
            raise RuntimeError("CuPy's NCCL is not usable here")
        self._nccl = nccl
        uid = nccl.get_unique_id() if comm.rank == 0 else None
        uid = comm.bcast(uid, root=0)
        self.size, self.rank = comm.size, comm.rank
        self.comm = nccl.NcclCommunicator(comm.size, uid, comm.rank)

    @staticmethod
    def _stream(stream):
        import cupy

        return (cupy.cuda.get_current_stream() if stream is None else stream).ptr

    def allreduce(self, buf, stream=None):
        """Sum ``buf`` (a contiguous CuPy array) over the ranks, in place."""
        if self.size == 1 or buf.size == 0:
            return buf
        kind, per = _nccl_type(self._nccl, buf.dtype)
        ptr = buf.data.ptr
        self.comm.allReduce(ptr, ptr, buf.size * per, kind, self._nccl.NCCL_SUM, self._stream(stream))
        return buf

    def exchange(self, sends, recvs, stream=None):
        """Point-to-point in one NCCL group: ``sends`` and ``recvs`` are lists of
        ``(peer, contiguous CuPy array)``; every receive's peer posts the matching send."""
        if not sends and not recvs:
            return
        nccl = self._nccl
        s = self._stream(stream)
        nccl.groupStart()
        try:
            for peer, buf in recvs:
                if buf.size:
                    kind, per = _nccl_type(nccl, buf.dtype)
                    self.comm.recv(buf.data.ptr, buf.size * per, kind, int(peer), s)
            for peer, buf in sends:
                if buf.size:
                    kind, per = _nccl_type(nccl, buf.dtype)
                    self.comm.send(buf.data.ptr, buf.size * per, kind, int(peer), s)
        finally:
            nccl.groupEnd()

    def destroy(self):
        """Free this rank's communicator (local: no messages). The device is synchronized
        first, so every call enqueued on it has completed; then ``ncclCommAbort`` frees the
        resources. ``ncclCommDestroy`` would first flush and wait for outstanding work,
        including work that CUDA graphs captured, and it hung on two H200 ranks after
        solves that had replayed graphs; with nothing left in flight, abort frees the same
        resources without waiting."""
        if self.comm is not None:
            import cupy

            cupy.cuda.Device().synchronize()
            self.comm.abort()
            self.comm = None
