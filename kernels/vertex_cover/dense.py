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
#: seconds of CPU search between two looks at a racing GPU search
RACE_SLICE = 0.002


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

    On the CPU the search is :class:`kernels.cliques.maxclique_dense.DenseCliqueSearch`
    on the complement's bitsets (built straight from the graph), resumable: each slice
    goes on where the last one stopped. On the GPU a slice is a run of
    :func:`kernels.cliques.maxclique_gpu.max_clique_gpu` from the best set so far (it is
    not resumable; slices double, so at most about half of the GPU time is repeated);
    its sets raise the CPU search's bound.

    Parameters
    ----------
    indptr, indices : array_like
        CSR of a simple undirected graph with sorted rows (small and dense, see
        :data:`DENSE_MAX_VERTICES`).
    initial : array_like of int, optional
        A known independent set (the search looks for larger ones only).
    larger_than : int, optional
        Look only for sets of more than this many vertices (``initial`` omitted), and
        stop at the first one (the decision version).
    upper : int, optional
        A proven upper bound on the independent sets: the search is over once the best
        set reaches it.
    device : {"cpu", "gpu"}
        Where the long slices run (short ones, ``node_cap > 0``, always run on the CPU).
    search : DenseCliqueSearch, optional
        A CPU search of the same graph's complement already under way (with the same
        ``larger_than``): it goes on from where it stopped.

    Examples
    --------
    >>> import numpy as np
    >>> indptr = np.array([0, 2, 4, 6, 8, 10]); indices = np.array([1, 4, 0, 2, 1, 3, 2, 4, 0, 3])
    >>> s = ComplementCliqueSearch(indptr, indices)   # the 5-cycle
    >>> s.solve(), s.size, len(s.independent_set())
    (True, 2, 2)

    References
    ----------
    P. San Segundo, D. Rodriguez-Losada and A. Jimenez, "An exact bit-parallel algorithm
    for the maximum clique problem", Computers & Operations Research 38(2), 2011, 571-581.
    """

    def __init__(self, indptr, indices, initial=None, larger_than=None, upper=None, device="cpu", search=None):
        from kernels.cliques.maxclique_dense import DenseCliqueSearch

        self._indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        self._indices = np.ascontiguousarray(indices, dtype=np.int64)
        self.n = n = len(self._indptr) - 1
        self.device = device
        self._cp = None  # the complement's CSR, for the GPU search (built on first use)
        lower = int(larger_than or 0)
        stop_at = None if larger_than is None else lower + 1  # deciding: the first larger set answers
        if search is None:
            search = DenseCliqueSearch(self._indptr, self._indices, complement=True, lower=lower, initial=initial,
                                       upper=stop_at)
        elif initial is not None:
            search.raise_lower(initial)
        self._s = search
        self._initial_size = len(initial) if initial is not None else lower
        self._stop_at = stop_at
        self._upper = n
        self.upper = n if upper is None else int(upper)
        self.gpu_launches = 0
        self._gpu_nodes = 0  # tree nodes of the GPU runs
        self.gpu_won = False  # the GPU finished a race first
        self.overshoot = 0.0  # seconds the latest search ran past its deadline

    @property
    def upper(self) -> int:
        """The proven upper bound on the independent sets (the search ends when met)."""
        return self._upper

    @upper.setter
    def upper(self, value):
        self._upper = int(value)
        self._s.upper = min(self._upper, self._stop_at if self._stop_at is not None else self.n)
        self._s.finished = self._s.finished or self._s.size >= min(self._s.upper, self._s.bound)

    @property
    def finished(self) -> bool:
        return bool(self._s.finished)

    @property
    def nodes(self) -> int:
        return self._s.nodes + self._gpu_nodes

    def solve(self, deadline=None, clock=time.perf_counter, node_cap=0):
        """Search until finished (True) or until ``clock()`` passes ``deadline`` (False).
        ``node_cap > 0``: a short search on the CPU of about that many tree nodes (easy
        instances end there, before a GPU launch would pay)."""
        if self._s.finished:
            return True
        # the searches take a time.perf_counter() deadline (0: none)
        until = None
        if deadline is not None:
            left = deadline - self.overshoot - clock()
            if left <= 0:
                return False
            until = time.perf_counter() + left
        if self.device == "gpu" and node_cap <= 0:
            from kernels.cliques.maxclique_gpu import GpuCapacityError

            try:
                done = self._race(until)
                if deadline is not None:
                    self.overshoot = max(self.overshoot, clock() - deadline)
                return done
            except GpuCapacityError:  # too large for the GPU kernel: the CPU from now on
                self.device = "cpu"
        return self._s.solve(deadline=until, node_cap=node_cap)

    def _race(self, until):
        """A GPU run from the best set so far, while the CPU search goes on in short slices
        between looks at the GPU (a CUDA event, no waiting): the first to finish decides,
        the other stops (the GPU within a few hundred of its tree nodes). Returns whether
        the search is over."""
        from kernels.cliques.maxclique_gpu import GpuCliqueRun

        if self._cp is None:
            self._cp, self._ci = complement_csr(self._indptr, self._indices)
        # the GPU search takes the best set as a clique, or (deciding, none known yet) the
        # size to beat
        lower = self._s.best if len(self._s.best) == self._s.size else None
        run = GpuCliqueRun(self._cp, self._ci, lower_clique=lower, lower=self._s.size,
                           deadline=0.0 if until is None else until, cancellable=True)
        self.gpu_launches += int(run.launched)
        while not run.done():
            end = time.perf_counter() + RACE_SLICE
            if until is not None:
                end = min(end, until)
            if self._s.solve(deadline=end):
                run.stop()
                break
            if until is not None and time.perf_counter() >= until:
                break  # the GPU stops at the same deadline
        verts, done, nodes = run.result()
        self._gpu_nodes += int(nodes)
        if len(verts) > self._s.size:
            self._s.raise_lower(verts)
        if done and not self._s.finished:
            self._s.finished = True
            self.gpu_won = True
        return self._s.finished

    def raise_bound(self, independent_set):
        """Use a larger independent set found elsewhere as the best."""
        return self._s.raise_lower(independent_set)

    @property
    def size(self) -> int:
        return self._s.size

    @property
    def improved(self) -> bool:
        """Whether the search found a set larger than the initial one (or bound)."""
        return self._s.size > self._initial_size

    def independent_set(self):
        """Vertex ids of the best independent set found."""
        return self._s.best

    @property
    def greedy_set(self):
        """The independent set of the greedy passes at the start (it may be no larger than
        ``larger_than``)."""
        return self._s.greedy_clique
