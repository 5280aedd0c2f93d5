"""Row-block distributed CSR matrix (PETSc's MPIAIJ layout) and its ghost exchange.

Rank ``r`` owns the contiguous rows ``[row_starts[r], row_starts[r + 1])`` of a square
``N x N`` matrix and the same range of every vector. Its rows are split into

* the *diagonal block* ``diag`` (``n_local x n_local``): the entries whose column is
  owned by ``r`` too, with local column indices;
* the *off-diagonal block* ``offd``: the entries whose column belongs to another rank,
  with columns renumbered into the sorted list of those *ghost* columns, and stored only
  for the rows that have any (``offd_rows``; PETSc's compressed rows).

``y = A x`` is then ``y = diag @ x_local``, ``y[offd_rows] += offd @ x_ghost``. The ghost
values come from their owners through a plan made once (:class:`GhostExchange`:
persistent point-to-point requests between neighbouring ranks only), started before
the diagonal block's product and finished after it, so the messages travel while the
local product runs.
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from kernels.backend import is_device_array

from kernels.mpi import agree, cuda_aware, mpi, select_device

__all__ = ["DistributedCSR", "GhostExchange", "NcclGhostExchange", "partition_rows", "row_owner"]

_TAG_GHOST = 7117


def partition_rows(n, size, weights=None):
    """Row starts of a contiguous split of ``n`` rows over ``size`` ranks (length
    ``size + 1``): equal counts, or balanced by cumulative ``weights`` (e.g. the nonzeros
    of each row) when given.

    Examples
    --------
    >>> partition_rows(10, 3).tolist()
    [0, 4, 7, 10]
    """
    if n < 0 or size < 1:
        raise ValueError(f"cannot split {n} rows over {size} ranks")
    if weights is None:
        base, extra = divmod(n, size)
        counts = np.full(size, base, np.int64)
        counts[:extra] += 1
        return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    cum = np.concatenate([[0], np.cumsum(np.asarray(weights, dtype=np.float64))])
    targets = cum[-1] * np.arange(1, size) / size
    inner = np.searchsorted(cum, targets, side="left")
    return np.concatenate([[0], np.clip(inner, 0, n), [n]]).astype(np.int64)


def row_owner(row_starts, rows):
    """Rank that owns each global row (``row_starts`` as in :func:`partition_rows`)."""
    return np.searchsorted(row_starts, rows, side="right") - 1


class GhostExchange:
    """The ghost exchange of a distributed CSR matrix, planned once.

    ``send_index`` are the local entries this rank sends (grouped by destination),
    ``recv`` counts per source fill the ghost vector in order. The requests are
    persistent (``Send_init`` / ``Recv_init`` on fixed buffers) and started together.

    On the GPU without a CUDA-aware MPI the values go through pinned host buffers: the
    send values are gathered and copied to the host on a high-priority stream (so they are
    not queued behind the diagonal product, which runs meanwhile), the host waits for that
    copy only, the messages travel, and the ghost values are copied back on the compute
    stream. With a CUDA-aware MPI the device buffers are passed to MPI directly.
    """

    def __init__(self, comm, send_ranks, send_counts, send_index, recv_ranks, recv_counts, dtype, gpu=False,
                 device_buffers=None):
        MPI = mpi()
        self.comm = comm
        self.dtype = np.dtype(dtype)
        self.gpu = gpu
        self.n_send = int(np.sum(send_counts))
        self.n_recv = int(np.sum(recv_counts))
        self.neighbours = sorted(set(map(int, send_ranks)) | set(map(int, recv_ranks)))
        self.device_buffers = bool(gpu and (cuda_aware() if device_buffers is None else device_buffers))
        if gpu:
            import cupy
            import cupyx

            self.send_index = cupy.asarray(send_index, dtype=np.int64)
            self.send_dev = cupy.empty(self.n_send, self.dtype)
            self.recv_dev = cupy.empty(self.n_recv, self.dtype)
            if self.device_buffers:
                send_buf, recv_buf = self.send_dev, self.recv_dev
            else:
                self.send_host = cupyx.empty_pinned(self.n_send, self.dtype)
                self.recv_host = cupyx.empty_pinned(self.n_recv, self.dtype)
                send_buf, recv_buf = self.send_host, self.recv_host
            # a priority above the default stream's 0 (CUDA clamps it into the device's range)
            self.stream = cupy.cuda.Stream(non_blocking=True, priority=-1)
            self.copied = cupy.cuda.Event(disable_timing=True)  # ghost values on the device
            self.copied.record()
        else:
            self.send_index = np.asarray(send_index, dtype=np.int64)
            send_buf = np.empty(self.n_send, self.dtype)
            recv_buf = np.empty(self.n_recv, self.dtype)
            self.send_host, self.recv_host = send_buf, recv_buf
        self.requests = []
        offset = 0
        for rank, count in zip(recv_ranks, recv_counts):
            self.requests.append(comm.Recv_init(recv_buf[offset:offset + count], source=int(rank), tag=_TAG_GHOST))
            offset += int(count)
        offset = 0
        for rank, count in zip(send_ranks, send_counts):
            self.requests.append(comm.Send_init(send_buf[offset:offset + count], dest=int(rank), tag=_TAG_GHOST))
            offset += int(count)
        self._started = False
        self._mpi = MPI
        #: host seconds spent in :meth:`end` (waiting for the copy and the messages)
        self.seconds = 0.0

    def begin(self, x):
        """Pack this rank's values for its neighbours and start the messages (on the GPU
        without CUDA-aware MPI: queue the gather and the copy to the host; the messages
        start in :meth:`end`, once the copy is done, so the host does not wait here)."""
        if not self.requests:  # no neighbours: nothing to send or wait for
            self._started = True
            return
        if self.gpu:
            import cupy

            ready = cupy.cuda.get_current_stream().record()
            self.stream.wait_event(ready)
            with self.stream:
                if self.n_send:
                    cupy.take(x, self.send_index, out=self.send_dev)
                    if not self.device_buffers:
                        cupy.asnumpy(self.send_dev, stream=self.stream, out=self.send_host, blocking=False)
            if self.device_buffers:
                self.stream.synchronize()
                self._start()
        else:
            if self.n_send:
                np.take(x, self.send_index, out=self.send_host)
            self._start()

    def _start(self):
        if self.requests:
            self._mpi.Prequest.Startall(self.requests)
        self._started = True

    def end(self):
        """Finish the messages; returns the ghost vector (on ``x``'s device)."""
        if not self.requests:
            self._started = False
            return self.recv_dev if self.gpu else self.recv_host
        t0 = time.perf_counter()
        if self.gpu and not self.device_buffers:
            import cupy

            self.copied.synchronize()  # the last ghost values have left recv_host
            self.stream.synchronize()  # this call's send values are in send_host
            self._start()
            self._mpi.Request.Waitall(self.requests)
            self._started = False
            if self.n_recv:
                self.recv_dev.set(self.recv_host, stream=cupy.cuda.get_current_stream())
            self.copied.record()
            self.seconds += time.perf_counter() - t0
            return self.recv_dev
        if not self._started:
            raise RuntimeError("GhostExchange.end() without begin()")
        self._mpi.Request.Waitall(self.requests)
        self._started = False
        self.seconds += time.perf_counter() - t0
        return self.recv_dev if self.gpu else self.recv_host

    def free(self):
        """Release the persistent requests (also done when the object is collected)."""
        for req in self.requests:
            if req != self._mpi.REQUEST_NULL:
                req.Free()
        self.requests = []

    def __del__(self):
        try:
            if not self._mpi.Is_finalized():
                self.free()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class NcclGhostExchange:
    """The ghost exchange over NCCL: everything stream-ordered on the device, no host wait.

    :meth:`begin` makes a side stream wait for the vector, gathers the send values there and
    posts the sends and receives of every neighbour in one NCCL group; :meth:`end` makes
    the compute stream wait for the side stream. The diagonal block's product, queued on
    the compute stream between the two, runs while the messages travel. The side stream
    has a priority above the compute stream's, so its few small kernels are not queued
    behind the product.
    """

    def __init__(self, nccl, send_ranks, send_counts, send_index, recv_ranks, recv_counts, dtype):
        import cupy

        self.nccl = nccl
        self.dtype = np.dtype(dtype)
        self.gpu, self.device_buffers = True, True
        self.n_send = int(np.sum(send_counts))
        self.n_recv = int(np.sum(recv_counts))
        self.neighbours = sorted(set(map(int, send_ranks)) | set(map(int, recv_ranks)))
        self.send_index = cupy.asarray(send_index, dtype=np.int64)
        self.send_dev = cupy.empty(self.n_send, self.dtype)
        self.recv_dev = cupy.empty(self.n_recv, self.dtype)
        self.sends, self.recvs = [], []
        offset = 0
        for rank, count in zip(send_ranks, send_counts):
            self.sends.append((int(rank), self.send_dev[offset:offset + int(count)]))
            offset += int(count)
        offset = 0
        for rank, count in zip(recv_ranks, recv_counts):
            self.recvs.append((int(rank), self.recv_dev[offset:offset + int(count)]))
            offset += int(count)
        self.stream = cupy.cuda.Stream(non_blocking=True, priority=-1)
        self.arrived = cupy.cuda.Event(disable_timing=True)
        #: host seconds spent in :meth:`end` (none: it only queues a wait)
        self.seconds = 0.0

    def begin(self, x):
        """Queue the gather of the send values and the messages on the side stream."""
        if not self.neighbours:
            return
        import cupy

        self.stream.wait_event(cupy.cuda.get_current_stream().record())
        with self.stream:
            if self.n_send:
                cupy.take(x, self.send_index, out=self.send_dev)
            self.nccl.exchange(self.sends, self.recvs, self.stream)
        self.arrived.record(self.stream)

    def end(self):
        """The ghost vector, valid on the current stream once the messages have arrived."""
        if self.neighbours:
            import cupy

            cupy.cuda.get_current_stream().wait_event(self.arrived)
        return self.recv_dev

    def free(self):
        """Destroy the exchange's NCCL communicator (local to this rank, no messages)."""
        if self.nccl is not None:
            self.nccl.destroy()
            self.nccl = None
        self.neighbours = []


_OFFD_KERNEL = {}


def _offd_add(indptr, indices, data, rows, ghosts, y):
    """``y[rows] += offd @ ghosts`` on the GPU in one kernel (one thread per compressed
    row of the off-diagonal block; the rows are distinct, so no atomics)."""
    import cupy

    if "k" not in _OFFD_KERNEL:
        _OFFD_KERNEL["k"] = cupy.ElementwiseKernel(
            "raw I indptr, raw J indices, raw T data, raw R rows, raw T g", "raw T y",
            "T acc = 0; for (I k = indptr[i]; k < indptr[i + 1]; ++k) acc += data[k] * g[indices[k]];"
            " y[rows[i]] += acc;", "dist_offd_add")
    _OFFD_KERNEL["k"](indptr, indices, data, rows, ghosts, y, size=len(rows))


def _check_local_rows(A, n_local, n_global):
    """Validate one rank's rows (a CSR of ``n_local x n_global``); returns it as CSR."""
    if not sp.issparse(A):
        raise TypeError(f"expected a scipy.sparse matrix of the rank's rows, got {type(A).__name__}")
    if A.shape != (n_local, n_global):
        raise ValueError(f"local rows have shape {A.shape}, expected ({n_local}, {n_global})")
    if np.dtype(A.dtype).kind not in "fc":
        raise TypeError(f"matrix dtype must be floating point, got {A.dtype}")
    A = A.tocsr()
    if not np.isfinite(A.data).all():
        bad = int(np.count_nonzero(~np.isfinite(A.data)))
        raise ValueError(f"{bad} NaN or infinite entr{'y' if bad == 1 else 'ies'} in the local rows")
    A.sum_duplicates()
    return A


class DistributedCSR:
    """A square sparse matrix distributed by contiguous row blocks over an MPI communicator.

    Build it with :meth:`from_global` (a SciPy matrix on one rank, scattered),
    :meth:`from_local_rows` (every rank passes its own rows) or
    :func:`precond.distributed.read_matrix_market` (every rank reads its own rows of a
    ``.mtx`` file). Vectors are plain NumPy (CPU) or CuPy (GPU) arrays of the rank's
    ``n_local`` entries.

    Attributes
    ----------
    comm : mpi4py communicator
    shape : (int, int)
        Global shape.
    row_starts : ndarray of int64, length ``comm.size + 1``
        Row ``row_starts[r]`` is the first of rank ``r``.
    lo, hi : int
        This rank's rows ``[lo, hi)``.
    diag : CSR (SciPy or cupyx), ``n_local x n_local``
        Entries in owned columns, local column indices.
    offd : CSR, ``len(offd_rows) x len(ghost_cols)``
        Entries in other ranks' columns, for the rows ``offd_rows`` that have any.
    ghost_cols : ndarray of int64
        Global column of each ghost (sorted).
    device : {"cpu", "gpu"}

    Examples
    --------
    Under ``mpiexec -n 2``::

        import matrices
        from precond.distributed import DistributedCSR
        A = DistributedCSR.from_global(matrices.poisson2d(100))  # rank 0's matrix, scattered
        y = A @ A.ones()                                        # this rank's rows of A @ 1
    """

    def __init__(self, comm, row_starts, diag, offd_rows, offd, ghost_cols, exchange, device="cpu", nccl=None):
        self.comm = comm
        self.row_starts = np.asarray(row_starts, dtype=np.int64)
        self.lo = int(self.row_starts[comm.rank])
        self.hi = int(self.row_starts[comm.rank + 1])
        n = int(self.row_starts[-1])
        self.shape = (n, n)
        self.diag = diag
        self.offd_rows = offd_rows
        self.offd = offd
        self.ghost_cols = ghost_cols
        self.exchange = exchange
        self.device = device
        #: NCCL communicator of the iteration's reductions (None: MPI)
        self.nccl = nccl
        self.transport = "nccl" if nccl is not None else "mpi"
        self.dtype = np.dtype(diag.dtype)
        self.nnz_local = int(diag.nnz + offd.nnz)
        self.nnz = int(comm.allreduce(self.nnz_local))

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_local_rows(cls, A_local, comm=None, *, row_starts=None, device="auto", cuda_aware_mpi=None,
                        transport=None):
        """Collective: every rank passes its own rows as a SciPy matrix of shape
        ``(n_local, N)`` with global column indices; the ranks' rows follow each other in
        rank order. ``row_starts`` may be given (then checked against the local shapes).

        Bad input on any rank (wrong shape, non-finite entries, ...) raises
        :class:`DistributedError` on every rank. ``transport`` (``"auto"``, ``"nccl"``,
        ``"mpi"``) chooses how GPU ranks move the iteration's data
        (:func:`kernels.nccl.choose_transport`).
        """
        from kernels.mpi import world

        comm = world() if comm is None else comm
        error, n_local, n_global = None, -1, -1
        try:
            if not sp.issparse(A_local):
                raise TypeError(f"expected a scipy.sparse matrix of the rank's rows, got {type(A_local).__name__}")
            n_local, n_global = (int(s) for s in A_local.shape)
        except Exception as exc:  # noqa: BLE001 - reported collectively below
            error = exc
        agree(comm, error)
        counts = np.asarray(comm.allgather(n_local), dtype=np.int64)
        globals_ = comm.allgather(n_global)
        starts = np.concatenate([[0], np.cumsum(counts)])
        error = None
        if len(set(globals_)) != 1:
            error = ValueError(f"ranks disagree on the number of columns: {globals_}")
        elif starts[-1] != n_global:
            error = ValueError(f"the ranks' rows add up to {starts[-1]} but the matrix has {n_global} columns "
                               "(it must be square)")
        elif row_starts is not None and not np.array_equal(np.asarray(row_starts), starts):
            error = ValueError(f"row_starts {list(row_starts)} do not match the local row counts {counts.tolist()}")
        agree(comm, error if comm.rank == 0 else None)
        error = None
        try:
            A_local = _check_local_rows(A_local, n_local, n_global)
            if A_local.nnz and (A_local.indices.min() < 0 or A_local.indices.max() >= n_global):
                raise ValueError("column index out of range")
        except Exception as exc:  # noqa: BLE001
            error = exc
        agree(comm, error)
        dtypes = comm.allgather(np.dtype(A_local.dtype).str)
        dtype = np.result_type(*[np.dtype(d) for d in dtypes])
        return cls._assemble(comm, starts, A_local.astype(dtype, copy=False), select_device(comm, device),
                             cuda_aware_mpi, transport)

    @classmethod
    def from_global(cls, A=None, comm=None, *, root=0, row_starts=None, device="auto", cuda_aware_mpi=None,
                    transport=None):
        """Collective: ``A`` (a square SciPy matrix) lives on rank ``root`` (other ranks
        pass None); each rank receives its rows (``row_starts``, default an equal split).
        ``transport`` as in :meth:`from_local_rows`."""
        from kernels.mpi import world

        comm = world() if comm is None else comm
        error, meta = None, None
        if comm.rank == root:
            try:
                if not sp.issparse(A):
                    raise TypeError(f"expected a scipy.sparse matrix on rank {root}, got {type(A).__name__}")
                if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] == 0:
                    raise ValueError(f"matrix must be square and non-empty, got shape {A.shape}")
                if np.dtype(A.dtype).kind not in "fc":
                    raise TypeError(f"matrix dtype must be floating point, got {A.dtype}")
                A = A.tocsr()
                n = A.shape[0]
                starts = partition_rows(n, comm.size) if row_starts is None else np.asarray(row_starts, np.int64)
                if len(starts) != comm.size + 1 or starts[0] != 0 or starts[-1] != n or np.any(np.diff(starts) < 0):
                    raise ValueError(f"row_starts must rise from 0 to {n} in {comm.size + 1} entries, got "
                                     f"{starts.tolist()}")
                meta = (starts, np.dtype(A.dtype).str, A.indices.dtype.str)
            except Exception as exc:  # noqa: BLE001
                error = exc
        agree(comm, error if comm.rank == root else None)
        starts, dtype, itype = comm.bcast(meta, root=root)
        dtype, itype = np.dtype(dtype), np.dtype(itype)
        r = comm.rank
        if r == root:
            reqs = []
            for dest in range(comm.size):
                lo, hi = int(starts[dest]), int(starts[dest + 1])
                a, b = int(A.indptr[lo]), int(A.indptr[hi])
                indptr = np.ascontiguousarray(A.indptr[lo:hi + 1] - A.indptr[lo], dtype=np.int64)
                parts = (indptr, np.ascontiguousarray(A.indices[a:b]), np.ascontiguousarray(A.data[a:b]))
                if dest == root:
                    mine = parts
                    continue
                comm.send(b - a, dest=dest, tag=1)
                reqs += [comm.Isend(p, dest=dest, tag=2 + k) for k, p in enumerate(parts)]
            mpi().Request.Waitall(reqs)
            indptr, indices, data = mine
        else:
            n_local = int(starts[r + 1] - starts[r])
            nnz = comm.recv(source=root, tag=1)
            indptr = np.empty(n_local + 1, np.int64)
            indices = np.empty(nnz, itype)
            data = np.empty(nnz, dtype)
            for k, p in enumerate((indptr, indices, data)):
                comm.Recv(p, source=root, tag=2 + k)
        n = int(starts[-1])
        local = sp.csr_matrix((data, indices, indptr), shape=(int(starts[r + 1] - starts[r]), n))
        error = None
        try:
            local = _check_local_rows(local, local.shape[0], n)
        except Exception as exc:  # noqa: BLE001
            error = exc
        agree(comm, error)
        return cls._assemble(comm, starts, local, select_device(comm, device), cuda_aware_mpi, transport)

    @classmethod
    def _assemble(cls, comm, starts, local, device, cuda_aware_mpi=None, transport=None):
        """Split validated local rows into the two blocks and plan the exchange."""
        r = comm.rank
        lo, hi = int(starts[r]), int(starts[r + 1])
        n_local = hi - lo
        cols = local.indices  # global columns, int32 when they fit
        itype = np.int32 if max(n_local, 1) < 2 ** 31 - 1 else np.int64
        own = (cols >= lo) & (cols < hi)
        # ghost entries are few: their rows come from the row pointer, and the diagonal
        # block's row lengths are the rows' lengths less their ghosts (no per-entry row array)
        ghost_entries = np.flatnonzero(~own)
        g_rows = np.searchsorted(local.indptr, ghost_entries, side="right") - 1
        lengths = np.diff(local.indptr) - np.bincount(g_rows, minlength=n_local)
        indptr = np.zeros(n_local + 1, itype)
        np.cumsum(lengths, out=indptr[1:])
        if len(ghost_entries):
            data, local_cols = local.data[own], cols[own]
        else:  # every column owned (one rank, or no coupling): no masking pass over the entries
            data, local_cols = local.data, cols
        diag = sp.csr_matrix((data, (local_cols - lo).astype(itype, copy=False), indptr), shape=(n_local, n_local))
        g_cols, g_vals = cols[ghost_entries].astype(np.int64), local.data[ghost_entries]
        ghost_cols, g_idx = np.unique(g_cols, return_inverse=True)
        offd_rows, g_row_idx = np.unique(g_rows, return_inverse=True)
        offd = sp.csr_matrix((g_vals, (g_row_idx, g_idx)), shape=(len(offd_rows), len(ghost_cols)))
        offd.sum_duplicates()
        # the plan: ghosts are sorted, so those of one owner are contiguous
        owners = row_owner(starts, ghost_cols)
        recv_counts_all = np.bincount(owners, minlength=comm.size).astype(np.int64)
        send_counts_all = np.empty(comm.size, np.int64)
        comm.Alltoall(recv_counts_all, send_counts_all)
        wanted = np.empty(int(send_counts_all.sum()), np.int64)
        MPI = mpi()
        rdispl = np.concatenate([[0], np.cumsum(recv_counts_all)[:-1]])
        sdispl = np.concatenate([[0], np.cumsum(send_counts_all)[:-1]])
        comm.Alltoallv([ghost_cols, recv_counts_all, rdispl, MPI.INT64_T],
                       [wanted, send_counts_all, sdispl, MPI.INT64_T])
        send_ranks = np.nonzero(send_counts_all)[0]
        recv_ranks = np.nonzero(recv_counts_all)[0]
        gpu = device == "gpu"
        from kernels.nccl import NcclComm, choose_transport

        error, kind = None, "mpi"
        try:
            kind = choose_transport(comm, device, transport)
        except Exception as exc:  # noqa: BLE001 - the same answer on every rank
            error = exc
        agree(comm, error if comm.rank == 0 else None, "transport")
        nccl = None
        if kind == "nccl":  # two communicators: the exchange's side stream and the reductions
            nccl = NcclComm(comm)
            exchange = NcclGhostExchange(NcclComm(comm), send_ranks, send_counts_all[send_ranks], wanted - lo,
                                         recv_ranks, recv_counts_all[recv_ranks], local.dtype)
        else:
            exchange = GhostExchange(comm, send_ranks, send_counts_all[send_ranks], wanted - lo, recv_ranks,
                                     recv_counts_all[recv_ranks], local.dtype, gpu=gpu, device_buffers=cuda_aware_mpi)
        if gpu:  # empty blocks stay on the host: no product touches them
            import cupy

            from kernels.backend import to_device

            if n_local:
                diag = to_device(diag)
            if len(offd_rows):
                offd = to_device(offd)
                offd_rows = cupy.asarray(offd_rows)
        return cls(comm, starts, diag, offd_rows, offd, ghost_cols, exchange, device, nccl)

    # -- vectors ------------------------------------------------------------------------
    @property
    def n_local(self) -> int:
        return self.hi - self.lo

    @property
    def xp(self):
        if self.device == "gpu":
            import cupy

            return cupy
        return np

    def local_vector(self, x_global):
        """This rank's entries of a global vector given on every rank (NumPy)."""
        return self.xp.asarray(np.asarray(x_global)[self.lo:self.hi], dtype=self.dtype)

    def ones(self):
        return self.xp.ones(self.n_local, self.dtype)

    def zeros(self):
        return self.xp.zeros(self.n_local, self.dtype)

    def gather(self, x, root=0):
        """Collective: the global vector on ``root`` (NumPy; None elsewhere)."""
        x = np.ascontiguousarray(x.get() if is_device_array(x) else x)
        counts = np.diff(self.row_starts)
        out = np.empty(self.shape[0], x.dtype) if self.comm.rank == root else None
        self.comm.Gatherv(x, [out, (counts, self.row_starts[:-1])] if out is not None else None, root=root)
        return out

    def scatter(self, x_global=None, root=0):
        """Collective: ``root``'s global vector (NumPy) split into the ranks' parts."""
        n_local = self.n_local
        dtype = self.comm.bcast(None if x_global is None else np.asarray(x_global).dtype.str, root=root)
        out = np.empty(n_local, np.dtype(dtype))
        send = None
        if self.comm.rank == root:
            send = [np.ascontiguousarray(x_global, dtype=dtype), (np.diff(self.row_starts), self.row_starts[:-1])]
        self.comm.Scatterv(send, out, root=root)
        return self.xp.asarray(out)

    # -- products -----------------------------------------------------------------------
    def matvec(self, x, out=None):
        """``A @ x`` for this rank's part ``x`` of a distributed vector; collective.

        The ghost values travel while the diagonal block's product runs."""
        if self.exchange is None:
            raise RuntimeError("this DistributedCSR has been freed")
        if x.shape != (self.n_local,):
            raise ValueError(f"vector of shape {x.shape} does not match the {self.n_local} local rows")
        if x.dtype != self.dtype:
            x = x.astype(self.dtype)
        if self.n_local == 0:  # a rank without rows still serves its neighbours (none: it owns no entries)
            self.exchange.begin(x)
            self.exchange.end()
            return self.xp.zeros(0, self.dtype) if out is None else out
        self.exchange.begin(x)
        if self.device == "gpu":
            from kernels.spmv import spmv

            y = spmv(self.diag, x, out=out) if self.dtype in (np.float32, np.float64) else self.diag @ x
        else:
            y = self.diag @ x
            if out is not None:
                out[...] = y
                y = out
        ghosts = self.exchange.end()
        if len(self.offd_rows):
            if self.device == "gpu":
                o = self.offd
                _offd_add(o.indptr, o.indices, o.data, self.offd_rows, ghosts, y)
            else:
                y[self.offd_rows] += self.offd @ ghosts
        return y

    def __matmul__(self, x):
        return self.matvec(x)

    # -- resources ----------------------------------------------------------------------
    def free(self):
        """Release what the matrix holds outside Python's reach: the persistent MPI requests
        of the ghost exchange, or its NCCL communicator and the reductions' one. Each NCCL
        communicator keeps device memory and a proxy thread until destroyed, so a program
        that builds many matrices should free each (or use the matrix as a context manager).
        Local to this rank, idempotent; the matrix cannot multiply afterwards.

        Examples
        --------
        Under ``mpiexec -n 2``::

            with DistributedCSR.from_global(A) as D:
                x, info = bicgstab(D, D.local_vector(b))
        """
        if self.exchange is not None:
            self.exchange.free()
            self.exchange = None
        if self.nccl is not None:
            self.nccl.destroy()
            self.nccl = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()
        return False

    def diagonal(self):
        """This rank's entries of the main diagonal."""
        return self.diag.diagonal()

    def __repr__(self):
        return (f"<DistributedCSR {self.shape[0]}x{self.shape[1]} {self.dtype}, {self.nnz} nonzeros, rank "
                f"{self.comm.rank} of {self.comm.size}: rows [{self.lo}, {self.hi}), {len(self.ghost_cols)} ghosts "
                f"from {len(self.exchange.neighbours) if self.exchange is not None else 0} neighbour(s), "
                f"on {self.device}{', freed' if self.exchange is None else ''}"
                f"{' (NCCL)' if self.nccl is not None else ''}>")
