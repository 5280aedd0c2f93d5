"""Maximal clique enumeration across MPI ranks.

The degeneracy order splits the enumeration into independent sub-problems, one per
vertex ``v`` (candidates: its later neighbours; excluded: its earlier ones), exactly as
the single-process search does (:func:`graphkit.count_maximal_cliques`), so every maximal
clique is found once, by the rank that runs its first vertex's sub-problem, and the
counts equal the single-process run's.

The sub-problems are handed out dynamically by a master/worker queue: every rank computes
the same order and the same list of chunks (the sub-problems by decreasing candidate
count, longest first, in chunks that shrink as the queue empties: guided
self-scheduling), and rank 0 hands out chunk numbers on request. Rank 0 also computes:
it answers the requests that arrived between two of its own chunks, and every worker
asks for its next chunk before it starts the current one, so it rarely waits. On the GPU
(``device="gpu"``: each rank on ``local rank % GPUs``) a rank runs one launch over its
share, split by the same cost estimate (a launch costs more than most chunks).
"""
from __future__ import annotations

import time

import numpy as np

from .cliques import CliqueCount
from .convert import as_graph
from .graph import Graph

__all__ = ["count_maximal_cliques_mpi", "maximal_cliques_mpi", "subproblem_costs"]

_TAG_ASK, _TAG_GIVE = 5101, 5102


def _check_min_size(min_size):
    if isinstance(min_size, bool) or not isinstance(min_size, (int, np.integer)) or min_size < 1:
        raise ValueError(f"min_size must be a positive integer, got {min_size!r}")
    return int(min_size)


def _arguments(G, min_size, comm, root, ordering="device"):
    """Collective: the communicator, the checked ``min_size`` and the graph on every rank."""
    from kernels.mpi import agree, world

    comm = world() if comm is None else comm
    error = None
    try:
        min_size = _check_min_size(min_size)
        if ordering not in ("device", "host"):
            raise ValueError(f"ordering must be 'device' or 'host', got {ordering!r}")
    except Exception as exc:  # noqa: BLE001 - reported collectively
        error = exc
    agree(comm, error, "min_size")
    return comm, min_size, _shared_graph(G, comm, root)


def _shared_graph(G, comm, root):
    """The graph on every rank: given everywhere, or on ``root`` only (then broadcast)."""
    from kernels.mpi import agree

    error = None
    if comm.rank == root:
        try:
            G = as_graph(G)
        except Exception as exc:  # noqa: BLE001 - reported collectively
            error = exc
    agree(comm, error if comm.rank == root else None, "graph")
    given = comm.allgather(G is not None)
    if all(given) and comm.rank != root:
        try:
            G = as_graph(G)
        except Exception as exc:  # noqa: BLE001
            error = exc
        agree(comm, error, "graph")
        return G
    if all(given):
        agree(comm, None, "graph")
        return G
    n, m, labels = comm.bcast((G.n, len(G.indices), G.labels) if comm.rank == root else None, root=root)
    indptr = G.indptr.astype(np.int64) if comm.rank == root else np.empty(n + 1, np.int64)
    indices = G.indices.astype(np.int64) if comm.rank == root else np.empty(m, np.int64)
    comm.Bcast(indptr, root=root)
    comm.Bcast(indices, root=root)
    return G if comm.rank == root else Graph(indptr, indices, labels=labels)


def subproblem_costs(indptr, indices, rank):
    """Candidates of each vertex's sub-problem (neighbours later in the order): the
    cost estimate that orders and splits the work."""
    deg = np.diff(indptr)
    src = np.repeat(np.arange(len(deg)), deg)
    later = rank[indices] > rank[src]
    return np.bincount(src[later], minlength=len(deg)).astype(np.int64)


def _chunks(costs, size, per_rank=8, min_cost=64):
    """Guided self-scheduling on the estimated costs of the tasks (in queue order): each
    chunk takes the tasks whose cost adds up to ``remaining / (per_rank * size)``, at least
    ``min_cost``; returns the chunk boundaries. The first chunks hold the few expensive
    sub-problems, the last ones many cheap ones."""
    cum = np.cumsum(np.asarray(costs, np.float64) + 1.0)  # + 1: every sub-problem costs a visit
    total = cum[-1] if len(cum) else 0.0
    bounds = [0]
    done = 0.0
    while bounds[-1] < len(cum):
        want = max(min_cost, (total - done) / (per_rank * size))
        nxt = int(np.searchsorted(cum, done + want, side="right"))
        nxt = max(nxt, bounds[-1] + 1)
        bounds.append(min(nxt, len(cum)))
        done = cum[bounds[-1] - 1]
    return np.asarray(bounds, np.int64)


class _Queue:
    """Rank 0's side of the chunk queue and every rank's way to get its next chunk."""

    def __init__(self, comm, n_chunks):
        self.comm = comm
        self.n = n_chunks
        self.next = 0
        self.stopped = 0  # workers told to stop
        self.pending = None  # a worker's request in flight (Irecv of the answer)

    # master side -----------------------------------------------------------------------
    def _give(self, dest):
        if self.next < self.n:
            k, self.next = self.next, self.next + 1
        else:
            k = -1
            self.stopped += 1
        self.comm.send(k, dest=dest, tag=_TAG_GIVE)

    def serve(self):
        """Answer every request waiting now (rank 0)."""
        MPI = _mpi()
        status = MPI.Status()
        while self.comm.Iprobe(source=MPI.ANY_SOURCE, tag=_TAG_ASK, status=status):
            src = status.Get_source()
            self.comm.recv(source=src, tag=_TAG_ASK)
            self._give(src)

    def drain(self):
        """After rank 0's last chunk: stop every worker (blocking for their last request)."""
        MPI = _mpi()
        status = MPI.Status()
        while self.stopped < self.comm.size - 1:
            self.comm.recv(source=MPI.ANY_SOURCE, tag=_TAG_ASK, status=status)
            self._give(status.Get_source())

    def take_own(self):
        if self.next >= self.n:
            return -1
        k, self.next = self.next, self.next + 1
        return k

    # worker side -----------------------------------------------------------------------
    def ask(self):
        self.comm.send(None, dest=0, tag=_TAG_ASK)
        self.pending = self.comm.irecv(source=0, tag=_TAG_GIVE)

    def receive(self):
        k = self.pending.wait()
        self.pending = None
        return k


def _mpi():
    from kernels.mpi import mpi

    return mpi()


def _chunk_numbers(comm, n_chunks):
    """Yield the chunk numbers this rank runs, from the master/worker queue."""
    q = _Queue(comm, n_chunks)
    if comm.size == 1:
        yield from range(n_chunks)
        return
    if comm.rank == 0:
        while True:
            q.serve()
            k = q.take_own()
            if k < 0:
                break
            yield k
        q.drain()
        return
    q.ask()
    while True:
        k = q.receive()
        if k < 0:
            return
        q.ask()  # the next chunk is asked for before this one runs
        yield k


def _cpu_state(G, min_size, count_only, chunk_cliques=1 << 16):
    from kernels.cliques import MceState

    state = MceState(G.indptr, G.indices, min_size, count_only, chunk_cliques)
    costs = subproblem_costs(state.indptr, state.indices, state.rank)
    tasks = np.argsort(-costs, kind="stable").astype(np.int64)  # longest first
    tasks = tasks[costs[tasks] > 0] if min_size > 1 else tasks  # a vertex without candidates is its own clique
    return state, tasks, costs[tasks]


def count_maximal_cliques_mpi(G, min_size=1, device="auto", comm=None, *, root=0, min_cost=64, ordering="device"):
    """Collective: count the maximal cliques of ``G`` by size across the ranks of ``comm``.

    Parameters
    ----------
    G : Graph, networkx graph, sparse matrix or path
        On every rank, or on ``root`` only (other ranks pass None; it is broadcast).
    min_size : int
    device : {"auto", "cpu", "gpu"}
        ``"auto"``: the GPU where every rank has one; ``"gpu"``: each rank on its own GPU
        (``local rank % GPUs``), one launch over its share of the sub-problems; ``"cpu"``:
        the Numba search, chunks from the queue.
    comm : mpi4py communicator, optional
        Default ``MPI.COMM_WORLD``.
    min_cost : int
        Least estimated cost (candidates + 1, summed over its sub-problems) of a chunk of
        the CPU queue.
    ordering : {"device", "host"}
        GPU ranks only: the order that splits the search, computed by every rank on its
        GPU in parallel peeling rounds (``"device"``), or the smallest-last order on the
        host (``"host"``, serial: it bounds the speed-up over ranks). Both give every
        sub-problem at most degeneracy-many candidates, and the same counts.

    Returns
    -------
    CliqueCount
        The same on every rank; ``count`` and ``histogram`` equal
        :func:`graphkit.count_maximal_cliques`'s, ``time`` is the slowest rank's.

    Examples
    --------
    Under ``mpiexec -n 4``::

        from graphkit import generators
        from graphkit.distributed_cliques import count_maximal_cliques_mpi
        res = count_maximal_cliques_mpi(generators.rmat(17, 8, 0.45, 0.15, 0.15, seed=1))
    """
    from kernels.mpi import select_device

    comm, min_size, G = _arguments(G, min_size, comm, root, ordering)
    MPI = _mpi()
    dev = select_device(comm, device)
    comm.Barrier()
    t0 = time.perf_counter()
    if G.n == 0:
        hist, nodes = np.zeros(1, np.int64), 0
    elif dev == "gpu":
        hist, nodes = _count_gpu_share(G, min_size, comm, ordering)
    else:
        state, tasks, costs = _cpu_state(G, min_size, True)
        bounds = _chunks(costs, comm.size, min_cost=min_cost)
        for k in _chunk_numbers(comm, len(bounds) - 1):
            state.restart(tasks[bounds[k]:bounds[k + 1]])
            state.run()
        hist, nodes = state.hist.copy(), state.nodes
    width = comm.allreduce(len(hist), op=MPI.MAX)
    hist = np.pad(np.asarray(hist, np.int64), (0, width - len(hist)))
    total = np.empty_like(hist)
    comm.Allreduce(hist, total, op=MPI.SUM)
    elapsed = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
    nz = np.nonzero(total)[0]
    top = int(nz[-1]) if len(nz) else 0
    total = total[:top + 1]
    return CliqueCount(int(total.sum()), total, top, dev, elapsed)


def _count_gpu_share(G, min_size, comm, ordering):
    """This rank's share on its GPU: the sub-problems dealt round-robin by decreasing cost."""
    from kernels import cliques as kc

    return kc.mce_count_gpu(G, min_size, share=(comm.rank, comm.size), ordering=ordering), 0


def maximal_cliques_mpi(G, min_size=1, device="auto", comm=None, *, root=0, chunk_cliques=1 << 16, min_cost=64,
                        ordering="device"):
    """Collective generator: the maximal cliques found by this rank (each maximal clique of
    ``G`` is yielded by exactly one rank), from the CPU search's chunk queue, or on the GPU
    (``device="gpu"``) from this rank's share of the sub-problems, in buffer-sized chunks.

    On the CPU every rank must exhaust the generator (the queue's master is rank 0). To collect
    them on one rank, gather the lists, e.g. ``comm.gather(list(...), root=0)``.

    Parameters
    ----------
    G : Graph, networkx graph, sparse matrix or path
        On every rank, or on ``root`` only (other ranks pass None).
    min_size : int
    device : {"auto", "cpu", "gpu"}
        ``"auto"``: each rank's GPU where every rank has one.
    comm : mpi4py communicator, optional
    chunk_cliques : int
        Cliques per internal chunk (bounds the memory).
    min_cost : int
        Least estimated cost of a chunk of the CPU queue.
    ordering : {"device", "host"}
        GPU ranks: as in :func:`count_maximal_cliques_mpi`.

    Yields
    ------
    ndarray
        One maximal clique: its sorted vertex ids (int64), or on a labelled graph its
        vertices' names, in the order of their ids.

    Examples
    --------
    Under ``mpiexec -n 2``::

        import networkx as nx
        from graphkit.distributed_cliques import maximal_cliques_mpi
        mine = [c.tolist() for c in maximal_cliques_mpi(nx.karate_club_graph())]
    """
    from kernels.mpi import select_device

    comm, min_size, G = _arguments(G, min_size, comm, root, ordering)
    if G.n == 0:
        return
    if select_device(comm, device) == "gpu":
        from kernels import cliques as kc

        for flat, off in kc.mce_chunks_gpu(G, min_size, chunk_cliques, share=(comm.rank, comm.size),
                                             ordering=ordering):
            yield from _split(G, flat, off)
        return
    state, tasks, costs = _cpu_state(G, min_size, False, chunk_cliques)
    bounds = _chunks(costs, comm.size, min_cost=min_cost)
    for k in _chunk_numbers(comm, len(bounds) - 1):
        state.restart(tasks[bounds[k]:bounds[k + 1]])
        while True:
            done, flat, off = state.run()
            yield from _split(G, flat, off)
            if done:
                break


def _split(G, flat, off):
    """The cliques of one chunk: sorted vertex ids, or their labels on a labelled graph."""
    flat = flat.astype(np.int64)
    if G.labelled:
        flat = G.to_labels(flat)
    for i in range(len(off) - 1):
        yield flat[off[i]:off[i + 1]].copy()
