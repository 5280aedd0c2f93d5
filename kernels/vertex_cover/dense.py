"""Maximum independent sets of dense kernels: a maximum clique of the complement.

When the reductions leave a small, dense kernel (the complements of DIMACS graphs are the
classic case), its maximum independent set is best found as a maximum clique of its
complement with the bit-parallel colouring branch and bound of :mod:`kernels.cliques`
(on the CPU, or split over the GPU's warps), whose bitset colourings are far cheaper there
than the list-based MaxSAT search of :mod:`kernels.vertex_cover.mis_bnb`, which is built
for sparse kernels.

:class:`ComplementCliqueSearch` has the interface of
:class:`~kernels.vertex_cover.mis_bnb.MisBranchAndBound` that the pipeline
(:func:`kernels.vertex_cover.exact.solve`) drives in time slices. The clique searches are
not resumable: each slice restarts from the best set known so far (the bound grows, so a
restart is cheaper than the run before it, and slices double, so at most about half of
the time is repeated).

References
----------
E. Tomita and T. Seki, "An efficient branch-and-bound algorithm for finding a maximum
clique", Proc. DMTCS 2003, LNCS 2731, 278-289.

P. San Segundo, D. Rodriguez-Losada and A. Jimenez, "An exact bit-parallel algorithm for
the maximum clique problem", Computers & Operations Research 38(2) (2011) 571-581.
"""
from __future__ import annotations

import time

import numpy as np
from numba import njit

__all__ = ["ComplementCliqueSearch", "complement_csr", "edge_density", "DENSE", "DENSE_MAX_VERTICES"]

#: kernels with at least this edge density are dense (the complements of the DIMACS graphs
#: of the GPU paper's Table I have 0.10-0.76; the sparse 200-vertex PACE 2019 kernels, where
#: the MaxSAT search is far ahead, about 0.05)
DENSE = 0.09
#: and at most this many vertices (the colouring search keeps bitsets of the complement)
DENSE_MAX_VERTICES = 2000


def edge_density(indptr) -> float:
    """Edges over vertex pairs of a CSR graph (0 for fewer than two vertices)."""
    n = len(indptr) - 1
    return 0.0 if n < 2 else float(indptr[-1]) / (n * (n - 1))


@njit(cache=True)
def complement_csr(indptr, indices):
    """CSR of the complement graph (rows sorted) of a CSR graph with sorted rows.

    Examples
    --------
    >>> import numpy as np
    >>> p, i = complement_csr(np.array([0, 1, 2, 2]), np.array([1, 0]))   # one edge and a vertex
    >>> p.tolist(), i.tolist()
    ([0, 1, 2, 4], [2, 2, 0, 1])
    """
    n = len(indptr) - 1
    cp = np.zeros(n + 1, np.int64)
    for v in range(n):
        cp[v + 1] = cp[v] + (n - 1) - (indptr[v + 1] - indptr[v])
    ci = np.empty(cp[n], np.int64)
    for v in range(n):
        q = cp[v]
        p = indptr[v]
        end = indptr[v + 1]
        for u in range(n):
            while p < end and indices[p] < u:
                p += 1
            if u != v and not (p < end and indices[p] == u):
                ci[q] = u
                q += 1
    return cp, ci


class ComplementCliqueSearch:
    """Maximum independent set of a graph as a maximum clique of its complement.

    Parameters
    ----------
    indptr, indices : array_like
        CSR of a simple undirected graph with sorted rows (small and dense, see
        :data:`DENSE_MAX_VERTICES`).
    initial : array_like of int, optional
        A known independent set (the search looks for larger ones only).
    larger_than : int, optional
        Look only for sets of more than this many vertices (``initial`` omitted).
    upper : int, optional
        A proven upper bound on the independent sets: the search is over once the best
        set reaches it.
    device : {"cpu", "gpu"}
        Where the clique search runs (:func:`kernels.cliques.maxclique_cpu.max_clique_cpu`
        or :func:`kernels.cliques.maxclique_gpu.max_clique_gpu`).

    Examples
    --------
    >>> import numpy as np
    >>> indptr = np.array([0, 2, 4, 6, 8, 10]); indices = np.array([1, 4, 0, 2, 1, 3, 2, 4, 0, 3])
    >>> s = ComplementCliqueSearch(indptr, indices)   # the 5-cycle
    >>> s.solve(), s.size, len(s.independent_set())
    (True, 2, 2)

    References
    ----------
    E. Tomita and T. Seki, "An efficient branch-and-bound algorithm for finding a maximum
    clique", Proc. DMTCS 2003, LNCS 2731, 278-289.
    """

    def __init__(self, indptr, indices, initial=None, larger_than=None, upper=None, device="cpu"):
        indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        indices = np.ascontiguousarray(indices, dtype=np.int64)
        self.n = n = len(indptr) - 1
        self.cp, self.ci = complement_csr(indptr, indices)
        self.device = device
        self.best = np.sort(np.asarray(initial, dtype=np.int64)) if initial is not None else np.zeros(0, np.int64)
        self._size = len(self.best) if initial is not None else int(larger_than or 0)
        self._initial_size = self._size
        self.upper = n if upper is None else int(upper)
        self.finished = n == 0 or self._size >= self.upper
        self.nodes = 0
        self.gpu_launches = 0
        self.overshoot = 0.0  # seconds the latest search ran past its deadline

    def solve(self, deadline=None, clock=time.perf_counter, node_cap=0):
        """Search until finished (True) or until ``clock()`` passes ``deadline`` (False).
        ``node_cap > 0``: a short search on the CPU of about that many tree nodes (easy
        instances end there, before a GPU launch would pay)."""
        if self.finished:
            return True
        # the clique searches take a time.perf_counter() deadline (0: none). They look at
        # the clock inside sub-problems only, so a run over many small ones ends late: the
        # latest end seen so far is taken off the next deadline
        until = 0.0
        if deadline is not None:
            left = deadline - self.overshoot - clock()
            if left <= 0:
                return False
            until = time.perf_counter() + left
        verts = None
        if self.device == "gpu" and node_cap <= 0:
            from kernels.cliques.maxclique_gpu import GpuCapacityError, max_clique_gpu

            # the GPU search takes its bound as a clique; with only a size (decision
            # version) it starts from nothing and may return a set below the bound
            lower = self.best if len(self.best) == self._size else None
            try:
                verts, done, nodes = max_clique_gpu(self.cp, self.ci, lower_clique=lower, deadline=until)
                self.gpu_launches += 1
            except GpuCapacityError:  # too large for the GPU kernel: the CPU from now on
                self.device = "cpu"
        if verts is None:
            from kernels.cliques.maxclique_cpu import max_clique_cpu

            verts, done, nodes = max_clique_cpu(self.cp, self.ci, lower=self._size, deadline=until,
                                                node_cap=node_cap)
        self.nodes += int(nodes)
        if deadline is not None:
            self.overshoot = max(self.overshoot, clock() - deadline)
        if len(verts) > self._size:
            self.best = np.sort(np.asarray(verts, dtype=np.int64))
            self._size = len(self.best)
        self.finished = bool(done) or self._size >= self.upper
        return self.finished

    def raise_bound(self, independent_set):
        """Use a larger independent set found elsewhere as the best."""
        iset = np.asarray(independent_set, dtype=np.int64)
        if len(iset) <= self._size:
            return False
        self.best = np.sort(iset)
        self._size = len(iset)
        self._initial_size = max(self._initial_size, self._size)
        self.finished = self.finished or self._size >= self.upper
        return True

    @property
    def size(self) -> int:
        return self._size

    @property
    def improved(self) -> bool:
        """Whether the search found a set larger than the initial one (or bound)."""
        return self._size > self._initial_size

    def independent_set(self):
        """Vertex ids of the best independent set found."""
        return self.best
