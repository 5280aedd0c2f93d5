"""Python driver of the branch-and-reduce engine: set-up, chunked running, results.

:class:`BranchAndReduce` owns the arrays of one search (see
:mod:`kernels.vertex_cover.search`) and advances it in chunks of bounded work, so that
a deadline is honoured to within a chunk (about 50 ms) and ``KeyboardInterrupt`` stops it
between chunks. It also exposes the reduced graph after the root reductions
(:meth:`BranchAndReduce.kernel`) and lifts a cover of that graph back
(:meth:`BranchAndReduce.lift`), which is how other solvers (local search, the clique
route) work on the kernel.
"""
from __future__ import annotations

import time

import numpy as np
from numba.typed import List

from . import search as _s
from .reductions import NEED_SPACE, R_ALL, reduce as _reduce
from .state import (C_NODES, F_FOUND, F_MODH, F_NEED, F_OPT, F_ROOTLB, F_RN, N_CTL, N_FIELDS, N_SCRATCH, NQ, X,
                    Y, live_csr, reverse_mods_from, touch_all)

__all__ = ["BranchAndReduce"]

#: target seconds of one chunk of search between two checks of the clock
CHUNK_SECONDS = 0.05


class BranchAndReduce:
    """Exact minimum vertex cover of one graph by branch-and-reduce.

    Parameters
    ----------
    indptr, indices : array_like
        CSR of a simple undirected graph (symmetric, no self loops).
    cover : array_like of int, optional
        A known cover: the search then looks only for smaller ones. Default: all
        vertices.
    bound : int, optional
        Look only for covers of fewer than ``bound`` vertices (``cover`` must then be
        omitted); with ``stop_at_first=True`` this decides "is there a cover of size
        ``< bound``?" (parameterized vertex cover).
    rules : int
        Bit mask of the reductions (:data:`kernels.vertex_cover.reductions.R_ALL`).
    maxsat_gap : int
        Evaluate the MaxSAT bound (:func:`kernels.vertex_cover.bounds.maxsat_bound`) at
        nodes whose cheaper bounds fall short of the best cover by at most this much
        (-1: never).

    Examples
    --------
    >>> import numpy as np
    >>> indptr = np.array([0, 2, 4, 6, 8, 10]); indices = np.array([1, 4, 0, 2, 1, 3, 2, 4, 0, 3])
    >>> s = BranchAndReduce(indptr, indices)   # the 5-cycle
    >>> s.solve()
    True
    >>> s.size, sorted(s.cover().tolist()) in ([0, 1, 3], [0, 2, 3], [1, 2, 4], [1, 3, 4], [0, 2, 4])
    (3, True)

    References
    ----------
    T. Akiba and Y. Iwata, "Branch-and-reduce exponential/FPT algorithms in practice: a
    case study of vertex cover", Theoretical Computer Science 609 (2016) 211-225.
    """

    def __init__(self, indptr, indices, cover=None, bound=None, rules=R_ALL, stop_at_first=False, maxsat_gap=1 << 30):
        indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        indices = np.ascontiguousarray(indices, dtype=np.int32)
        n = len(indptr) - 1
        self.n = n
        self.rules = int(rules)
        G = _s.new_instance(indptr, indices, n)
        self.insts = List.empty_list(_s.INSTANCE_TYPE)
        self.insts.append(G)
        levels = 8 + 2 * max(n, 1).bit_length()
        self.IS = np.zeros((levels, N_FIELDS), dtype=np.int64)
        if cover is not None:
            c = np.asarray(cover, dtype=np.int64)
            y = np.zeros(n, np.int32)
            y[c] = 1
            opt, found = int(y.sum()), 1
            G[Y][:] = y
        elif bound is not None:
            opt, found = int(bound), 0
        else:
            opt, found = n, 1
            G[Y][:] = 1
        _s.init_scalars(self.IS, 0, n, int(indptr[n]), opt, found)
        self.F = np.zeros((n + 256, _s.N_FR), dtype=np.int64)
        self.ctl = np.zeros(N_CTL + 16, dtype=np.int64)
        self.ctl[_s.C_STOP_FOUND] = 1 if stop_at_first else 0
        size = 2 * n + 8
        self.SC = tuple(np.zeros(size, dtype=np.int32) for _ in range(N_SCRATCH))
        self.qarr = np.zeros((NQ, n + 1), dtype=np.int32)
        f = _s._push(self.F, self.ctl, _s.T_INST, 0)
        assert f == 0
        self.finished = False
        self.status = None
        self._budget = 20_000
        from .maxsat import MaxsatWork

        self.maxsat_gap = int(maxsat_gap)
        self._mw = MaxsatWork(n)
        self._wst = np.zeros(2, np.int64)

    # ------------------------------------------------------------------ running
    def step(self, work):
        """Run about ``work`` units (vertex visits); returns True when the search ended."""
        if self.finished:
            return True
        st = _s.run(self.insts, self.IS, self.F, self.ctl, self.SC, self.qarr, self.rules, int(work), self._mw.arrays,
                    self._wst, self.maxsat_gap)
        if self.ctl[_s.C_STATUS] < 0:
            raise RuntimeError("vertex cover search: frame stack overflow (internal error)")
        if st != _s.RUNNING:
            self.finished = True
            self.status = st
        return self.finished

    def solve(self, deadline=None, progress=None, clock=time.perf_counter):
        """Run until finished or until ``time.perf_counter()`` passes ``deadline``;
        returns True when the search finished (the cover is then optimal, or, with a
        ``bound``, none below it exists). ``progress(solver)`` is called between chunks."""
        while not self.finished:
            if deadline is not None and clock() >= deadline:
                return False
            t0 = time.perf_counter()
            self.step(self._budget)
            dt = time.perf_counter() - t0
            # aim at chunks of CHUNK_SECONDS
            if dt < CHUNK_SECONDS / 2:
                self._budget = min(self._budget * 2, 1 << 40)
            elif dt > 2 * CHUNK_SECONDS:
                self._budget = max(self._budget // 2, 1000)
            if progress is not None:
                progress(self)
        return True

    # ------------------------------------------------------------------ results
    @property
    def found(self) -> bool:
        return bool(self.IS[0, F_FOUND])

    @property
    def size(self) -> int:
        """Size of the best cover found (or the bound when none was found)."""
        return int(self.IS[0, F_OPT])

    @property
    def nodes(self) -> int:
        return int(self.ctl[C_NODES])

    @property
    def root_lower_bound(self) -> int:
        """Lower bound computed at the root node after its reductions (-1 before)."""
        return int(self.IS[0, F_ROOTLB])

    def cover(self):
        """Vertex ids of the best cover found (None when none was)."""
        if not self.found:
            return None
        return np.flatnonzero(self.insts[0][Y] == 1).astype(np.int64)

    def offer_cover(self, cover):
        """Use ``cover`` (vertex ids of a vertex cover of the input graph) as the best
        cover when it is smaller than the current one; returns True if it was."""
        c = np.asarray(cover, dtype=np.int64)
        y = np.zeros(self.n, np.int32)
        y[c] = 1
        size = int(y.sum())
        if size >= self.IS[0, F_OPT] and self.found:
            return False
        self.insts[0][Y][:] = y
        self.IS[0, F_OPT] = size
        self.IS[0, F_FOUND] = 1
        return True

    def set_bound(self, bound):
        """Decision mode: look only for a cover of fewer than ``bound`` vertices and stop
        at the first (the current best, if smaller, is kept)."""
        if self.found and self.size < bound:
            return
        self.IS[0, F_OPT] = int(bound)
        self.IS[0, F_FOUND] = 0
        self.ctl[_s.C_STOP_FOUND] = 1

    # ------------------------------------------------------------------ kernel
    def reduce_root(self):
        """Apply the reductions to the root graph only (before any search)."""
        i = 0
        G = self.insts[0]
        touch_all(G, self.ctl, self.qarr, self.SC[8], self.n)
        while True:
            r = _reduce(self.insts[0], self.IS, i, self.ctl, self.SC, self.qarr, self.rules)
            if r == NEED_SPACE:
                _s._grow_pool(self.insts, self.IS, 0, int(self.IS[0, F_NEED]) + 64)
                continue
            return r

    def kernel(self):
        """``(indptr, indices, ids)``: the live graph of the root instance, ids of its
        vertices in the input."""
        G = self.insts[0]
        x = G[X]
        # the state that lift() maps back from (the search changes x and the records)
        self._kernel_x = x.copy()
        self._kernel_head = int(self.IS[0, F_MODH])
        return live_csr(G)

    def lift(self, kernel_cover):
        """Cover of the input graph from a cover (kernel vertex numbers) of :meth:`kernel`'s
        graph: the kernel's vertices plus everything the reductions decided or folded."""
        if not hasattr(self, "_kernel_x"):
            raise RuntimeError("lift() needs kernel() first")
        x = self._kernel_x
        ids = np.flatnonzero(x < 0)
        y = x.copy()
        y[ids] = 0
        y[ids[np.asarray(kernel_cover, dtype=np.int64)]] = 1
        reverse_mods_from(self.insts[0], self._kernel_head, y)
        return np.flatnonzero(y == 1).astype(np.int64)

    def stats(self) -> dict:
        """Counters of the search: nodes, rule applications, prunings, instances."""
        from .state import C_STAT, STAT_NAMES

        d = {"nodes": self.nodes}
        d.update({k: int(self.ctl[C_STAT + j]) for j, k in enumerate(STAT_NAMES)})
        return d

    @property
    def decided(self) -> int:
        """Cover vertices fixed by the reductions so far (decided plus fold credits)."""
        from .state import F_CRT

        return int(self.IS[0, F_CRT])

    @property
    def live(self) -> int:
        return int(self.IS[0, F_RN])
