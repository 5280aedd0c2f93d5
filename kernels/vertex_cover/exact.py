"""Exact minimum vertex cover: kernel, local search, then two exact searches in turns.

:func:`solve` is the CPU pipeline behind :func:`graphkit.minimum_vertex_cover`:

1. the reductions of the branch-and-reduce engine run on the whole graph (the kernel);
2. the best clique cover found of the kernel (:func:`kernels.vertex_cover.mis_bnb.root_clique_cover`)
   bounds its independent sets, hence its covers from below; NuMVC local search on the
   kernel gives a near-optimal cover in milliseconds
   (:mod:`kernels.vertex_cover.local_search`), lifted back and used as the bound; the
   same search (its edge weights kept) goes on between the exact turns, up to
   ``LS_SHARE`` of the time, while the cover is above the root's lower bound, part of
   each turn spent looking for an independent set with one vertex in every clique of
   that cover (:mod:`kernels.vertex_cover.transversal`), which would meet the bound and
   end the search at once. On clique-structured kernels (large cliques, and the first
   local search already close to the bound: hidden partitions as in model RB graphs)
   the local search gets most of the time;
3. branch-and-reduce (:class:`kernels.vertex_cover.solver.BranchAndReduce`: reductions
   inside the search, LP / cycle / clique-cover and MaxSAT bounds, components) and, on
   kernels of at most ``MIS_MAX_VERTICES`` vertices, the clique-style branch and bound of
   :mod:`kernels.vertex_cover.mis_bnb` (random-like kernels where reductions do not bite)
   run in turns with doubling time slices, sharing the best cover; the first to finish
   proves it optimal. When the reductions leave most of the graph (``WEAK_REDUCTION``),
   the clique-style search gets ``MIS_WEIGHT`` times the time of the other;
4. a small dense kernel (:data:`~kernels.vertex_cover.dense.DENSE`, such as the
   complements of DIMACS graphs) instead gets the bitset colouring search for a maximum
   clique of its complement (:mod:`kernels.vertex_cover.dense`): a short CPU run right
   after a short local search settles the easy ones, and later it opens every round
   (``device="gpu"``: on the GPU). With ``device="gpu"``, a small sparse kernel first gets
   a short run of the GPU paper's Hybrid search.

Both searches are resumable, so the time limit is honoured to within one chunk (about
50 ms), and a ``KeyboardInterrupt`` between chunks stops the run.

References
----------
T. Akiba and Y. Iwata, "Branch-and-reduce exponential/FPT algorithms in practice: a case
study of vertex cover", Theoretical Computer Science 609 (2016) 211-225.

D. Hespe, S. Lamm, C. Schulz and D. Strash, "WeGotYouCovered: the winning solver from the
PACE 2019 challenge, vertex cover track", Proc. CSC 2020, 1-11.
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field

import numpy as np

from .dense import DENSE, DENSE_MAX_VERTICES, ComplementCliqueSearch, complement_csr, edge_density
from .local_search import NuMVC, local_search_cover
from .mis_bnb import MisBranchAndBound, root_clique_cover
from .solver import BranchAndReduce
from .transversal import transversal_search

__all__ = ["solve", "ExactResult", "MIS_MAX_VERTICES"]

#: kernels up to this size also get the clique-style branch and bound
MIS_MAX_VERTICES = 5000
#: first time slice of each search (seconds); slices double after each turn
FIRST_SLICE = 0.25
#: when the reductions leave at least this share of the graph (they do not bite), the
#: clique-style search gets ``MIS_WEIGHT`` times the slice, branch-and-reduce and the
#: local search ``WEAK_BNR_WEIGHT`` times it (on the PACE 2019 set such kernels are all proved by the
#: clique-style search or the local search)
WEAK_REDUCTION = 0.8
MIS_WEIGHT = 4.0
WEAK_BNR_WEIGHT = 0.25
#: the first branch-and-reduce slice then only covers the root node (its bounds may
#: already prove the cover optimal)
ROOT_SLICE = 0.05
#: kernels up to this size get the iterated-greedy clique cover bound at their root
COVER_BOUND_MAX = 100_000
#: steps of the first transversal search (runs double)
TV_CHUNK = 50_000
#: steps of the first local search run (runs double), and the share of the time limit
#: (20 s when there is none) the later runs may use
LS_CHUNK = 20_000
LS_SHARE = 0.1
#: the longest local search run between two looks at the clock (seconds at the measured rate)
LS_RUN_SECONDS = 0.5
#: a kernel is clique-structured (a hidden partition, as in model RB / BHOSLIB graphs)
#: when its root clique cover has cliques of at least ``CLIQUE_STRUCTURE`` vertices on
#: average and the first local search's independent set already has ``TIGHT_COVER``
#: times as many vertices as there are cliques: the cover bound is then likely tight and
#: the exact searches hopeless, while the local search finds the optimum given time (on
#: dense graphs with a loose bound, such as the complements of DIMACS graphs, the ratio
#: stays below 0.7 and the clique-style search is what proves the optimum). The local
#: search then gets ``LS_SHARE_CLIQUES`` of the time, its turns are ``LS_WEIGHT_CLIQUES``
#: times the slice (the transversal search ``TV_SHARE_CLIQUES`` of each) and the exact
#: searches' turns ``EXACT_WEIGHT_CLIQUES`` times the slice
CLIQUE_STRUCTURE = 8.0
TIGHT_COVER = 0.85
LS_SHARE_CLIQUES = 0.95
LS_WEIGHT_CLIQUES = 4.0
TV_SHARE_CLIQUES = 0.03125
EXACT_WEIGHT_CLIQUES = 0.125
#: tree nodes of the first, CPU-only clique search on a dense kernel
QUICK_NODES = 20_000
#: with a GPU, seconds of the first race of the GPU clique search against the CPU's on a
#: dense input (before the reductions and the local search set up the pipeline)
FRONT_RACE_SECONDS = 0.25
#: a dense input goes to the clique search before the reductions when every vertex has at
#: least this degree
FRONT_MIN_DEGREE = 3
#: sparse inputs (or, from larger inputs, kernels) of at most this many vertices first get
#: a short run of the GPU paper's Hybrid search (``device="gpu"``), of at most
#: ``QUICK_GPU_SECONDS``
GPU_HYBRID_MAX_VERTICES = 400
QUICK_GPU_SECONDS = 0.01


@dataclass
class ExactResult:
    """Outcome of :func:`solve` (vertex ids of the input graph)."""

    cover: np.ndarray = field(repr=False)
    size: int
    optimal: bool
    lower_bound: int
    kernel_vertices: int
    nodes: int
    solved_by: str
    stats: dict = field(repr=False, default_factory=dict)


def _from_kernel_cover(bnr, nk, kcover, nodes, bound, solved_by):
    """The result when a search on the kernel decided the question before the pipeline
    ran: ``kcover`` is a minimum cover of the kernel (``bound`` None) or, in the
    decision version, a cover below the bound if there is one, else any cover."""
    cover = bnr.lift(kcover)
    size = len(cover)
    if bound is None:
        lb = size
    else:
        lb = 0 if size < bound else bound
    return ExactResult(cover, size, True, lb, nk, int(nodes), solved_by, bnr.stats())


def _quick_dense_input(indptr, indices, bound, deadline, clock, device):
    """A dense input graph, before any reduction (they rarely remove anything from one,
    and their LP pass costs more than the whole search of an easy instance): a short CPU
    clique search on the complement's bitsets, built straight from the graph, after its
    greedy and local searches (deciding, it stops at the first independent set that
    answers); with ``device="gpu"`` then a
    race of the GPU search against the CPU search of up to ``FRONT_RACE_SECONDS``.
    Returns ``(result, search)``: the result when that decided the question (else None),
    and the search (a :class:`~kernels.vertex_cover.dense.ComplementCliqueSearch`), which
    the pipeline continues when the reductions leave the graph as it is."""
    n = len(indptr) - 1
    # deciding, a cover below the bound is an independent set of more than n - bound vertices
    lower = None if bound is None else max(n - bound, 0)
    s = ComplementCliqueSearch(indptr, indices, larger_than=lower, device=device)
    done = s.solve(deadline=deadline, clock=clock, node_cap=QUICK_NODES)
    if not done and device == "gpu":
        end = clock() + FRONT_RACE_SECONDS
        done = s.solve(deadline=end if deadline is None else min(end, deadline), clock=clock)
    if not done:
        return None, s
    keep = np.ones(n, dtype=bool)
    # deciding, and no cover below the bound: the greedy set's cover (not below it)
    keep[s.independent_set() if bound is None or s.improved else s.greedy_set] = False
    cover = np.flatnonzero(keep)
    size = len(cover)
    lb = size if bound is None else (0 if size < bound else bound)
    stats = {"dense_kernel": True, "gpu_launches": s.gpu_launches}
    return ExactResult(cover, size, True, lb, n, s.nodes, "clique_branch_and_bound", stats), s


def _quick_hybrid(kp, ki, bound, decided, deadline, clock):
    """A short run of the GPU paper's Hybrid search on a small sparse kernel. Returns
    ``(kernel cover or None, nodes, launched)``: the cover when the search finished (see
    :func:`_from_kernel_cover`); nothing is launched when the kernel does not fit the GPU
    kernels or no time is left."""
    from .paper import GpuCapacityError, greedy_cover_cpu, search_gpu

    deg = np.diff(kp).astype(np.int32)
    ub, gdeg = greedy_cover_cpu(kp, ki, deg, 0)
    greedy = np.flatnonzero(np.asarray(gdeg) < 0)
    pvc = bound is not None
    limit = ub - 1 if not pvc else bound - 1 - decided
    if pvc and ub <= limit:
        return greedy, 0, False
    budget = QUICK_GPU_SECONDS if deadline is None else min(QUICK_GPU_SECONDS, deadline - clock())
    if limit < 0 or budget <= 0:
        return None, 0, False
    try:
        r = search_gpu(kp, ki, deg, 0, limit, pvc=pvc, method="hybrid", time_limit=budget)
    except GpuCapacityError:
        return None, 0, False
    nodes = int(np.sum(r["nodes_per_block"]))
    if not r["complete"]:
        return None, nodes, True
    if r["best"] >= 0:
        return np.flatnonzero(np.asarray(r["best_deg"]) < 0), nodes, True
    # nothing within the limit: the greedy cover is optimal (or, deciding, above the bound)
    return greedy, nodes, True


def timed_local_search(kp, ki, budget_s, clock, target=0, best=None, steps=LS_CHUNK, seed=0):
    """NuMVC runs of doubling length, each from the best cover so far with a new seed,
    until ``budget_s`` seconds pass or a cover of at most ``target`` vertices is found.
    A run never gets more steps than the measured step rate fits in the time left (one
    run is one Numba call that does not look at the clock).
    Returns ``(best cover, steps of the next run, next seed)``."""
    t0 = clock()
    while True:
        init = None
        if best is not None:
            init = np.zeros(len(kp) - 1, dtype=bool)
            init[best] = True
        t = clock()
        c = local_search_cover(kp, ki, steps=steps, seed=seed, init=init, target=target)
        took = clock() - t
        seed += 1
        if best is None or len(c) < len(best):
            best = c
        left = budget_s - (clock() - t0)
        if len(best) <= target or left <= 0:
            return best, 2 * steps, seed
        rate = steps / max(took, 1e-6)
        steps = max(min(2 * steps, int(rate * left)), LS_CHUNK // 4)


def timed_run(ls, budget_s, clock, target=0, steps=LS_CHUNK, rate=None):
    """Continue the resumable local search ``ls`` (:class:`~kernels.vertex_cover.local_search.NuMVC`)
    in runs of doubling length until ``budget_s`` seconds pass or a cover of at most
    ``target`` vertices is found. A run (one Numba call that does not look at the clock)
    never gets more steps than the step rate measured so far (``rate``, steps per
    second, from earlier calls too) fits in the time left, nor more than
    ``LS_RUN_SECONDS`` of them (the rate drifts with the machine's load: a long run
    could end a second late). Returns ``(steps of the next run, rate)``."""
    t0 = clock()
    while True:
        if rate is not None:
            fit = min(budget_s - (clock() - t0), LS_RUN_SECONDS)
            steps = max(min(steps, int(rate * fit)), LS_CHUNK // 4)
        t = clock()
        ls.run(steps, target)
        took = clock() - t
        if took > 0.01:
            rate = steps / took
        left = budget_s - (clock() - t0)
        if ls.best_size <= target or left <= 0:
            return 2 * steps, rate
        steps *= 2


def timed_transversal(kp, ki, cls, budget_s, clock, steps=TV_CHUNK, seed=0, rate=None):
    """Transversal searches (:func:`kernels.vertex_cover.transversal.transversal_search`)
    of doubling length with new seeds until one finds an independent set with a vertex
    in every clique of ``cls`` or ``budget_s`` seconds pass (runs are capped by the
    step rate measured so far, ``rate``, from earlier calls too). Returns ``(kernel
    cover or None, steps of the next run, next seed, rate)``."""
    t0 = clock()
    while True:
        if rate is not None:
            steps = max(min(steps, int(rate * (budget_s - (clock() - t0)))), TV_CHUNK // 4)
        t = clock()
        found = transversal_search(kp, ki, cls, steps=steps, seed=seed)
        took = clock() - t
        seed += 1
        if took > 0.01:
            rate = steps / took
        if found is not None:
            return np.setdiff1d(np.arange(len(kp) - 1), found), steps, seed, rate
        left = budget_s - (clock() - t0)
        if left <= 0:
            return None, 2 * steps, seed, rate
        steps *= 2


def solve(indptr, indices, time_limit=None, *, bound=None, progress=None, clock=time.perf_counter,
          mis_max=MIS_MAX_VERTICES, use_mis=True, device="cpu") -> ExactResult:
    """Minimum vertex cover of a CSR graph (see the module docstring).

    Parameters
    ----------
    indptr, indices : array_like
        CSR of a simple undirected graph with sorted rows.
    time_limit : float, optional
        Seconds; on expiry the best cover found is returned with ``optimal=False`` and
        the best lower bound proven.
    bound : int, optional
        Decision version: stop at the first cover of fewer than ``bound`` vertices;
        ``optimal`` then means "decided" (a cover below the bound was found, or the
        search proved that none exists, with ``cover`` the best one found, possibly
        larger).
    progress : callable, optional
        ``progress(dict)`` between chunks (keys ``best``, ``lower_bound``, ``nodes``,
        ``elapsed``).
    clock : callable
        Time source for the limit (``time.perf_counter``; ``time.process_time`` measures
        CPU time on a shared machine).
    mis_max : int
        Largest kernel given to the clique-style branch and bound.
    use_mis : bool
        False runs branch-and-reduce alone.
    device : {"cpu", "gpu"}
        Where the clique search of a dense kernel runs (see
        :mod:`kernels.vertex_cover.dense`); everything else runs on the CPU.

    Returns
    -------
    ExactResult

    Examples
    --------
    >>> import numpy as np
    >>> indptr = np.array([0, 2, 4, 6, 8, 10]); indices = np.array([1, 4, 0, 2, 1, 3, 2, 4, 0, 3])
    >>> r = solve(indptr, indices)   # the 5-cycle
    >>> r.size, r.optimal
    (3, True)
    >>> solve(indptr, indices, bound=3).optimal   # decided: no cover of 2 vertices
    True
    """
    t0 = clock()
    deadline = None if time_limit is None else t0 + float(time_limit)
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    indices = np.ascontiguousarray(indices, dtype=np.int32)
    n = len(indptr) - 1
    # (vertices of degree two or less: the reductions shrink the graph, they go first)
    front = (use_mis and 0 < n <= DENSE_MAX_VERTICES and edge_density(indptr) >= DENSE
             and np.diff(indptr).min() >= FRONT_MIN_DEGREE)
    front_search = None
    if front:
        r, front_search = _quick_dense_input(indptr, indices, bound, deadline, clock, device)
        if r is not None:
            return r
    gpu_launches = 0
    # a small sparse input: a short run of the GPU paper's Hybrid search on the whole graph
    # before the reductions (it proves small hard cores such as MANN_a27's complement in
    # milliseconds, faster whole than after the folds)
    input_hybrid = device == "gpu" and not front and 0 < n <= GPU_HYBRID_MAX_VERTICES and indptr[-1] > 0
    if input_hybrid:
        # (int64 ids: the types the kernel-side searches are compiled for)
        cover, nodes, launched = _quick_hybrid(indptr, indices.astype(np.int64), bound, 0, deadline, clock)
        gpu_launches = int(launched)
        if cover is not None:
            size = len(cover)
            lb = size if bound is None else (0 if size < bound else bound)
            return ExactResult(cover, size, True, lb, n, nodes, "gpu" if launched else "local_search",
                               {"gpu_launches": gpu_launches})
    bnr = BranchAndReduce(indptr, indices)
    bnr.reduce_root()
    kp, ki, ids = bnr.kernel()
    nk = len(ids)
    if nk == 0:
        cover = bnr.lift(np.zeros(0, np.int64))
        return ExactResult(cover, len(cover), True, len(cover), 0, 0, "reductions", bnr.stats())
    decided = bnr.decided  # cover vertices fixed by the root reductions
    # decision version: a kernel cover of at most `target` vertices answers it
    target = 0 if bound is None else max(bound - 1 - decided, 0)
    larger_than = None if bound is None else nk - (bound - decided)
    dense = use_mis and nk <= DENSE_MAX_VERTICES and edge_density(kp) >= DENSE
    quick = None
    # a short local search: deciding, it often finds a cover within the budget at once;
    # else its cover is the first bound of the searches
    ls = NuMVC(kp, ki)
    if ls.run(LS_CHUNK // 10, target) <= target and bound is not None:
        return _from_kernel_cover(bnr, nk, ls.cover(), 0, bound, "local_search")
    if dense:
        # a small dense kernel: its independent sets are cliques of its sparse complement,
        # which the bitset colouring search handles far better than the list-based one;
        # a short run on the CPU settles the easy ones before anything else is set up
        # (when the reductions left the input as it was, the search on it goes on)
        same = front_search is not None and nk == n and np.array_equal(ids, np.arange(n))
        if same:
            quick = front_search
            if bound is None:
                quick.raise_bound(np.setdiff1d(np.arange(nk), ls.cover()))
        elif bound is None:
            quick = ComplementCliqueSearch(kp, ki, initial=np.setdiff1d(np.arange(nk), ls.cover()), device=device)
        else:
            quick = ComplementCliqueSearch(kp, ki, larger_than=larger_than, device=device)
        if not same and quick.solve(deadline=deadline, clock=clock, node_cap=QUICK_NODES):
            kc = np.setdiff1d(np.arange(nk), quick.independent_set())
            return _from_kernel_cover(bnr, nk, kc, quick.nodes, bound, "clique_branch_and_bound")
    elif device == "gpu" and nk <= GPU_HYBRID_MAX_VERTICES and not input_hybrid:
        # a sparse kernel small enough for the GPU paper's Hybrid search: a short run
        # there
        kc, nodes, launched = _quick_hybrid(kp, ki, bound, decided, deadline, clock)
        gpu_launches = int(launched)
        if kc is not None:
            res = _from_kernel_cover(bnr, nk, kc, nodes, bound, "gpu" if launched else "local_search")
            res.stats["gpu_launches"] = gpu_launches
            return res
    # a first cover in milliseconds; the same local search goes on between the exact turns
    # (weights kept) while the best cover is above the root lower bound
    ls.run(LS_CHUNK, target)
    kcover, ls_steps, ls_rate = ls.cover(), 2 * LS_CHUNK, None
    # the best clique cover of the kernel found at its root bounds its independent sets,
    # hence its covers from below; on dense kernels it is often tight (the kernel of a
    # dense graph is small; large sparse kernels get the engine's own root bounds only)
    cover_lb, tv_cls = -1, None
    if nk <= COVER_BOUND_MAX:
        tv_cls, tv_k = root_clique_cover(kp, ki, nk)
        cover_lb = decided + nk - tv_k
    tv_steps, tv_seed, tv_rate = TV_CHUNK, 0, None
    bnr.offer_cover(bnr.lift(kcover))
    if bound is not None:
        if bnr.size < bound:
            return ExactResult(bnr.cover(), bnr.size, True, 0, nk, 0, "local_search", bnr.stats())
        bnr.set_bound(bound)

    mis = None
    mis_upper = nk + decided - cover_lb if cover_lb >= 0 else None
    if dense:
        mis = quick  # goes on from its bound, on `device`
        if mis_upper is not None:
            mis.upper = mis_upper
        if bound is None:
            mis.raise_bound(np.setdiff1d(np.arange(nk), kcover))
    elif use_mis and nk <= mis_max:
        if bound is None:
            mis = MisBranchAndBound(kp, ki, initial=np.setdiff1d(np.arange(nk), kcover), upper=mis_upper)
        else:
            # a cover below the bound is an independent set of more than nk - (bound - decided) - 1
            mis = MisBranchAndBound(kp, ki, larger_than=larger_than, upper=mis_upper)

    def root_lb():
        # best lower bound on the whole graph's covers proven at the root (-1: none yet)
        return max(bnr.root_lower_bound, cover_lb)

    def report():
        if progress is not None:
            lb = max(root_lb(), 0)
            progress(dict(best=bnr.size if bnr.found else None, lower_bound=lb,
                          nodes=bnr.nodes + (mis.nodes if mis else 0), elapsed=clock() - t0))

    def share_from_mis():
        # a larger independent set of the kernel is a smaller cover
        if mis is not None and mis.improved and (not bnr.found or nk - mis.size + decided < bnr.size):
            bnr.offer_cover(bnr.lift(np.setdiff1d(np.arange(nk), mis.independent_set())))

    def share_to_mis():
        if mis is None or not bnr.found or bound is not None:
            return
        k_size = bnr.size - decided
        if nk - k_size > mis.size:
            kc = np.flatnonzero(bnr.insts[0][1][ids] == 1)
            if len(kc) == k_size:
                mis.raise_bound(np.setdiff1d(np.arange(nk), kc))

    cliques = tv_cls is not None and nk >= CLIQUE_STRUCTURE * tv_k and nk - len(kcover) >= TIGHT_COVER * tv_k
    ls_time = 0.0  # seconds of the local search turns
    ls_share = (LS_SHARE_CLIQUES if cliques else LS_SHARE) * (time_limit if time_limit is not None else 20.0)

    def local_search_turn(slice_s):
        nonlocal kcover, ls_steps, ls_rate, ls_share, ls_time, tv_steps, tv_seed, tv_rate
        # the exact searches' bound tells how far the best cover can still drop
        target = max(root_lb() - decided, 0)
        if bound is not None:
            target = max(target, bound - 1 - decided)
        best_k = bnr.size - decided if bnr.found else len(kcover)
        if best_k <= target or ls_share <= 0:
            return
        t = clock()
        budget = min(slice_s, ls_share)
        if deadline is not None:
            budget = min(budget, deadline - t)
        if tv_cls is not None and best_k > nk + decided - cover_lb:
            # part of the turn looks for an independent set meeting the clique-cover bound
            tv_budget = budget * (TV_SHARE_CLIQUES if cliques else 0.5)
            kc, tv_steps, tv_seed, tv_rate = timed_transversal(kp, ki, tv_cls, tv_budget, clock, tv_steps, tv_seed,
                                                               tv_rate)
            if kc is not None:
                ls_share -= clock() - t
                ls_time += clock() - t
                kcover = kc
                bnr.offer_cover(bnr.lift(kcover))
                return
            budget -= clock() - t
        # the same NuMVC search goes on (weights kept): it may find covers the exact
        # searches know already, only a smaller one is news
        ls_steps, ls_rate = timed_run(ls, budget, clock, target=target, steps=ls_steps, rate=ls_rate)
        ls_share -= clock() - t
        ls_time += clock() - t
        if ls.best_size < len(kcover):
            kcover = ls.cover()
            bnr.offer_cover(bnr.lift(kcover))
            if mis is not None and bound is None:
                mis.raise_bound(np.setdiff1d(np.arange(nk), kcover))

    def proved_by_bound():
        # the root's lower bound meets the best cover (e.g. one found by the local search
        # after the search had left the root, whose children's bounds are weaker)
        lb = root_lb()
        if lb < 0:
            return False
        if bound is None:
            return bnr.found and bnr.size <= lb
        return lb >= bound or (bnr.found and bnr.size < bound)

    slice_s = FIRST_SLICE
    weak = mis is not None and nk >= WEAK_REDUCTION * n
    bnr_slice = ROOT_SLICE if weak else slice_s
    mis_weight = MIS_WEIGHT if weak else 1.0
    # when the reductions do not bite, branch-and-reduce and the local search keep a small
    # share (the clique-style search finds the large sets too)
    bnr_weight = ls_weight = WEAK_BNR_WEIGHT if weak else 1.0
    if cliques:
        bnr_weight, mis_weight, ls_weight = EXACT_WEIGHT_CLIQUES, EXACT_WEIGHT_CLIQUES, LS_WEIGHT_CLIQUES
    # on a dense kernel the clique search opens each round and gets most of the time
    mis_first = dense and not cliques
    if mis_first:
        bnr_weight, mis_weight = EXACT_WEIGHT_CLIQUES, MIS_WEIGHT

    def mis_turn():
        # one slice of the clique-style search: "solved", "deadline" or None
        share_to_mis()
        end = clock() + mis_weight * slice_s
        if deadline is not None:
            end = min(end, deadline)
        done = mis.solve(deadline=end, clock=clock)
        share_from_mis()
        if done or (bound is not None and mis.improved) or proved_by_bound():
            return "solved"
        report()
        if deadline is not None and clock() >= deadline:
            return "deadline"
        return None

    solved_by = None
    while True:
        if mis_first:
            turn = mis_turn()
            if turn == "solved":
                solved_by = "clique_branch_and_bound"
            if turn is not None:
                break
        # branch-and-reduce turn
        end = clock() + bnr_slice
        if deadline is not None:
            end = min(end, deadline)
        if bnr.solve(deadline=end, clock=clock, progress=lambda s: report()):
            solved_by = "branch_and_reduce"
            break
        if deadline is not None and clock() >= deadline:
            break
        if proved_by_bound():
            solved_by = "lower_bound"
            break
        local_search_turn(ls_weight * slice_s)
        if proved_by_bound():
            solved_by = "local_search"
            break
        if mis is not None and not mis_first:
            turn = mis_turn()
            if turn == "solved":
                solved_by = "clique_branch_and_bound"
            if turn is not None:
                break
        slice_s *= 2
        bnr_slice = bnr_weight * slice_s
    if solved_by is None and proved_by_bound():
        # the last turn before the deadline found a cover meeting the root's bound
        solved_by = "lower_bound"
    decided_run = solved_by is not None
    cover = bnr.cover() if bnr.found else None
    if cover is None:  # decision version: nothing below the bound; report the local search cover
        cover = bnr.lift(kcover)
    size = len(cover)
    if bound is None:
        lb = size if decided_run else max(root_lb(), decided)
    else:
        lb = bound if (decided_run and size >= bound) else max(root_lb(), decided, 0)
    nodes = bnr.nodes + (mis.nodes if mis is not None else 0)
    stats = bnr.stats()
    stats.update(local_search_steps=ls.steps, local_search_seconds=ls_time, clique_structured=bool(cliques),
                 dense_kernel=bool(dense), gpu_launches=gpu_launches + (mis.gpu_launches if dense else 0))
    return ExactResult(cover, size, decided_run, min(lb, size) if bound is None else lb, nk, nodes,
                       solved_by or "time_limit", stats)


@functools.cache
def compile_once(device="cpu"):
    """Run :func:`warm_up` the first time it is called in a process (per device), and do
    nothing after: time-limited callers call it before their clock starts."""
    warm_up(device)


def _random_csr(n, p, seed):
    """CSR of a G(n, p) random graph (sorted rows, int64)."""
    rng = np.random.default_rng(seed)
    iu, ju = np.triu_indices(n, 1)
    keep = rng.random(len(iu)) < p
    adj = np.zeros((n, n), bool)
    adj[iu[keep], ju[keep]] = True
    adj |= adj.T
    indptr = np.concatenate([[0], np.cumsum(adj.sum(1))]).astype(np.int64)
    return indptr, np.nonzero(adj)[1].astype(np.int64)


def warm_up(device="cpu"):
    """Compile (or load from the cache) every search of the pipeline on small random
    graphs (a sparse one whose kernel is not empty, dense ones), so that no later timing
    includes compilation; ``device="gpu"`` also compiles and launches the GPU searches
    once."""
    n = 48
    indptr, indices = _random_csr(n, 0.12, 1)
    BranchAndReduce(indptr, indices).solve()
    MisBranchAndBound(indptr, indices).solve()
    # sparse, with a kernel: the pipeline's path after the reductions
    sp, si = _random_csr(120, 0.08, 1)
    solve(sp, si, 5.0)
    solve(sp, si, 5.0, bound=60)
    solve(indptr, indices, 5.0)
    solve(indptr, indices, 5.0, bound=n // 2)
    # dense, no vertex of degree below three: settled before the reductions
    fp, fi = _random_csr(40, 0.5, 1)
    solve(fp, fi, 5.0)
    solve(fp, fi, 5.0, bound=35)
    solve(fp, fi, 5.0, bound=20)
    # the small graphs are solved before some phases run: call them directly
    cover = local_search_cover(indptr, indices, steps=1000)
    init = np.zeros(n, dtype=bool)
    init[cover] = True
    local_search_cover(indptr, indices, steps=1000, seed=1, init=init)
    transversal_search(indptr, indices, root_clique_cover(indptr, indices, n)[0], steps=1000)
    ComplementCliqueSearch(indptr, indices).solve(node_cap=100)
    # a clique search long enough for its trip to Python every 1,024 nodes
    dp, di = _random_csr(100, 0.1, 1)
    ComplementCliqueSearch(dp, di).solve()
    if device == "gpu":
        from kernels.cliques.maxclique_gpu import max_clique_gpu

        from .paper import search_gpu

        search_gpu(indptr, indices, np.diff(indptr).astype(np.int32), 0, n, method="hybrid")
        # the route's own paths: a small sparse input (the Hybrid try on the whole graph)
        solve(sp, si, 5.0, device="gpu")
        solve(sp, si, 5.0, bound=60, device="gpu")
        ComplementCliqueSearch(indptr, indices, device="gpu").solve()
        cp, ci = complement_csr(indptr, indices)
        max_clique_gpu(cp, ci)
