"""The exact vertex cover engine (kernels.vertex_cover): every reduction, bound and search
against brute force on random small graphs."""
from __future__ import annotations

import time

import numpy as np
import pytest

from kernels.vertex_cover import BranchAndReduce, solve
from kernels.vertex_cover.dense import DENSE, ComplementCliqueSearch, complement_csr, edge_density
from kernels.vertex_cover.local_search import NuMVC, greedy_cover, local_search_cover
from kernels.vertex_cover.maxsat import MaxsatWork, cover_and_absorb_t
from kernels.vertex_cover.mis_bnb import MisBranchAndBound, root_clique_cover
from kernels.vertex_cover.transversal import transversal_search
from kernels.vertex_cover.reductions import (R_ALL, R_DEG, R_DESK, R_EXHAUSTIVE, R_FOLD, R_FUNNEL, R_LP, R_PACKING,
                                             R_TWIN, R_UNCONFINED)


# ------------------------------------------------------------------ helpers
def csr(n, edges):
    adj = [set() for _ in range(n)]
    for u, v in edges:
        if u != v:
            adj[u].add(v)
            adj[v].add(u)
    indptr = np.zeros(n + 1, np.int64)
    for v in range(n):
        indptr[v + 1] = indptr[v] + len(adj[v])
    indices = np.array([u for v in range(n) for u in sorted(adj[v])], np.int64)
    return indptr, indices


def brute_mis(n, edges):
    """Maximum independent set size by a bitmask branch and bound (n <= 24)."""
    adj = [0] * n
    for u, v in edges:
        adj[u] |= 1 << v
        adj[v] |= 1 << u
    best = 0

    def rec(cand, size):
        nonlocal best
        if cand == 0:
            best = max(best, size)
            return
        if size + bin(cand).count("1") <= best:
            return
        v = (cand & -cand).bit_length() - 1
        rec(cand & ~(1 << v) & ~adj[v], size + 1)
        rec(cand & ~(1 << v), size)

    rec((1 << n) - 1, 0)
    return best


def is_cover(edges, cover):
    c = set(int(v) for v in cover)
    return all(u in c or v in c for u, v in edges)


def random_graphs(count, seed, nmax=18):
    """Graphs of every kind the rules look for: sparse (degrees 2-4, folds, desks, twins),
    cycles with chords, medium and dense."""
    rng = np.random.default_rng(seed)
    out = []
    for t in range(count):
        n = int(rng.integers(2, nmax + 1))
        kind = t % 5
        if kind == 0:
            p = rng.uniform(0.05, 0.6)
            edges = [(u, v) for u in range(n) for v in range(u + 1, n) if rng.random() < p]
        elif kind == 1:
            edges = set()
            for _ in range(int(n * rng.uniform(0.8, 2.0))):
                u, v = (int(a) for a in rng.integers(0, n, 2))
                if u != v:
                    edges.add((min(u, v), max(u, v)))
            edges = sorted(edges)
        elif kind == 2:
            edges = {(min(v, (v + 1) % n), max(v, (v + 1) % n)) for v in range(n) if n > 2}
            for _ in range(int(rng.integers(0, 4))):
                u, v = (int(a) for a in rng.integers(0, n, 2))
                if u != v:
                    edges.add((min(u, v), max(u, v)))
            edges = sorted(edges)
        elif kind == 3:  # 3-regular-ish: twins and desks
            edges = set()
            for v in range(n):
                for _ in range(2):
                    u = int(rng.integers(0, n))
                    if u != v:
                        edges.add((min(u, v), max(u, v)))
            edges = sorted(edges)
        else:
            p = rng.uniform(0.5, 0.95)
            edges = [(u, v) for u in range(n) for v in range(u + 1, n) if rng.random() < p]
        out.append((n, edges))
    return out


GRAPHS = random_graphs(160, 7)
OPT = [n - brute_mis(n, e) for n, e in GRAPHS]


def _medium(count, seed):
    """Random regular graphs of 20-30 vertices and degree 3-6: the reductions leave a
    kernel, so the search (and its bounds and in-tree reductions) runs."""
    import networkx as nx

    rng = np.random.default_rng(seed)
    out = []
    for t in range(count):
        d = 3 + t % 4
        n = int(rng.integers(20, 31))
        if n * d % 2:
            n += 1
        g = nx.random_regular_graph(d, n, seed=int(rng.integers(1 << 30)))
        out.append((n, sorted((min(u, v), max(u, v)) for u, v in g.edges())))
    return out


MEDIUM = _medium(40, 8)
MEDIUM_OPT = [n - brute_mis(n, e) for n, e in MEDIUM]

RULE_SETS = {
    "all": R_ALL,
    "all-exhaustive": R_ALL | R_EXHAUSTIVE,
    "none": 0,
    "degree": R_DEG,
    "fold": R_DEG | R_FOLD,
    "unconfined": R_DEG | R_UNCONFINED,
    "lp": R_LP,
    "lp-packing": R_DEG | R_LP | R_PACKING,
    "twin": R_DEG | R_FOLD | R_TWIN,
    "funnel": R_DEG | R_FUNNEL,
    "desk": R_DEG | R_DESK,
}
#: the counter each rule set must move at least once over the batch (else the test
#: would not exercise the rule it claims to check)
FIRES = {"fold": ("fold2",), "unconfined": ("unconfined",), "lp": ("lp_fixed",),
         "lp-packing": ("packing_fixed", "packing_pruned"), "twin": ("twin",), "funnel": ("funnel", "simplicial"),
         "desk": ("desk",), "degree": ("degree01",), "all": ("bound_pruned", "maxsat_pruned")}


# ------------------------------------------------------------------ branch-and-reduce
@pytest.mark.parametrize("name", list(RULE_SETS))
def test_branch_and_reduce_equals_brute_force(name):
    """Each rule alone (with or without the degree rules) and all together, applied at
    the root and inside the search: the cover is valid and minimum."""
    rules = RULE_SETS[name]
    fired = 0
    for (n, edges), opt in zip(GRAPHS + MEDIUM, OPT + MEDIUM_OPT):
        indptr, indices = csr(n, edges)
        for gap in (-1, 1 << 20):  # without and with the MaxSAT bound
            s = BranchAndReduce(indptr, indices, rules=rules, maxsat_gap=gap)
            assert s.solve()
            c = s.cover()
            assert s.size == opt == len(c), (name, n, edges)
            assert is_cover(edges, c)
            if name in FIRES:
                st = s.stats()
                fired += sum(st[k] for k in FIRES[name])
    if name in FIRES:
        assert fired > 0, f"rule set {name} never applied {FIRES[name]}"


def test_kernel_and_lift_are_optimal():
    """The reduced instance plus the lifted cover: a minimum cover of the kernel lifts to
    a minimum cover of the graph (every rule, at the root)."""
    lifted = 0
    for (n, edges), opt in zip(GRAPHS + MEDIUM, OPT + MEDIUM_OPT):
        indptr, indices = csr(n, edges)
        s = BranchAndReduce(indptr, indices)
        s.reduce_root()
        kp, ki, ids = s.kernel()
        nk = len(ids)
        kedges = [(v, int(u)) for v in range(nk) for u in ki[kp[v]:kp[v + 1]] if v < u]
        kopt_mis = brute_mis(nk, kedges) if nk <= 24 else None
        if kopt_mis is None:
            continue
        # a minimum cover of the kernel from the brute force's complement
        b = MisBranchAndBound(kp, ki)
        assert b.solve() and b.size == kopt_mis
        kcover = np.setdiff1d(np.arange(nk), b.independent_set())
        full = s.lift(kcover)
        assert len(full) == opt and is_cover(edges, full), (n, edges)
        assert s.decided + nk - kopt_mis == opt
        lifted += nk > 0
    assert lifted > 10


def test_time_budget_and_resume():
    """Chunks of work: stopping after a small budget and resuming gives the optimum."""
    rng = np.random.default_rng(3)
    n = 60
    edges = [(u, v) for u in range(n) for v in range(u + 1, n) if rng.random() < 0.12]
    indptr, indices = csr(n, edges)
    full = BranchAndReduce(indptr, indices)
    full.solve()
    s = BranchAndReduce(indptr, indices)
    steps = 0
    while not s.step(200):
        steps += 1
    assert steps > 1 and s.size == full.size and is_cover(edges, s.cover())


def test_decision_mode_stops_at_first_cover():
    for (n, edges), opt in zip(GRAPHS[:60], OPT[:60]):
        indptr, indices = csr(n, edges)
        for bound, expect in ((opt, False), (opt + 1, True)):
            s = BranchAndReduce(indptr, indices, bound=bound, stop_at_first=True)
            assert s.solve()
            assert s.found == expect
            if expect:
                assert s.size < bound and is_cover(edges, s.cover())


# ------------------------------------------------------------------ clique-style branch and bound
@pytest.mark.parametrize("maxsat", [True, False])
def test_mis_branch_and_bound_equals_brute_force(maxsat):
    for (n, edges), opt in zip(GRAPHS + MEDIUM, OPT + MEDIUM_OPT):
        indptr, indices = csr(n, edges)
        b = MisBranchAndBound(indptr, indices, maxsat=maxsat)
        assert b.solve()
        iset = set(b.independent_set().tolist())
        assert b.size == n - opt == len(iset)
        assert not any(u in iset and v in iset for u, v in edges)


# ------------------------------------------------------------------ dense kernels: cliques of the complement
def test_complement_csr_is_the_complement():
    for n, edges in GRAPHS[:40]:
        indptr, indices = csr(n, edges)
        cp, ci = complement_csr(indptr, indices)
        present = set(edges)
        want = [(u, v) for u in range(n) for v in range(u + 1, n) if (u, v) not in present]
        assert csr(n, want)[0].tolist() == cp.tolist() and csr(n, want)[1].tolist() == ci.tolist()


def test_complement_clique_search_equals_brute_force():
    for (n, edges), opt in zip(GRAPHS + MEDIUM, OPT + MEDIUM_OPT):
        indptr, indices = csr(n, edges)
        s = ComplementCliqueSearch(indptr, indices)
        assert s.solve() and s.size == n - opt
        iset = set(s.independent_set().tolist())
        assert len(iset) == n - opt and not any(u in iset and v in iset for u, v in edges)
        # decision version: a set larger than the maximum does not exist, one below it does
        assert ComplementCliqueSearch(indptr, indices, larger_than=n - opt).solve()
        assert not ComplementCliqueSearch(indptr, indices, larger_than=n - opt).improved
        if n - opt > 1:
            below = ComplementCliqueSearch(indptr, indices, larger_than=n - opt - 1)
            assert below.solve() and below.improved and below.size == n - opt
        # a known set as the start: only larger ones are news
        start = ComplementCliqueSearch(indptr, indices, initial=s.independent_set())
        assert start.solve() and not start.improved and start.size == n - opt


class _FakeGpuRun:
    """Stands in for kernels.cliques.maxclique_gpu.GpuCliqueRun in the race (CPU tests):
    finishes after ``polls`` looks with ``answer``, or never until stopped."""

    polls, answer, stopped = 0, None, []

    def __init__(self, cp, ci, lower_clique=None, lower=0, deadline=0.0, cancellable=False):
        self.lower_clique = np.zeros(0, np.int64) if lower_clique is None else lower_clique
        self.launched, self.left = True, type(self).polls

    def done(self):
        self.left -= 1
        return self.answer is not None and self.left < 0

    def stop(self):
        type(self).stopped.append(True)

    def result(self):
        if self.answer is not None and self.left < 0:
            return self.answer, True, 10
        return self.lower_clique, False, 5


def test_race_takes_the_first_to_finish(monkeypatch):
    """device="gpu": the GPU run and the CPU search race; a GPU that finishes first ends
    the search with its set, a CPU that finishes first stops the GPU."""
    import kernels.cliques.maxclique_gpu as mg

    monkeypatch.setattr(mg, "GpuCliqueRun", _FakeGpuRun)
    rng = np.random.default_rng(5)
    n = 90
    edges = [(u, v) for u in range(n) for v in range(u + 1, n) if rng.random() < 0.3]
    indptr, indices = csr(n, edges)
    ref = ComplementCliqueSearch(indptr, indices)
    assert ref.solve()
    # the GPU first: its set is the answer
    monkeypatch.setattr(_FakeGpuRun, "answer", ref.independent_set())
    monkeypatch.setattr(_FakeGpuRun, "polls", 0)
    g = ComplementCliqueSearch(indptr, indices, device="gpu")
    assert g.solve() and g.size == ref.size and g.gpu_launches == 1
    # the CPU first: the GPU is told to stop, the CPU's set is the answer
    monkeypatch.setattr(_FakeGpuRun, "answer", None)
    _FakeGpuRun.stopped = []
    c = ComplementCliqueSearch(indptr, indices, device="gpu")
    assert c.solve() and c.size == ref.size and not c.gpu_won
    assert c.gpu_launches == 1 or c.finished and c.gpu_launches == 0
    iset = set(c.independent_set().tolist())
    assert not any(u in iset and v in iset for u, v in edges)
    assert _FakeGpuRun.stopped or c.gpu_launches == 0


def test_pipeline_hands_dense_kernels_to_the_clique_search():
    """Dense random graphs (the reductions leave them whole): the clique search on the
    complement proves them, also in the decision version, and agrees with the list-based
    search."""
    rng = np.random.default_rng(3)
    for n, p in ((60, 0.5), (90, 0.3), (120, 0.15)):
        edges = [(u, v) for u in range(n) for v in range(u + 1, n) if rng.random() < p]
        indptr, indices = csr(n, edges)
        assert edge_density(indptr) >= DENSE
        ref = MisBranchAndBound(indptr, indices)
        assert ref.solve()
        opt = n - ref.size
        r = solve(indptr, indices)
        assert r.optimal and r.size == opt and is_cover(edges, r.cover)
        assert r.solved_by == "clique_branch_and_bound" and r.kernel_vertices > 0
        no = solve(indptr, indices, bound=opt)
        assert no.optimal and no.size >= opt and no.lower_bound == opt
        yes = solve(indptr, indices, bound=opt + 1)
        assert yes.optimal and yes.size == opt and is_cover(edges, yes.cover)


def test_maxsat_bound_is_valid():
    """cover_and_absorb never claims a bound below the true independence number, and its
    absorption proves more than the clique cover alone."""
    absorbed = 0
    for (n, edges), opt in zip(GRAPHS + MEDIUM, OPT + MEDIUM_OPT):
        indptr, indices = csr(n, edges)
        alpha = n - opt
        work = MaxsatWork(n)
        P = np.arange(n, dtype=np.int64)
        for K in range(0, alpha + 2):
            for maxsat in (False, True):
                B = np.zeros(max(n, 1), np.int64)
                left = cover_and_absorb_t(indptr, indices, P, n, K, 1 + 2 * K + maxsat, work.arrays, B, maxsat)
                if left == 0:  # "no independent set of more than K vertices"
                    assert alpha <= K, (n, edges, K)
                if maxsat and K == alpha:
                    B2 = np.zeros(max(n, 1), np.int64)
                    plain = cover_and_absorb_t(indptr, indices, P, n, K, 10**6 + K, work.arrays, B2, False)
                    absorbed += plain > left
            # fresh stamps per call: reuse the arrays across calls of one graph only
    assert absorbed > 0


def test_root_clique_cover_is_a_cover_by_cliques():
    """Every class is a clique, every vertex in one class, and the count bounds the
    independence number from above (the pipeline's root lower bound)."""
    tight = 0
    for (n, edges), opt in zip(GRAPHS + MEDIUM, OPT + MEDIUM_OPT):
        indptr, indices = csr(n, edges)
        cls, k = root_clique_cover(indptr, indices, n)
        assert sorted(set(cls.tolist())) == list(range(k))
        adj = {(u, v) for u, v in edges} | {(v, u) for u, v in edges}
        for c in range(k):
            mem = np.flatnonzero(cls == c)
            assert all((a, b) in adj for a in mem for b in mem if a != b)
        assert k >= n - opt
        tight += k == n - opt
    assert tight > len(GRAPHS) // 4


def planted(groups, size, p, seed):
    """Model-RB-like graph: ``groups`` cliques of ``size`` vertices, random edges between
    cliques with probability ``p``, except that a hidden transversal (one vertex per
    clique) stays independent. Returns (n, edges, hidden)."""
    rng = np.random.default_rng(seed)
    n = groups * size
    hidden = {g * size + int(rng.integers(size)) for g in range(groups)}
    edges = []
    for u in range(n):
        for v in range(u + 1, n):
            if u // size == v // size or (rng.random() < p and not (u in hidden and v in hidden)):
                edges.append((u, v))
    return n, edges, hidden


def test_transversal_search_finds_planted_sets_and_only_true_ones():
    for seed in range(12):
        n, edges, _ = planted(6 + seed % 5, 3 + seed % 4, 0.5, seed)
        indptr, indices = csr(n, edges)
        size = n // (6 + seed % 5)
        cls = np.arange(n) // size
        s = transversal_search(indptr, indices, cls, steps=200_000, seed=seed)
        assert s is not None and len(s) == cls.max() + 1
        assert len(set(cls[s].tolist())) == len(s)
        found = set(s.tolist())
        assert not any(u in found and v in found for u, v in edges)
    # no transversal: two cliques with every edge between them
    # pair joined as well (K_6 split in two triangles)
    n = 6
    edges = [(u, v) for u in range(n) for v in range(u + 1, n)]
    indptr, indices = csr(n, edges)
    assert transversal_search(indptr, indices, np.array([0, 0, 0, 1, 1, 1]), steps=5000) is None
    # brute force on small random graphs with their root clique cover: found only when
    # the independence number meets the number of cliques, and then (nearly) always
    tight = hits = 0
    for (n, edges), opt in zip(GRAPHS, OPT):
        indptr, indices = csr(n, edges)
        cls, k = root_clique_cover(indptr, indices, n)
        s = transversal_search(indptr, indices, cls, steps=20_000, seed=3)
        tight += n - opt == k
        if s is not None:
            hits += 1
            assert len(s) == k == n - opt
            found = set(s.tolist())
            assert not any(u in found and v in found for u, v in edges)
    assert hits >= 0.9 * tight > 0


def test_pipeline_proves_planted_partitions_by_the_clique_cover():
    """A graph of cliques with a hidden independent transversal: the clique cover found at
    the root is tight, the pipeline proves the optimum, and the clique-style search knowing
    the bound stops at once."""
    n, edges, hidden = planted(16, 8, 0.45, 1)
    indptr, indices = csr(n, edges)
    r = solve(indptr, indices, time_limit=30.0)
    assert r.optimal and r.size == n - 16 == r.lower_bound and is_cover(edges, r.cover)
    assert root_clique_cover(indptr, indices, n)[1] == 16
    # the clique-style search knows the bound too: a set that large ends it
    b = MisBranchAndBound(indptr, indices, initial=sorted(hidden))
    assert b.upper == 16 and b.solve() and b.nodes == 0


# ------------------------------------------------------------------ local search and pipeline
def test_local_search_gives_covers():
    for (n, edges), opt in zip(GRAPHS, OPT):
        indptr, indices = csr(n, edges)
        g = greedy_cover(indptr, indices)
        assert is_cover(edges, np.flatnonzero(g))
        c = local_search_cover(indptr, indices, steps=2000, seed=1)
        assert is_cover(edges, c) and len(c) >= opt
        # rows in any order (the edge ids are looked up by binary search in sorted rows)
        rev = np.concatenate([indices[indptr[v]:indptr[v + 1]][::-1] for v in range(n)]).astype(np.int64)
        c = local_search_cover(indptr, rev, steps=2000, seed=1)
        assert is_cover(edges, c) and len(c) >= opt


def test_numvc_resumes_with_its_state():
    """NuMVC run in slices is the same search as one run (weights, ages, tabu vertex and
    its own random generator are kept between calls); a run stops at the target; a
    start that is no cover is completed to one (NuMVC never grows its cover)."""
    for (n, edges), opt in list(zip(GRAPHS, OPT))[:12]:
        indptr, indices = csr(n, edges)
        whole = NuMVC(indptr, indices, seed=5)
        whole.run(1500)
        sliced = NuMVC(indptr, indices, seed=5)
        for _ in range(3):
            sliced.run(500)
        assert sliced.steps == whole.steps == 1500
        assert np.array_equal(sliced.cover(), whole.cover())
        assert is_cover(edges, sliced.cover()) and sliced.best_size == len(sliced.cover()) >= opt
        t = NuMVC(indptr, indices, seed=1)
        assert t.run(100_000, target=opt) == opt and t.steps < 100_000 and is_cover(edges, t.cover())
    for (n, edges), opt in list(zip(GRAPHS, OPT))[:12]:
        indptr, indices = csr(n, edges)
        ls = NuMVC(indptr, indices, init=np.zeros(n, bool), seed=3)
        assert is_cover(edges, ls.cover()) and ls.best_size == len(ls.cover())
        assert ls.run(20_000, target=opt) == opt and is_cover(edges, ls.cover())


def test_numvc_samples_removals_on_large_graphs():
    """Above ``EXACT_SELECTION`` vertices the removal is the best of sampled cover
    vertices: from the whole vertex set of a perfect matching to one end per edge."""
    from kernels.vertex_cover.local_search import EXACT_SELECTION

    n = 2 * (EXACT_SELECTION // 2 + 1)
    edges = [(2 * i, 2 * i + 1) for i in range(n // 2)]
    indptr, indices = csr(n, edges)
    ls = NuMVC(indptr, indices, init=np.ones(n, bool), seed=2)
    assert not ls.exact and ls.best_size == n
    assert ls.run(50 * n, target=n // 2) == n // 2 and is_cover(edges, ls.cover())


def test_pipeline_gives_clique_structured_kernels_to_the_local_search():
    """A kernel covered by large cliques with an independent set close to their number
    (a hidden partition, as in model RB graphs) is left mostly to the local search, and
    the time limit still holds; dense graphs of large cliques with a loose bound (as the
    complements of DIMACS graphs) and kernels of small cliques are not clique-structured
    (the clique-style search proves those). The graphs are dense, so the pipeline first
    tries a short clique search on the complement; ``use_mis=False`` leaves that out."""
    from kernels.vertex_cover.exact import compile_once

    compile_once()
    # an easy planted partition: the first local search meets the bound
    n, edges, hidden = planted(30, 12, 0.5, 3)
    indptr, indices = csr(n, edges)
    r = solve(indptr, indices, time_limit=5.0, use_mis=False)
    assert r.stats["clique_structured"] and r.optimal and r.size == n - 30 == r.lower_bound
    r = solve(indptr, indices, time_limit=5.0)
    assert r.optimal and r.size == n - 30 == r.lower_bound
    # one edge inside the hidden set: almost surely no transversal is left, the local
    # search finds 23 of the 24 at once and the exact searches cannot close the gap
    n, edges, hidden = planted(24, 10, 0.5, 5)
    h = sorted(hidden)
    edges.append((h[0], h[1]))
    indptr, indices = csr(n, edges)
    t = time.process_time()
    r = solve(indptr, indices, time_limit=1.0, clock=time.process_time, use_mis=False)
    elapsed = time.process_time() - t
    assert r.stats["clique_structured"] and is_cover(edges, r.cover) and elapsed < 1.6
    # a cover that meets the root's bound is optimal, whenever it was found
    assert r.optimal == (r.size == r.lower_bound)
    if not r.optimal:
        assert r.stats["local_search_seconds"] >= 0.6 * elapsed
    rng = np.random.default_rng(1)
    groups, size = 20, 10
    n = groups * size
    edges = [(u, v) for u in range(n) for v in range(u + 1, n) if u // size == v // size or rng.random() < 0.4]
    indptr, indices = csr(n, edges)
    assert root_clique_cover(indptr, indices, n)[1] <= n // 8
    assert not solve(indptr, indices, time_limit=0.3, use_mis=False).stats["clique_structured"]
    n, edges = MEDIUM[0]
    indptr, indices = csr(n, edges)
    assert not solve(indptr, indices, time_limit=5.0).stats.get("clique_structured", False)


def test_pipeline_equals_brute_force():
    for (n, edges), opt in zip(GRAPHS + MEDIUM, OPT + MEDIUM_OPT):
        indptr, indices = csr(n, edges)
        r = solve(indptr, indices)
        assert r.optimal and r.size == opt == r.lower_bound and is_cover(edges, r.cover)
        if opt > 0:
            no = solve(indptr, indices, bound=opt)
            assert no.optimal and no.size >= opt and no.lower_bound == opt
        yes = solve(indptr, indices, bound=opt + 1)
        assert yes.optimal and yes.size == opt and is_cover(edges, yes.cover)


def test_pipeline_uses_both_searches():
    """A random graph where the reductions do little goes to the clique-style search,
    and the result is still minimum."""
    rng = np.random.default_rng(11)
    n = 70
    edges = [(u, v) for u in range(n) for v in range(u + 1, n) if rng.random() < 0.09]
    indptr, indices = csr(n, edges)
    r = solve(indptr, indices)
    s = BranchAndReduce(indptr, indices)
    assert s.solve()
    assert r.optimal and r.size == s.size and is_cover(edges, r.cover)
    assert r.solved_by in ("branch_and_reduce", "clique_branch_and_bound")


def test_progress_callback_runs_between_chunks():
    """The pipeline returns to Python between chunks: an exception raised by the progress
    callback (as KeyboardInterrupt would be) stops the run."""
    rng = np.random.default_rng(5)
    n = 160
    edges = [(u, v) for u in range(n) for v in range(u + 1, n) if rng.random() < 0.06]
    indptr, indices = csr(n, edges)
    calls = []

    def cb(info):
        calls.append(info)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        solve(indptr, indices, progress=cb)
    assert calls and {"best", "lower_bound", "nodes", "elapsed"} <= set(calls[0])
