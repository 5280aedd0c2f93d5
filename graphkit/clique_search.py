"""Maximum clique by colouring branch and bound, CPU and GPU: the search that
:func:`graphkit.maximum_clique` and the vertex cover's clique route share.

On the GPU the search is split two levels deep into work items (one warp each) that share
the best size; a short CPU search gives the starting bound. With ``device="auto"`` and a
usable GPU the CPU search runs longer first, and the GPU takes over only when that did
not finish.

References
----------
.. [1] E. Tomita and T. Seki, "An Efficient Branch-and-Bound Algorithm for Finding a
   Maximum Clique", DMTCS 2003, LNCS 2731, Springer, 2003.
.. [2] P. San Segundo, D. Rodriguez-Losada and A. Jimenez, "An exact bit-parallel
   algorithm for the maximum clique problem", Computers & Operations Research 38(2), 2011.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from kernels.backend import resolve_device

from .convert import as_graph

__all__ = ["MaxCliqueResult", "branch_and_bound_clique"]

#: Search-tree nodes of the CPU branch and bound before the GPU takes over
#: (``device="auto"``): most instances finish within it, faster than a GPU launch.
AUTO_PROBE_NODES = 20_000
#: Search-tree nodes of the CPU search that gives the GPU its starting bound (``device="gpu"``).
GPU_PROBE_NODES = 256


@dataclass(frozen=True)
class MaxCliqueResult:
    """A maximum clique: ``vertices`` (named as the input names them: a networkx graph's
    nodes, else sorted vertex ids), ``size``, ``optimal`` (proved), ``method``, ``device``,
    ``time`` (s), ``nodes`` (search-tree nodes) and ``indices`` (the sorted vertex ids)."""

    vertices: np.ndarray = field(repr=False)
    size: int
    optimal: bool
    method: str
    device: str
    time: float
    nodes: int
    indices: np.ndarray | None = field(default=None, repr=False)  #: the clique as vertex ids (0-based)

    def __len__(self) -> int:
        return self.size


def branch_and_bound_clique(G, time_limit: float | None = None, device: str = "auto", progress=None) -> MaxCliqueResult:
    """A maximum clique by colouring branch and bound (per-vertex sub-problems in reverse
    degeneracy order, a greedy-colouring bound over bitsets).

    Parameters
    ----------
    G : Graph, networkx or igraph graph, sparse matrix or path
    time_limit : float, optional
        Seconds; when reached the best clique found is returned with ``optimal=False``.
    device : {"auto", "cpu", "gpu"}
        ``"auto"`` with a usable GPU searches ``AUTO_PROBE_NODES`` nodes on the CPU first
        (the result's ``device`` tells which one answered).
    progress : callable, optional
        Called as ``progress(nodes, best)`` every 1,024 nodes of the CPU search (the GPU
        search is one kernel launch and does not report).

    Returns
    -------
    MaxCliqueResult

    Examples
    --------
    >>> import networkx as nx
    >>> branch_and_bound_clique(nx.complete_graph(4), device="cpu").indices.tolist()
    [0, 1, 2, 3]
    """
    from kernels import cliques as kc

    G = as_graph(G)
    dev = resolve_device(device)
    if time_limit is not None:
        kc.compile_max_clique_cpu()  # the limit is for the search, not for Numba's compiler
    t0 = time.perf_counter()
    if G.n == 0:
        return MaxCliqueResult(G.to_labels(np.zeros(0, np.int64)), 0, True, "branch_and_bound", dev, 0.0, 0,
                               np.zeros(0, np.int64))
    deadline = (t0 + float(time_limit)) if time_limit is not None else 0.0
    if dev == "cpu":
        verts, optimal, nodes = kc.max_clique_cpu(G.indptr, G.indices, 0, deadline, progress=progress)
    else:
        # a short CPU search gives the GPU its starting bound; with device="auto" a
        # longer one settles the easy instances without paying for the GPU launch
        cap = AUTO_PROBE_NODES if device == "auto" else GPU_PROBE_NODES
        verts, optimal, nodes = kc.max_clique_cpu(G.indptr, G.indices, 0, deadline, cap, progress=progress)
        if optimal and device == "auto":
            dev = "cpu"
        elif not (deadline and time.perf_counter() >= deadline):
            try:
                verts, optimal, gpu_nodes = kc.max_clique_gpu(G.indptr, G.indices, verts, deadline)
            except kc.GpuCapacityError as exc:
                if device != "auto":
                    raise
                warnings.warn(f"{exc}; searching on the CPU", RuntimeWarning, stacklevel=2)
                verts, optimal, gpu_nodes = kc.max_clique_cpu(G.indptr, G.indices, 0, deadline, progress=progress)
                dev = "cpu"
            nodes += gpu_nodes
    verts = np.sort(np.asarray(verts, dtype=np.int64))
    return MaxCliqueResult(G.to_labels(verts), len(verts), bool(optimal), "branch_and_bound", dev,
                           time.perf_counter() - t0, int(nodes), verts)
