"""Exact treewidth by breadth-first search over elimination-ordering prefixes (van der Zanden and Bodlaender).

A *state* is a set ``S`` of eliminated vertices, stored as a bitset of ``W = ceil(n/64)``
``uint64`` words. For a target width ``k``, level ``i`` of the search holds every set of
``i`` vertices that can be eliminated in some order without ever eliminating a vertex of
degree more than ``k``. A state is expanded by every vertex ``v`` not in ``S`` (and not in
the excluded clique) whose degree after eliminating ``S`` -- the number of vertices
outside ``S`` reachable from ``v`` through paths whose interior lies in ``S`` -- is at most
``k``. Duplicates are removed either exactly, with an open-addressing hash set over the
next level (``mode=EXACT``), or as in the paper with a Bloom filter (``mode=BLOOM``; false
positives may drop states, so a failed decision is then only probable).

Every new state records the index of its parent in the previous level and the vertex that
was added, so the elimination ordering of a successful search is read back by following
the parents from the last level.

CPU (Numba): one level is expanded in a resumable call; when the output buffer is full
the call returns the input index it stopped at and the caller grows the buffers (a
state that is expanded again only re-inserts duplicates). The degrees of all candidates
of a state are computed from the connected components of ``G[S]``: the neighbourhood of
``v`` after eliminating ``S`` is ``N(v) \\ S`` joined with the outside neighbourhoods of
the components of ``G[S]`` that touch ``v``.

GPU (``kernels/cuda/treewidth.cu``): one thread per input state with the same
component-based degree computation (the paper's Listing 1 search through ``S``, shared by
the candidates of the state), exact hash set with a per-slot claim/publish protocol or
Bloom filter with ``atomicOr``, the wavefront buffer sized from free device memory and
overflow counted and reported, never silently ignored.

Helpers: elimination width of an ordering, min-degree / min-fill upper bounds,
minor-min-width lower bound, local vertex connectivity (vertex-disjoint paths) and a
maximum clique, all on dense adjacency.

References
----------
T. C. van der Zanden and H. L. Bodlaender, "Computing treewidth on the GPU", Proc. IPEC
2017, LIPIcs 89, 29:1-29:13.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._bits import monotonic

__all__ = [
    "EXACT",
    "BLOOM",
    "to_bitsets",
    "elimination_width",
    "greedy_ordering",
    "minor_min_width",
    "degeneracy",
    "vertex_connectivity_matrix",
    "max_clique",
    "LevelSearchCPU",
    "search_gpu",
    "gpu_capacity",
]

EXACT = 0
BLOOM = 1

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLD = np.uint64(0x9E3779B97F4A7C15)


# --------------------------------------------------------------------------- bitsets
def to_bitsets(A: np.ndarray) -> np.ndarray:
    """Boolean rows ``(r, n)`` (e.g. a dense adjacency) to ``(r, W)`` uint64 bitsets, ``W = ceil(n / 64)``."""
    r, n = A.shape
    W = max(1, (n + 63) // 64)
    out = np.zeros((r, W), dtype=np.uint64)
    rows, cols = np.nonzero(A)
    np.bitwise_or.at(out, (rows, cols // 64), np.left_shift(np.uint64(1), (cols % 64).astype(np.uint64)))
    return out


@njit(cache=True, inline="always")
def _popcount(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(cache=True, inline="always")
def _ctz(x):
    # index of the lowest set bit of a non-zero word
    return _popcount((x & (~x + np.uint64(1))) - np.uint64(1))


@njit(cache=True, inline="always")
def _mix64(x):
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


@njit(cache=True, inline="always")
def _hash_words(buf, W):
    h = _GOLD
    for w in range(W):
        h = _mix64(h ^ (buf[w] + _GOLD * np.uint64(w + 1)))
    return h


# --------------------------------------------------------------------------- the level search
@njit(cache=True)
def _insert_exact(child, W, out, count, cap, table, tmask, h):
    """0: new (stored at out[count]), 1: duplicate, 2: output full."""
    slot = np.int64(h & np.uint64(tmask))
    while True:
        idx = table[slot]
        if idx < 0:
            if count >= cap:
                return 2
            table[slot] = count
            for w in range(W):
                out[count, w] = child[w]
            return 0
        same = True
        for w in range(W):
            if out[idx, w] != child[w]:
                same = False
                break
        if same:
            return 1
        slot = (slot + 1) & tmask


@njit(cache=True)
def _insert_bloom(child, W, out, count, cap, bloom, bmask, nhash, h):
    """Bloom-filter insert (double hashing): 0 new, 1 (probable) duplicate, 2 full."""
    h1 = h & np.uint64(0xFFFFFFFF)
    h2 = (h >> np.uint64(32)) | np.uint64(1)
    present = True
    for i in range(nhash):
        bit = (h1 + np.uint64(i) * h2) & bmask
        word = np.int64(bit >> np.uint64(6))
        m = np.uint64(1) << (bit & np.uint64(63))
        if (bloom[word] & m) == 0:
            present = False
    if present:
        return 1
    if count >= cap:
        return 2
    for i in range(nhash):
        bit = (h1 + np.uint64(i) * h2) & bmask
        word = np.int64(bit >> np.uint64(6))
        bloom[word] |= np.uint64(1) << (bit & np.uint64(63))
    for w in range(W):
        out[count, w] = child[w]
    return 0


@njit(cache=True)
def _almost_simplicial(R, v, W, tmp):
    """True when all but at most one vertex of ``R[v]`` (v's neighbourhood) form a clique."""
    first_bad = -1
    for q in range(W):
        y = R[v, q]
        while y:
            b = np.int64(_ctz(y))
            y &= y - np.uint64(1)
            u = q * 64 + b
            for r in range(W):
                tmp[r] = R[v, r] & ~R[u, r]
            tmp[u >> 6] &= ~(np.uint64(1) << np.uint64(u & 63))
            bad = False
            for r in range(W):
                if tmp[r]:
                    bad = True
            if bad:
                first_bad = u
                break
        if first_bad >= 0:
            break
    if first_bad < 0:
        return True  # simplicial
    # the special neighbour w is first_bad or its unique non-neighbour in R[v]
    miss = 0
    other = -1
    for r in range(W):
        c = _popcount(tmp[r])
        if c:
            miss += np.int64(c)
            other = r * 64 + np.int64(_ctz(tmp[r]))
    for t in range(2):
        if t == 0:
            w = first_bad
        else:
            if miss != 1:
                break
            w = other
        ok = True
        for q in range(W):
            y = R[v, q]
            while y and ok:
                b = np.int64(_ctz(y))
                y &= y - np.uint64(1)
                u = q * 64 + b
                if u == w:
                    continue
                for r in range(W):
                    tmp[r] = R[v, r] & ~R[u, r]
                tmp[u >> 6] &= ~(np.uint64(1) << np.uint64(u & 63))
                tmp[w >> 6] &= ~(np.uint64(1) << np.uint64(w & 63))
                for r in range(W):
                    if tmp[r]:
                        ok = False
            if not ok:
                break
        if ok:
            return True
    return False


@njit(cache=True, nogil=True)
def expand_level_cpu(adj, cand, k, states_in, start, n_in, out, counters, out_parent, out_vertex,
                     table, bloom, mode, nhash, rule):
    """Expand ``states_in[start:n_in]`` into ``out`` (resumable).

    ``counters[0]`` is the number of states in ``out``; ``counters[1]`` accumulates the
    number of states expanded and ``counters[2]`` the number of degree evaluations.
    With ``rule=1`` a state whose graph has a (almost) simplicial candidate of degree at
    most ``k`` gets that single child (safe: it never removes the last feasible path).
    Returns the input index to resume from (``n_in`` when the level is done).
    """
    n = adj.shape[0]
    W = adj.shape[1]
    cap = out.shape[0]
    tmask = np.int64(table.shape[0] - 1)
    bmask = np.uint64(bloom.shape[0] * 64 - 1)
    comp = np.empty(n, dtype=np.int64)
    nout = np.zeros((n + 1, W), dtype=np.uint64)
    seen = np.zeros(n + 1, dtype=np.int64)
    stamp = 0
    R = np.zeros((n, W), dtype=np.uint64)
    deg = np.zeros(n, dtype=np.int64)
    front = np.empty(W, dtype=np.uint64)
    cmask = np.empty(W, dtype=np.uint64)
    child = np.empty(W, dtype=np.uint64)
    tmp = np.empty(W, dtype=np.uint64)
    for s in range(start, n_in):
        S = states_in[s]
        # connected components of G[S] and their neighbourhoods outside S
        ncomp = 0
        for w in range(W):
            x = S[w]
            while x:
                b = np.int64(_ctz(x))
                x &= x - np.uint64(1)
                comp[w * 64 + b] = -1
        for w in range(W):
            x = S[w]
            while x:
                b = np.int64(_ctz(x))
                x &= x - np.uint64(1)
                u = w * 64 + b
                if comp[u] >= 0:
                    continue
                for q in range(W):
                    cmask[q] = np.uint64(0)
                    front[q] = np.uint64(0)
                    nout[ncomp, q] = np.uint64(0)
                cmask[u >> 6] |= np.uint64(1) << np.uint64(u & 63)
                front[u >> 6] |= np.uint64(1) << np.uint64(u & 63)
                while True:
                    z = -1
                    for q in range(W):
                        if front[q]:
                            bb = _ctz(front[q])
                            front[q] &= front[q] - np.uint64(1)
                            z = q * 64 + np.int64(bb)
                            break
                    if z < 0:
                        break
                    comp[z] = ncomp
                    for q in range(W):
                        a = adj[z, q]
                        nout[ncomp, q] |= a & ~S[q]
                        new = a & S[q] & ~cmask[q]
                        cmask[q] |= new
                        front[q] |= new
                ncomp += 1
        counters[1] += 1
        # neighbourhoods after eliminating S: of every remaining vertex (rule) or of candidates
        for w in range(W):
            if rule:
                x = ~S[w]
                if w == W - 1 and n % 64:
                    x &= (np.uint64(1) << np.uint64(n % 64)) - np.uint64(1)
            else:
                x = cand[w] & ~S[w]
            while x:
                b = np.int64(_ctz(x))
                x &= x - np.uint64(1)
                v = w * 64 + b
                stamp += 1
                for q in range(W):
                    R[v, q] = adj[v, q] & ~S[q]
                for q in range(W):
                    y = adj[v, q] & S[q]
                    while y:
                        bb = _ctz(y)
                        y &= y - np.uint64(1)
                        c = comp[q * 64 + np.int64(bb)]
                        if seen[c] != stamp:
                            seen[c] = stamp
                            for r in range(W):
                                R[v, r] |= nout[c, r]
                R[v, w] &= ~(np.uint64(1) << np.uint64(b))
                d = 0
                for q in range(W):
                    d += np.int64(_popcount(R[v, q]))
                deg[v] = d
                counters[2] += 1
        forced = -1
        if rule:
            for w in range(W):
                x = cand[w] & ~S[w]
                while x and forced < 0:
                    b = np.int64(_ctz(x))
                    x &= x - np.uint64(1)
                    v = w * 64 + b
                    if deg[v] <= k and _almost_simplicial(R, v, W, tmp):
                        forced = v
                if forced >= 0:
                    break
        for w in range(W):
            x = cand[w] & ~S[w]
            while x:
                b = np.int64(_ctz(x))
                x &= x - np.uint64(1)
                v = w * 64 + b
                if deg[v] > k or (forced >= 0 and v != forced):
                    continue
                for q in range(W):
                    child[q] = S[q]
                child[w] |= np.uint64(1) << np.uint64(b)
                h = _hash_words(child, W)
                if mode == 0:
                    r = _insert_exact(child, W, out, counters[0], cap, table, tmask, h)
                else:
                    r = _insert_bloom(child, W, out, counters[0], cap, bloom, bmask, nhash, h)
                if r == 2:
                    counters[1] -= 1
                    return s
                if r == 0:
                    out_parent[counters[0]] = s
                    out_vertex[counters[0]] = v
                    counters[0] += 1
    return n_in


@njit(cache=True)
def _rehash(out, count, table):
    W = out.shape[1]
    tmask = np.int64(table.shape[0] - 1)
    table[:] = -1
    for i in range(count):
        slot = np.int64(_hash_words(out[i], W) & np.uint64(tmask))
        while table[slot] >= 0:
            slot = (slot + 1) & tmask
        table[slot] = i


def _pow2_at_least(x: int) -> int:
    return 1 << max(4, int(x - 1).bit_length())


class LevelSearchCPU:
    """Decision procedure "treewidth <= k?" on the CPU (Numba), one level per step.

    Parameters
    ----------
    adj : (n, W) uint64
        Bitset adjacency of the graph (with any edges added for this ``k``).
    cand : (W,) uint64
        Bitset of the vertices that may be eliminated (everything but the excluded clique).
    k : int
        Target width.
    target : int
        Size of the eliminated set that proves width ``<= k`` (``n - k - 1``).
    mode : EXACT or BLOOM
    max_states : int
        Largest number of states held in one level; beyond it states are counted as
        dropped (``overflow``) and the decision can only succeed, never fail for sure.
    rule : bool
        Simplicial / almost-simplicial rule inside the search (not in the paper): a state
        with such a candidate of degree at most ``k`` is expanded by that vertex only.
    """

    CHUNK = 1 << 16

    def __init__(self, adj, cand, k, target, mode=EXACT, max_states=1 << 24, bloom_bits_per_state=32,
                 nhash=8, rule=True):
        self.adj = np.ascontiguousarray(adj, dtype=np.uint64)
        self.n, self.W = self.adj.shape
        self.cand = np.ascontiguousarray(cand, dtype=np.uint64)
        self.k = int(k)
        self.target = int(target)
        self.mode = int(mode)
        self.max_states = int(max_states)
        self.bloom_bits_per_state = int(bloom_bits_per_state)
        self.nhash = int(nhash)
        self.rule = 1 if rule else 0
        self.level = 0
        self.states = np.zeros((1, self.W), dtype=np.uint64)
        self.parents: list = []
        self.vertices: list = []
        self.level_sizes = [1]
        self.expanded = 0
        self.evaluations = 0
        self.overflow = False
        self.dropped = 0
        self.done = self.target <= 0
        self.found = self.target <= 0

    def step(self, deadline=None, clock=None) -> bool:
        """Expand one level; returns False when stopped by the deadline (state kept)."""
        n_in = self.states.shape[0]
        ncand = int(sum(bin(int(x)).count("1") for x in self.cand))
        guess = min(self.max_states, max(16, n_in * max(1, ncand - self.level)))
        cap = min(guess, max(1024, 2 * n_in))
        out = np.empty((cap, self.W), dtype=np.uint64)
        parent = np.empty(cap, dtype=np.int32)
        vert = np.empty(cap, dtype=np.int16 if self.n < 32768 else np.int32)
        counters = np.zeros(3, dtype=np.int64)
        if self.mode == EXACT:
            table = np.full(_pow2_at_least(2 * cap), -1, dtype=np.int64)
            bloom = np.zeros(1, dtype=np.uint64)
        else:
            table = np.zeros(1, dtype=np.int64)
            nbits = _pow2_at_least(self.bloom_bits_per_state * guess)
            bloom = np.zeros(max(1, nbits // 64), dtype=np.uint64)
        s = 0
        while s < n_in:
            end = min(n_in, s + self.CHUNK)
            s = expand_level_cpu(self.adj, self.cand, self.k, self.states, s, end, out, counters, parent, vert,
                                 table, bloom, self.mode, self.nhash, self.rule)
            if s < end:  # output full: grow, or report the overflow and truncate the level
                if cap >= self.max_states:
                    self.overflow = True
                    self.dropped += n_in - s
                    break
                cap = min(self.max_states, 2 * cap)
                out = _grow(out, cap)
                parent = _grow(parent, cap)
                vert = _grow(vert, cap)
                if self.mode == EXACT:
                    table = np.empty(_pow2_at_least(2 * cap), dtype=np.int64)
                    _rehash(out, int(counters[0]), table)
            if deadline is not None and s < n_in and clock() > deadline:
                return False
        count = int(counters[0])
        self.expanded += int(counters[1])
        self.evaluations += int(counters[2])
        self.states = out[:count]
        self.parents.append(parent[:count])
        self.vertices.append(vert[:count])
        self.level += 1
        self.level_sizes.append(count)
        if count == 0:
            self.done = True
        elif self.level >= self.target:
            self.done = True
            self.found = True
        return True

    def prefix(self) -> np.ndarray:
        """Eliminated vertices, in order, of the first state of the last level."""
        if not self.found or self.target <= 0:
            return np.zeros(0, dtype=np.int64)
        order = []
        idx = 0
        for lev in range(len(self.parents) - 1, -1, -1):
            order.append(int(self.vertices[lev][idx]))
            idx = int(self.parents[lev][idx])
        return np.asarray(order[::-1], dtype=np.int64)


def _grow(a, cap):
    b = np.empty((cap,) + a.shape[1:], dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


# --------------------------------------------------------------------------- dense helpers
@njit(cache=True)
def elimination_width(A, order):
    """Largest degree at elimination of ``order`` on the dense adjacency ``A`` (copied)."""
    n = A.shape[0]
    B = A.copy()
    alive = np.ones(n, dtype=np.bool_)
    nb = np.empty(n, dtype=np.int64)
    width = -1
    for v in order:
        d = 0
        for u in range(n):
            if alive[u] and B[v, u] and u != v:
                nb[d] = u
                d += 1
        if d > width:
            width = d
        for i in range(d):
            for j in range(i + 1, d):
                B[nb[i], nb[j]] = True
                B[nb[j], nb[i]] = True
        alive[v] = False
    return width


@njit(cache=True)
def greedy_ordering(A, criterion):
    """Min-degree (``criterion=0``) or min-fill (``1``) elimination ordering and its width."""
    n = A.shape[0]
    B = A.copy()
    for i in range(n):
        B[i, i] = False
    alive = np.ones(n, dtype=np.bool_)
    deg = np.zeros(n, dtype=np.int64)
    for i in range(n):
        deg[i] = B[i].sum()
    order = np.empty(n, dtype=np.int64)
    nb = np.empty(n, dtype=np.int64)
    width = -1
    for step in range(n):
        best = -1
        bscore = np.int64(1) << 62
        bdeg = 0
        for v in range(n):
            if not alive[v]:
                continue
            if criterion == 0:
                score = deg[v]
            else:
                d = 0
                for u in range(n):
                    if alive[u] and B[v, u]:
                        nb[d] = u
                        d += 1
                score = 0
                for i in range(d):
                    for j in range(i + 1, d):
                        if not B[nb[i], nb[j]]:
                            score += 1
                    if score >= bscore:
                        break
            if score < bscore or (score == bscore and deg[v] < bdeg):
                bscore = score
                best = v
                bdeg = deg[v]
        v = best
        d = 0
        for u in range(n):
            if alive[u] and B[v, u]:
                nb[d] = u
                d += 1
        if d > width:
            width = d
        for i in range(d):
            a = nb[i]
            B[a, v] = False
            deg[a] -= 1
            for j in range(i + 1, d):
                c = nb[j]
                if not B[a, c]:
                    B[a, c] = True
                    B[c, a] = True
                    deg[a] += 1
                    deg[c] += 1
        alive[v] = False
        order[step] = v
    return order, width


@njit(cache=True, nogil=True)
def degeneracy(A):
    """Degeneracy (max over the min-degree deletion sequence of the minimum degree)."""
    n = A.shape[0]
    alive = np.ones(n, dtype=np.bool_)
    deg = np.zeros(n, dtype=np.int64)
    for i in range(n):
        for j in range(n):
            if i != j and A[i, j]:
                deg[i] += 1
    best = 0
    for _ in range(n):
        v = -1
        for u in range(n):
            if alive[u] and (v < 0 or deg[u] < deg[v]):
                v = u
        if deg[v] > best:
            best = deg[v]
        alive[v] = False
        for u in range(n):
            if alive[u] and A[v, u] and u != v:
                deg[u] -= 1
    return best


@njit(cache=True, nogil=True)
def minor_min_width(A):
    """Minor-min-width lower bound (MMD+ with min-d contraction, second-smallest degree).

    Repeatedly contracts a minimum-degree vertex into its minimum-degree neighbour; the
    largest second-smallest degree seen (Bodlaender-Koster) bounds the treewidth.
    """
    n = A.shape[0]
    B = A.copy()
    for i in range(n):
        B[i, i] = False
    alive = np.ones(n, dtype=np.bool_)
    deg = np.zeros(n, dtype=np.int64)
    for i in range(n):
        deg[i] = B[i].sum()
    best = 0
    for left in range(n, 1, -1):
        v = -1
        for u in range(n):
            if alive[u] and (v < 0 or deg[u] < deg[v]):
                v = u
        second = -1
        for u in range(n):
            if alive[u] and u != v and (second < 0 or deg[u] < second):
                second = deg[u]
        if second > best:
            best = second
        if deg[v] == 0:
            alive[v] = False
            continue
        w = -1
        for u in range(n):
            if alive[u] and B[v, u] and (w < 0 or deg[u] < deg[w]):
                w = u
        # contract v into w
        for u in range(n):
            if alive[u] and B[v, u]:
                B[v, u] = False
                B[u, v] = False
                deg[u] -= 1
                if u != w and not B[w, u]:
                    B[w, u] = True
                    B[u, w] = True
                    deg[u] += 1
                    deg[w] += 1
        alive[v] = False
    return best


@njit(cache=True)
def _disjoint_paths(indptr, indices, s, t, limit, F, through, par, queue):
    """Internally vertex-disjoint s-t paths (unit vertex capacities), at most ``limit``.

    Node splitting: node ``2x`` is x_in, ``2x + 1`` is x_out; arcs x_in -> x_out (cap 1,
    used flag ``through[x]``) and x_out -> y_in for every edge (cap 1, net flow ``F``).
    """
    n = indptr.shape[0] - 1
    for p in range(indices.shape[0]):
        F[p] = 0
    for x in range(n):
        through[x] = 0
    paths = 0
    src = 2 * s + 1
    dst = 2 * t
    while paths < limit:
        for i in range(2 * n):
            par[i] = -1
        par[src] = src
        head = 0
        tail = 1
        queue[0] = src
        while head < tail and par[dst] < 0:
            node = queue[head]
            head += 1
            x = node >> 1
            if node & 1:  # x_out: along edges with residual, or back into x_in
                for p in range(indptr[x], indptr[x + 1]):
                    y = indices[p]
                    if F[p] < 1 and par[2 * y] < 0:
                        par[2 * y] = node
                        queue[tail] = 2 * y
                        tail += 1
                if x != s and through[x] == 1 and par[2 * x] < 0:
                    par[2 * x] = node
                    queue[tail] = 2 * x
                    tail += 1
            else:  # x_in: through x, or cancel flow that entered x
                if x != t and through[x] == 0 and par[2 * x + 1] < 0:
                    par[2 * x + 1] = node
                    queue[tail] = 2 * x + 1
                    tail += 1
                for p in range(indptr[x], indptr[x + 1]):
                    y = indices[p]
                    if F[p] < 0 and par[2 * y + 1] < 0:
                        par[2 * y + 1] = node
                        queue[tail] = 2 * y + 1
                        tail += 1
        if par[dst] < 0:
            break
        node = dst
        while node != src:
            prev = par[node]
            x = prev >> 1
            y = node >> 1
            if x == y:
                through[x] = 1 if (prev & 1) == 0 else 0
            else:
                # arc between x and y: +1 on x->y, -1 on y->x
                for p in range(indptr[x], indptr[x + 1]):
                    if indices[p] == y:
                        F[p] += 1
                        break
                for p in range(indptr[y], indptr[y + 1]):
                    if indices[p] == x:
                        F[p] -= 1
                        break
            node = prev
        paths += 1
    return paths


@njit(cache=True, nogil=True)
def vertex_connectivity_matrix(indptr, indices, limit, deadline=0.0, stop=None, at_least=0):
    """Internally vertex-disjoint paths between every non-adjacent pair, capped at ``limit``.

    ``indptr``/``indices`` is a CSR adjacency with sorted rows. Entry ``[u, v]`` is ``-1``
    for adjacent pairs and the diagonal. Past ``deadline`` (:func:`monotonic` clock,
    ``<= 0``: none), or once another thread sets ``stop[0]`` (an int64 array; the kernel
    releases the GIL), the pairs not yet computed stay ``-1``, which only withholds edges
    from the LBP+ graphs built from the matrix. Pairs with fewer than ``at_least`` paths
    may get 0 instead of their count: those whose smaller degree is below it are not
    computed (the caller only asks whether a pair has at least that many).
    """
    n = indptr.shape[0] - 1
    K = np.full((n, n), -1, dtype=np.int64)
    F = np.zeros(indices.shape[0], dtype=np.int64)
    through = np.zeros(n, dtype=np.int64)
    par = np.empty(2 * n, dtype=np.int64)
    queue = np.empty(2 * n + 1, dtype=np.int64)
    adjm = np.zeros((n, n), dtype=np.bool_)
    for x in range(n):
        for p in range(indptr[x], indptr[x + 1]):
            adjm[x, indices[p]] = True
    for u in range(n):
        # the clock is an opaque call: the flag is read again after it on every row
        now = monotonic()
        if (deadline > 0 and now > deadline) or (stop is not None and stop[0] != 0):
            break
        for v in range(u + 1, n):
            if adjm[u, v]:
                continue
            lim = min(limit, indptr[u + 1] - indptr[u], indptr[v + 1] - indptr[v])
            p = _disjoint_paths(indptr, indices, u, v, lim, F, through, par, queue) if lim >= max(at_least, 1) else 0
            K[u, v] = p
            K[v, u] = p
    return K


def max_clique(A: np.ndarray, node_limit: int = 2_000_000, deadline=None, stop=None) -> np.ndarray:
    """A maximum clique (branch and bound with greedy colouring bounds) of dense ``A``.

    Returns the best clique found within ``node_limit`` search nodes, before ``deadline``
    (``time.perf_counter`` seconds) and before ``stop()`` (a callable) returns True; always
    a clique, maximum unless a limit was hit.
    """
    import time
    n = A.shape[0]
    nbr = [0] * n
    for i in range(n):
        row = np.flatnonzero(A[i])
        m = 0
        for j in row.tolist():
            if j != i:
                m |= 1 << j
        nbr[i] = m
    best: list = []
    nodes = [0]

    def colour_order(P):
        order, bounds = [], []
        colour = 0
        U = P
        while U:
            colour += 1
            Q = U
            while Q:
                v = (Q & -Q).bit_length() - 1
                Q &= ~(1 << v)
                Q &= ~nbr[v]
                U &= ~(1 << v)
                order.append(v)
                bounds.append(colour)
        return order, bounds

    def expand(R, P):
        nonlocal best
        nodes[0] += 1
        if nodes[0] > node_limit or ((nodes[0] & 255) == 0 and (
                (deadline is not None and time.perf_counter() > deadline) or (stop is not None and stop()))):
            nodes[0] = node_limit + 1
            return
        order, bounds = colour_order(P)
        for i in range(len(order) - 1, -1, -1):
            if len(R) + bounds[i] <= len(best):
                return
            v = order[i]
            R2 = R + [v]
            P2 = P & nbr[v]
            if P2:
                expand(R2, P2)
            elif len(R2) > len(best):
                best = R2
            P &= ~(1 << v)

    expand([], (1 << n) - 1 if n else 0)
    return np.asarray(sorted(best), dtype=np.int64)


# --------------------------------------------------------------------------- GPU
_POLL = 2e-4  # seconds between looks at a running launch
_BLOOM_LOCKS = 1 << 16  # hashed spin locks of the Bloom-mode inserts (kernels/cuda/treewidth.cu)
_STATE_BYTES_EXTRA = 4 + 4 + 16  # parent + vertex + up to four hash-table slots of int32


def gpu_capacity(W: int, fraction: float = 0.4, max_states=None) -> int:
    """Largest wavefront (states per level) that fits ``fraction`` of free device memory.

    Free memory counts the blocks cached by CuPy's pool. Per state: the output buffer
    (``8 * W`` bytes) plus the input buffer of the next level (``8 * W``), the parent and
    vertex records (8 bytes) and two to four hash-table slots (8-16 bytes, power of two).
    """
    import cupy

    free, _ = cupy.cuda.runtime.memGetInfo()
    free += cupy.get_default_memory_pool().free_bytes()
    cap = int(free * fraction) // (16 * W + _STATE_BYTES_EXTRA)
    if max_states is not None:
        cap = min(cap, int(max_states))
    return max(1024, cap)


def search_gpu(adj, cand, k, target, mode=EXACT, max_states=None, nhash=8, bloom_bits_per_state=32,
               block=128, deadline=None, clock=None, rule=True, launch_seconds=0.25, first_launch=1 << 16):
    """Decision "treewidth <= k?" on the GPU; same contract as :class:`LevelSearchCPU`.

    Returns a dict with ``found``, ``prefix`` (eliminated vertices of the first state of
    the last level, in elimination order), ``expanded`` (states expanded), ``evaluations``
    (degree computations), ``level_sizes``, ``overflow`` / ``dropped`` (states that did
    not fit the wavefront buffer) and ``timed_out``. ``deadline`` (on ``clock``) is looked
    at between launches of about ``launch_seconds`` each (the first of ``first_launch``
    states), within a level too.
    """
    import time

    import cupy

    from ..nvrtc import get_kernel

    adj = np.ascontiguousarray(adj, dtype=np.uint64)
    n, W = adj.shape
    if W > 4:
        raise ValueError(f"the GPU search supports at most 256 vertices after preprocessing, got {n}")
    res = {"found": target <= 0, "prefix": np.zeros(0, dtype=np.int64), "expanded": 0, "evaluations": 0,
           "level_sizes": [1], "overflow": False, "dropped": 0, "timed_out": False}
    if target <= 0:
        return res
    MW = 1 if W == 1 else (2 if W == 2 else 4)
    kern = get_kernel("treewidth", f"tw_expand_{MW}_{'rule' if rule else 'plain'}")
    d_adj = cupy.asarray(adj)
    d_cand = cupy.asarray(np.ascontiguousarray(cand, dtype=np.uint64))
    states = cupy.zeros((1, W), dtype=cupy.uint64)
    n_in = 1
    counters = cupy.zeros(3, dtype=cupy.uint64)
    parents, vertices = [], []
    ncand = int(sum(bin(int(x)).count("1") for x in np.asarray(cand)))
    dummy_bloom = cupy.zeros(1, dtype=cupy.uint32)
    bloom_locks = cupy.zeros(_BLOOM_LOCKS, dtype=cupy.int32) if mode != EXACT else None
    chunk = int(first_launch)
    clock = clock or time.perf_counter
    for level in range(target):
        cap = gpu_capacity(W, max_states=max_states)
        bound = int(min(cap, max(16, n_in * max(1, ncand - level))))
        out = cupy.empty((bound, W), dtype=cupy.uint64)
        out_parent = cupy.empty(bound, dtype=cupy.int32)
        out_vertex = cupy.empty(bound, dtype=cupy.int32)
        if mode == EXACT:
            tsize = _pow2_at_least(2 * bound)
            table = cupy.full(tsize, -1, dtype=cupy.int32)
            tmask = np.uint64(tsize - 1)
            bloom, bmask = dummy_bloom, np.uint64(31)
        else:
            nbits = _pow2_at_least(bloom_bits_per_state * bound)
            bloom = cupy.zeros(nbits // 32, dtype=cupy.uint32)
            bmask = np.uint64(nbits - 1)
            table, tmask = bloom_locks, np.uint64(_BLOOM_LOCKS - 1)
        counters.fill(0)
        # the level is expanded in launches over slices of the input states, so that the
        # deadline is looked at every ~``launch_seconds`` (a launch writes the parent of an
        # output as an index into its slice: shifted by the slice's offset afterwards)
        off, written, timed_out = 0, 0, False
        while off < n_in:
            m = int(min(chunk, n_in - off))
            t_launch = time.perf_counter()
            kern(((m + block - 1) // block,), (block,),
                 (d_adj, d_cand, np.int32(n), np.int32(W), np.int32(k), states[off: off + m], np.int64(m),
                  out, out_parent, out_vertex, np.int64(bound), table, tmask, bloom, bmask,
                  np.int32(nhash), np.int32(mode), counters))
            # wait for the launch without holding the GIL or a core: PID may be running in
            # another thread of this process (device="auto"), then read the counters
            done = cupy.cuda.Event(block=False, disable_timing=True)
            done.record()
            while not done.done:
                time.sleep(_POLL)
            c = counters.get()
            now_written = int(min(int(c[0]), bound))
            if off and now_written > written:
                out_parent[written:now_written] += off
            written = now_written
            off += m
            took = time.perf_counter() - t_launch
            chunk = int(min(1 << 24, max(1024, m * launch_seconds / max(took, 1e-6))))
            if off < n_in and deadline is not None and clock() > deadline:
                timed_out = True
                break
        del table, bloom
        count = written
        res["expanded"] += off
        res["evaluations"] += int(c[2])
        if int(c[1]) > 0:
            res["overflow"] = True
            res["dropped"] += int(c[1])
        if timed_out:
            res["timed_out"] = True
            break
        parents.append(out_parent[:count].copy())
        vertices.append(out_vertex[:count].copy())
        del out_parent, out_vertex
        res["level_sizes"].append(count)
        if count == 0:
            break
        states = out[:count].copy() if count < bound else out
        del out
        n_in = count
        if level + 1 == target:
            res["found"] = True
        elif deadline is not None and clock() > deadline:
            res["timed_out"] = True
            break
    if res["found"]:
        order = []
        idx = 0
        for lev in range(len(parents) - 1, -1, -1):
            order.append(int(vertices[lev][idx].get()))
            idx = int(parents[lev][idx].get())
        res["prefix"] = np.asarray(order[::-1], dtype=np.int64)
    return res
