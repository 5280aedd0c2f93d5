"""Positive-instance driven dynamic programming for "treewidth <= k?" (Tamaki).

The decision procedure of Tamaki's PACE 2017 winning solver, written for Numba. It is a
variant of the Bouchitte-Todinca dynamic programming over minimal separators and potential
maximal cliques that only ever generates *positive* subproblems, built bottom-up from
smaller positive ones.

Definitions, for a connected graph ``G`` and a target width ``k``:

* A *block* is a connected vertex set ``C`` together with its neighbourhood ``S = N(C)``.
  ``S`` is a minimal separator when ``G - S`` has at least two *full* components (whose
  neighbourhood is all of ``S``). Among the full components of a minimal separator the one
  holding the smallest vertex is its *outbound* component; every other component of
  ``G - S`` with neighbourhood ``S`` is *inbound*.
* An inbound block is *feasible* (an I-block) when ``G[C + S]`` with ``S`` made a clique has
  a tree decomposition of width ``<= k``; its *endorser* is the root bag of one.
* A potential maximal clique ``K`` (``|K| <= k + 1``, no full component in ``G - K``, and
  every non-adjacent pair of ``K`` lies in the neighbourhood of one component of ``G - K``)
  has, among the components of ``G - K`` that are outbound for their neighbourhood, one with
  the largest neighbourhood ``S_out`` (they form a chain). Its inbound components are those
  whose neighbourhood is not inside ``S_out``. When every inbound component is feasible,
  ``K`` *endorses* the block ``(K - S_out) + inbound components`` with neighbourhood ``S_out``
  as feasible (the decomposition: root bag ``K``, the decompositions of the inbound
  components below). A ``K`` without outbound component whose components are all feasible
  proves ``tw(G) <= k``.
* Candidates ``K`` come from *O-blocks* ``(T, O)``: ``|T| <= k``, ``O`` the one full component
  of ``G - T`` that remains open. Every new I-block ``(C, S)`` opens the O-block
  ``(S, outbound(S))`` and is combined with every existing O-block with ``C`` inside ``O`` and
  ``|T + S| <= k + 1``; the union ``T + S`` becomes a new O-block (one full component) or a
  candidate ``K`` (no full component). Each O-block also proposes ``T + (N(v) & O)`` for its
  vertices ``v``, and every closed neighbourhood ``N[v]`` of at most ``k + 1`` vertices is a
  candidate.

The search stops with a proof either way: a solution, or no new I-block (then
``tw(G) > k``). Feasible I-blocks and pending candidates survive from ``k`` to ``k + 1``.

The O-blocks that combine with an I-block are found in a sieve, in the spirit of Tamaki's
block sieve [1]_: a binary trie over the separators ``T`` whose nodes know the vertices that
every ``T`` below them shares, so that a subtree is skipped as soon as those meet ``C`` or
have more than ``k + 1 - |S|`` vertices outside ``S``. When ``k`` is small against the
number of vertices they are found instead through an index over pairs of vertices of their
separators (an I-block's separator must contain all but ``k + 1 - |S|`` vertices of ``T``).
The tables (open-addressing hash tables over bitsets, the index and the sieve) are arrays
that grow on demand: the compiled search checks, before every step, that the step fits in
the arrays and otherwise returns to Python, which grows them (within ``max_memory``) and
resumes it where it stopped. A search that would exceed ``max_memory`` stops with
``MEMORY`` (no proof), one that reaches its deadline with ``TIMEOUT``.

References
----------
.. [1] H. Tamaki, "Positive-instance driven dynamic programming for treewidth", Journal of
   Combinatorial Optimization 37(4):1283-1311, 2019 (ESA 2017, LIPIcs 87, 68:1-68:13).
.. [2] V. Bouchitte and I. Todinca, "Treewidth and minimum fill-in: grouping the minimal
   separators", SIAM Journal on Computing 31(1):212-232, 2001.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._bits import count, ctz, hash_set, monotonic, popcount

__all__ = ["PIDSolver", "FOUND", "EXHAUSTED", "TIMEOUT", "MEMORY"]

FOUND = 0
EXHAUSTED = 1
TIMEOUT = 2
MEMORY = 3
_GROW = 4    # internal: an array is too small for the next step
_PAUSE = 5   # internal: time slice over, back to Python

_SLICE = 0.5  # seconds between returns to Python (Ctrl-C, deadline)

# block status
_NONMIN = 0
_INBOUND = 1
_OUTBOUND = 2

# bk_info columns
_B_STATUS = 0
_B_SEPSIZE = 1
_B_FEASIBLE = 2
_B_ENDORSER = 3
_B_OUTV = 4      # smallest vertex of the outbound component of the separator (inbound blocks)
_B_WAIT = 5      # head of the list of pending candidates waiting for this block
_B_COLS = 6

# pm_info columns
_P_STATE = 0     # 0 invalid, 1 pending, 2 endorsed, 3 has a full component
_P_OUT = 1       # outbound block or -1
_P_START = 2
_P_COUNT = 3
_P_MISSING = 4   # inbound blocks not yet feasible
_P_COLS = 5

# counters
_C_NB = 0
_C_NO = 1
_C_NP = 2
_C_NINB = 3
_C_NWAIT = 4
_C_QHEAD = 5
_C_QTAIL = 6
_C_NTR = 7       # nodes of the sieve
_C_SOLUTION = 8
_C_PMCTRIED = 9
_C_PLUGS = 10
_C_PHASE = 11    # 0: closed neighbourhoods, 1: queue
_C_CUR = 12      # block being processed (-1: none)
_C_SUB = 13      # 0: waiting candidates, 1: simple O-block and query, 2: combinations
_C_POS = 14      # resume position inside the phase / step
_C_NQ = 15       # number of query results in qout
_C_TQ = 16       # microseconds in O-block queries
_C_TC = 17       # microseconds in combinations
_C_VLEAF = 18    # O-blocks tested one by one (sieve leaves, index entries, scans)
_C_VNODE = 19    # sieve nodes visited
_C_NENT = 20     # chunks of the index's lists
_C_NUSED = 21    # keys of the index
_C_SCANF = 22    # the index scans every O-block when |O-blocks| * W < SCANF * (lookups)
_C_SIEVE = 23    # 1: O-blocks in the sieve, 0: in the index (chosen for each k)
_C_NCOUNT = 24


@njit(cache=True)
def _has(a, v):
    return np.int64((a[v >> 6] >> np.uint64(v & 63)) & np.uint64(1))


@njit(cache=True)
def _set(a, v):
    a[v >> 6] |= np.uint64(1) << np.uint64(v & 63)


@njit(cache=True)
def _equal(a, b):
    for w in range(a.shape[0]):
        if a[w] != b[w]:
            return False
    return True


@njit(cache=True)
def _subset(a, b):
    for w in range(a.shape[0]):
        if a[w] & ~b[w]:
            return False
    return True


@njit(cache=True)
def _first(a):
    for w in range(a.shape[0]):
        if a[w]:
            return w * 64 + ctz(a[w])
    return -1


@njit(cache=True)
def _next_outside(visited, n, q):
    """Smallest vertex of ``0..n-1`` outside ``visited`` in word ``q`` or later, or -1.

    The components of ``G - X`` are visited in order of their smallest vertex by starting
    with ``visited = X`` and, after adding each component found, resuming at the word of
    the last start vertex.
    """
    W = visited.shape[0]
    while q < W:
        x = ~visited[q]
        if q == W - 1 and n % 64:
            x &= (np.uint64(1) << np.uint64(n % 64)) - np.uint64(1)
        if x:
            return q * 64 + ctz(x)
        q += 1
    return -1


@njit(cache=True)
def _component(indptr, indices, adj, X, v, comp, sep, stack):
    """Component of ``v`` in ``G - X`` (``comp``) and its neighbourhood (``sep``, in ``X``).

    Returns the number of vertices of the component. Each vertex reached costs its degree
    through the CSR lists, or a pass over its ``W`` words of the bitset adjacency ``adj``:
    the bitsets are used when the average degree is at least ``W`` (dense pieces, where
    this search spends most of its time finding components).
    """
    W = comp.shape[0]
    for w in range(W):
        comp[w] = 0
        sep[w] = 0
    _set(comp, v)
    stack[0] = v
    top = 1
    size = 1
    if indices.shape[0] >= W * adj.shape[0]:
        while top:
            top -= 1
            u = stack[top]
            for w in range(W):
                a = adj[u, w]
                sep[w] |= a & X[w]
                new = a & ~X[w] & ~comp[w]
                comp[w] |= new
                while new:
                    stack[top] = w * 64 + ctz(new)
                    new &= new - np.uint64(1)
                    top += 1
                    size += 1
        return size
    while top:
        top -= 1
        u = stack[top]
        for p in range(indptr[u], indptr[u + 1]):
            x = indices[p]
            if _has(comp, x):
                continue
            if _has(X, x):
                _set(sep, x)
            else:
                _set(comp, x)
                stack[top] = x
                top += 1
                size += 1
    return size


# --------------------------------------------------------------------------- hash tables
@njit(cache=True)
def _lookup(table, keys, key, col):
    """Index of ``key`` among ``keys[:, col]`` through ``table`` (ids + 1, 0 empty), or -1."""
    mask = np.uint64(table.shape[0] - 1)
    slot = hash_set(key) & mask
    while True:
        e = table[slot]
        if e == 0:
            return -1
        if _equal(keys[e - 1, col], key):
            return e - 1
        slot = (slot + np.uint64(1)) & mask


@njit(cache=True)
def _lookup_row(table, keys, key):
    """Index of ``key`` among the rows of ``keys`` through ``table``, or -1."""
    mask = np.uint64(table.shape[0] - 1)
    slot = hash_set(key) & mask
    while True:
        e = table[slot]
        if e == 0:
            return -1
        if _equal(keys[e - 1], key):
            return e - 1
        slot = (slot + np.uint64(1)) & mask


@njit(cache=True)
def _clear_table(table, keys, nkeys, col):
    """Empty ``table`` of the ``nkeys`` keys ``keys[:nkeys, col]`` (touches only their slots)."""
    mask = np.uint64(table.shape[0] - 1)
    for j in range(nkeys):
        slot = hash_set(keys[j, col]) & mask
        while table[slot] != j + 1:
            slot = (slot + np.uint64(1)) & mask
        table[slot] = 0


@njit(cache=True)
def _insert(table, key, idx):
    mask = np.uint64(table.shape[0] - 1)
    slot = hash_set(key) & mask
    while table[slot] != 0:
        slot = (slot + np.uint64(1)) & mask
    table[slot] = idx + 1


# --------------------------------------------------------------------------- blocks
@njit(cache=True)
def _block_status(indptr, indices, adj, n, C, S, ssize, visited, comp, sep, stack):
    """Status of the block ``(C, S)``: NONMIN, INBOUND (with the outbound's smallest vertex)
    or OUTBOUND; scans the components of ``G - S`` in order of their smallest vertex."""
    W = C.shape[0]
    for w in range(W):
        visited[w] = S[w] | C[w]
    cmin = _first(C)
    first = -1  # 0: C is the first full component, 1: another one is
    considered = False
    v = _next_outside(visited, n, 0)
    while v >= 0:
        if not considered and cmin < v:
            considered = True
            if first < 0:
                first = 0
        _component(indptr, indices, adj, S, v, comp, sep, stack)
        for w in range(W):
            visited[w] |= comp[w]
        if count(sep) == ssize:
            if first < 0:
                return _INBOUND, v
            if first == 0:
                return _OUTBOUND, -1
        v = _next_outside(visited, n, v >> 6)
    return _NONMIN, -1


@njit(cache=True)
def _get_block(indptr, indices, adj, n, C, S, bk_sets, bk_info, bk_table, cnt, visited, comp2, sep2, stack):
    """Id of the block ``(C, S)``, created (with its status) when new; -1 when full."""
    b = _lookup(bk_table, bk_sets, C, 0)
    if b >= 0:
        return b
    b = cnt[_C_NB]
    if b >= bk_sets.shape[0] or 2 * (b + 1) > bk_table.shape[0]:
        return -1
    W = C.shape[0]
    for w in range(W):
        bk_sets[b, 0, w] = C[w]
        bk_sets[b, 1, w] = S[w]
    ssize = count(S)
    st, outv = _block_status(indptr, indices, adj, n, C, S, ssize, visited, comp2, sep2, stack)
    bk_info[b, _B_STATUS] = st
    bk_info[b, _B_SEPSIZE] = ssize
    bk_info[b, _B_FEASIBLE] = 0
    bk_info[b, _B_ENDORSER] = -1
    bk_info[b, _B_OUTV] = outv
    bk_info[b, _B_WAIT] = -1
    _insert(bk_table, C, b)
    cnt[_C_NB] = b + 1
    return b


# --------------------------------------------------------------------------- index of O-blocks
# (used when the width is small against the number of vertices: there the separators are
# small sets spread over a large graph and the sieve below walks far from the answers)
# An I-block (C, S) combines with the O-blocks (T, O) with |T + S| <= k + 1, that is
# |T - S| <= m for the budget m = k + 1 - |S|, with C inside O. With t = |T|, such a T
# shares at least t - m vertices with S. An O-block is indexed under (v, t) for every
# vertex v of T, and, writing T = {t_0 < t_1 < ...}, under (t_i, t_j, j) for the pairs
# i < j <= _RANK. When t = m + 1, T meets S: a query looks up (v, m + 1) for the vertices v
# of S. When t >= m + 2, the first two vertices of T in S sit at positions i < j <= m + 1:
# a query looks up (a, b, j) for the pairs a < b of S and j <= m + 1. An entry is reported
# only through the first vertex (pair) of T in S, so each O-block once. O-blocks with
# t <= m, and pairs beyond _RANK, are scanned from per-size lists.
_RANK = 8
_MAXPAIRS = _RANK * (_RANK + 1) // 2   # pair entries per O-block (plus one per vertex of T)
_CHUNK = 4       # entries per chunk of an index list


@njit(cache=True)
def _mix_int(x):
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True)
def _pair_slot(ix_keys, key):
    mask = np.uint64(ix_keys.shape[0] - 1)
    slot = np.int64(_mix_int(np.uint64(key)) & mask)
    while ix_keys[slot] != key and ix_keys[slot] != 0:
        slot = (slot + 1) & np.int64(mask)
    return slot


@njit(cache=True)
def _ix_add(key, j, fp, ix_keys, ix_head, ix_used, ix_ent, ix_fp, cnt):
    """Append O-block ``j`` (fingerprint ``fp``) to the list of ``key``. Lists are chains of
    chunks of _CHUNK entries so that a query reads them mostly sequentially."""
    slot = _pair_slot(ix_keys, key)
    if ix_keys[slot] == 0:
        ix_keys[slot] = key
        ix_head[slot] = -1
        ix_used[cnt[_C_NUSED]] = slot
        cnt[_C_NUSED] += 1
    h = ix_head[slot]
    if h < 0 or ix_ent[h, _CHUNK + 1] == _CHUNK:
        nc = cnt[_C_NENT]
        cnt[_C_NENT] = nc + 1
        ix_ent[nc, _CHUNK] = h
        ix_ent[nc, _CHUNK + 1] = 0
        ix_head[slot] = nc
        h = nc
    i = ix_ent[h, _CHUNK + 1]
    ix_ent[h, i] = j
    ix_fp[h, i] = fp
    ix_ent[h, _CHUNK + 1] = i + 1


@njit(cache=True)
def _ix_insert(ob_sets, ob_info, j, n, ix_keys, ix_head, ix_used, ix_ent, ix_fp, sz_head, cnt):
    """Index O-block ``j`` (the caller made room)."""
    T = ob_sets[j, 0]
    t = ob_info[j, 0]
    ob_info[j, 1] = sz_head[t]
    sz_head[t] = j
    fp = _fingerprint(T)
    verts = np.empty(_RANK + 1, dtype=np.int64)
    nv = 0
    for q in range(T.shape[0]):
        x = T[q]
        while x:
            v = q * 64 + ctz(x)
            x &= x - np.uint64(1)
            _ix_add(_single_key(v, t, n), j, fp, ix_keys, ix_head, ix_used, ix_ent, ix_fp, cnt)
            if nv <= _RANK:
                verts[nv] = v
                nv += 1
    for jj in range(1, nv):
        for ii in range(jj):
            _ix_add(_pair_key(verts[ii], verts[jj], jj, n), j, fp, ix_keys, ix_head, ix_used, ix_ent, ix_fp, cnt)


@njit(cache=True)
def _fingerprint(T):
    """64-bit signature of a set: bit h(v) for each vertex v. ``|T - S| <= m`` implies
    ``popcount(fp(T) & ~fp(S)) <= m``, a test that needs no access to the set itself."""
    f = np.uint64(0)
    for q in range(T.shape[0]):
        x = T[q]
        while x:
            v = q * 64 + ctz(x)
            x &= x - np.uint64(1)
            f |= np.uint64(1) << ((np.uint64(v) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(58))
    return f


@njit(cache=True)
def _single_key(v, t, n):
    return 1 + v * (n + 2) + t


@njit(cache=True)
def _pair_key(a, b, r, n):
    return 2 + n * (n + 2) + (a * n + b) * (_RANK + 1) + r


@njit(cache=True)
def _ix_clear(ix_keys, ix_used, sz_head, cnt):
    for i in range(cnt[_C_NUSED]):
        ix_keys[ix_used[i]] = 0
    cnt[_C_NUSED] = 0
    cnt[_C_NENT] = 0
    for t in range(sz_head.shape[0]):
        sz_head[t] = -1


@njit(cache=True)
def _plug_ok(C, S, c0, m, ob_sets, j):
    """Whether O-block ``j`` combines with the I-block ``(C, S)`` under budget ``m``."""
    T = ob_sets[j, 0]
    out = 0
    inside = True
    for w in range(T.shape[0]):
        if C[w] & T[w]:
            return False
        out += popcount(T[w] & ~S[w])
        if S[w] & ~T[w]:
            inside = False
    if out > m or inside:
        return False
    return _has(ob_sets[j, 1], c0) == 1


@njit(cache=True)
def _first_in(T, S, which):
    """The first (which=0) or second (which=1) vertex of T inside S, or -1."""
    seen = 0
    for w in range(T.shape[0]):
        y = T[w] & S[w]
        while y:
            v = w * 64 + ctz(y)
            y &= y - np.uint64(1)
            if seen == which:
                return v
            seen += 1
    return -1


@njit(cache=True)
def _scan_sizes(C, S, c0, m, lo, hi, ob_sets, ob_info, sz_head, out, nout, cnt):
    for t in range(lo, hi + 1):
        j = sz_head[t]
        while j >= 0:
            cnt[_C_VLEAF] += 1
            if _plug_ok(C, S, c0, m, ob_sets, j):
                out[nout] = j
                nout += 1
            j = ob_info[j, 1]
    return nout


@njit(cache=True)
def _scan_all(C, S, c0, m, ob_sets, no, out):
    """Every O-block against the I-block, reading the table in order (fast for small ``W``)."""
    W = C.shape[0]
    nout = 0
    for j in range(no):
        out_ = 0
        ok = True
        inside = True
        for w in range(W):
            t = ob_sets[j, 0, w]
            out_ += popcount(t & ~S[w])
            if out_ > m or (t & C[w]):
                ok = False
                break
            if S[w] & ~t:
                inside = False
        if ok and not inside and _has(ob_sets[j, 1], c0) == 1:
            out[nout] = j
            nout += 1
    return nout


@njit(cache=True)
def _ix_query(C, S, m, k, n, ob_sets, ob_info, ix_keys, ix_head, ix_ent, ix_fp, sz_head, cnt, out, sverts):
    """O-blocks ``(T, O)`` with ``C`` inside ``O``, ``|T - S| <= m`` and ``S`` not inside ``T``;
    written to ``out``, returns how many.

    Chooses between the index and a sequential scan of all O-blocks by their estimated cost:
    about ``|S| (|S| - 1) / 2 (m + 1)`` list lookups against ``W`` words per O-block.
    """
    c0 = _first(C)
    ssize = 0
    for w in range(S.shape[0]):
        ssize += popcount(S[w])
    no = cnt[_C_NO]
    lookups = ssize * (ssize - 1) // 2 * (m + 1) + ssize
    if m + 1 > _RANK or no * S.shape[0] < cnt[_C_SCANF] * lookups:
        cnt[_C_VLEAF] += no
        return _scan_all(C, S, c0, m, ob_sets, no, out)
    nfs = ~_fingerprint(S)
    # no overlap needed: |T| <= m
    nout = _scan_sizes(C, S, c0, m, 1, min(m, k), ob_sets, ob_info, sz_head, out, 0, cnt)
    if m + 1 > k:
        return nout
    ns = 0
    for q in range(S.shape[0]):
        x = S[q]
        while x:
            sverts[ns] = q * 64 + ctz(x)
            x &= x - np.uint64(1)
            ns += 1
    # |T| = m + 1: T meets S; report through the first vertex of T in S
    for a in range(ns):
        slot = _pair_slot(ix_keys, _single_key(sverts[a], m + 1, n))
        if ix_keys[slot] == 0:
            continue
        h = ix_head[slot]
        while h >= 0:
            for i in range(ix_ent[h, _CHUNK + 1]):
                if popcount(ix_fp[h, i] & nfs) > m:
                    continue
                j = ix_ent[h, i]
                if _first_in(ob_sets[j, 0], S, 0) == sverts[a] and _plug_ok(C, S, c0, m, ob_sets, j):
                    out[nout] = j
                    nout += 1
            h = ix_ent[h, _CHUNK]
    if m + 2 > k:
        return nout
    # |T| >= m + 2: the first two vertices of T in S sit at positions i < r <= m + 1
    if m + 1 > _RANK:
        return _scan_sizes(C, S, c0, m, m + 2, k, ob_sets, ob_info, sz_head, out, nout, cnt)
    for b in range(1, ns):
        for a in range(b):
            for r in range(1, m + 2):
                slot = _pair_slot(ix_keys, _pair_key(sverts[a], sverts[b], r, n))
                if ix_keys[slot] == 0:
                    continue
                h = ix_head[slot]
                while h >= 0:
                    for i in range(ix_ent[h, _CHUNK + 1]):
                        if popcount(ix_fp[h, i] & nfs) > m:
                            continue
                        j = ix_ent[h, i]
                        cnt[_C_VLEAF] += 1
                        if ob_info[j, 0] < m + 2:
                            continue
                        T = ob_sets[j, 0]
                        if (_first_in(T, S, 0) == sverts[a] and _first_in(T, S, 1) == sverts[b]
                                and _plug_ok(C, S, c0, m, ob_sets, j)):
                            out[nout] = j
                            nout += 1
                    h = ix_ent[h, _CHUNK]
    return nout


@njit(cache=True)
def _rehash_pairs(old_keys, old_head, new_keys, new_head, ix_used, nused):
    for i in range(nused):
        s = ix_used[i]
        key = old_keys[s]
        slot = _pair_slot(new_keys, key)
        new_keys[slot] = key
        new_head[slot] = old_head[s]
        ix_used[i] = slot


# --------------------------------------------------------------------------- sieve of O-blocks
# An I-block (C, S) combines with the O-blocks (T, O) that have C inside O and
# |T + S| <= k + 1. C is connected, so C inside O means: T disjoint from C and C's first
# vertex in O; the size condition reads |T - S| <= m for the I-block's margin
# m = k + 1 - |S|. The O-blocks form one binary Patricia trie over their separators T, read
# as bit strings in vertex order: an inner node branches on the first vertex p at which
# the sets below it differ (children without and with p), a leaf is one O-block. Every
# node keeps the vertices that all T below it share (tr_must). A query walks the trie and
# skips a subtree whose shared vertices meet C or have more than m vertices outside S;
# the leaves reached are tested on C's first vertex and on S not inside T. Separators are
# small and an I-block's margin is usually small, so the walk stays near the answers.
# Tamaki's block sieve [1] (a trie over the open components O in chunks of bits, one per
# range of margins) served as the model; tries over O (in vertex order, or splitting
# buckets evenly) visited several times more nodes than this one on dense PACE pieces.
# tr columns: branch vertex (n for a leaf), children without / with it, an O-block below it
_T_POS = 0
_T_C0 = 1
_T_C1 = 2
_T_REP = 3
_T_COLS = 4
_TR_STEP = 2   # nodes one new O-block adds (its leaf and one branch)


@njit(cache=True)
def _tr_node(tr, tr_must, cnt, pos, rep, must):
    x = cnt[_C_NTR]
    cnt[_C_NTR] = x + 1
    tr[x, _T_POS] = pos
    tr[x, _T_C0] = -1
    tr[x, _T_C1] = -1
    tr[x, _T_REP] = rep
    for w in range(must.shape[0]):
        tr_must[x, w] = must[w]
    return x


@njit(cache=True)
def _tr_insert(ob_sets, j, n, tr, tr_root, tr_must, cnt):
    """File O-block ``j`` in the trie (the caller made room for two nodes)."""
    T = ob_sets[j, 0]
    W = T.shape[0]
    if tr_root[0] < 0:
        tr_root[0] = _tr_node(tr, tr_must, cnt, n, j, T)
        return
    # the set the walk along T's bits ends at, and the first vertex where they differ
    x = tr_root[0]
    while tr[x, _T_POS] < n:
        x = tr[x, _T_C0 + _has(T, tr[x, _T_POS])]
    other = ob_sets[tr[x, _T_REP], 0]
    d = n
    for w in range(W):
        diff = T[w] ^ other[w]
        if diff:
            d = w * 64 + ctz(diff)
            break
    # a branch on d above the first node of the walk that branches later; the nodes
    # passed keep in their common part only what T has too
    parent = -1
    x = tr_root[0]
    while tr[x, _T_POS] < d:
        for w in range(W):
            tr_must[x, w] &= T[w]
        parent = x
        x = tr[x, _T_C0 + _has(T, tr[x, _T_POS])]
    leaf = _tr_node(tr, tr_must, cnt, n, j, T)
    z = _tr_node(tr, tr_must, cnt, d, tr[x, _T_REP], tr_must[x])
    for w in range(W):
        tr_must[z, w] &= T[w]
    side = _has(T, d)
    tr[z, _T_C0 + side] = leaf
    tr[z, _T_C1 - side] = x
    if parent < 0:
        tr_root[0] = z
    else:
        tr[parent, _T_C0 + _has(T, tr[parent, _T_POS])] = z


@njit(cache=True)
def _tr_build(ob_sets, no, n, tr, tr_root, tr_must, cnt):
    """File O-blocks ``0 .. no - 1`` in an empty trie (room for ``2 * no`` nodes)."""
    tr_root[0] = -1
    cnt[_C_NTR] = 0
    for j in range(no):
        _tr_insert(ob_sets, j, n, tr, tr_root, tr_must, cnt)


@njit(cache=True)
def _tr_query(C, S, m, n, tr, tr_root, tr_must, ob_sets, out, stk, cnt):
    """O-blocks ``(T, O)`` with ``T`` disjoint from ``C``, the first vertex of ``C`` in ``O``,
    ``|T - S| <= m`` and ``S`` not inside ``T``; written to ``out``, returns how many.
    ``stk`` (``n + 2`` entries) holds the nodes still to visit."""
    nout = 0
    if tr_root[0] < 0:
        return 0
    c0 = _first(C)
    W = C.shape[0]
    stk[0] = tr_root[0]
    top = 1
    while top:
        top -= 1
        x = stk[top]
        cnt[_C_VNODE] += 1
        # every T below holds the node's common part
        spent = 0
        for w in range(W):
            y = tr_must[x, w]
            if y & C[w]:
                spent = m + 1
                break
            spent += popcount(y & ~S[w])
        if spent > m:
            continue
        p = tr[x, _T_POS]
        if p >= n:
            cnt[_C_VLEAF] += 1
            r = tr[x, _T_REP]
            if _has(ob_sets[r, 1], c0):
                for w in range(W):
                    if S[w] & ~ob_sets[r, 0, w]:
                        out[nout] = r
                        nout += 1
                        break
            continue
        stk[top] = tr[x, _T_C0]
        top += 1
        if not _has(C, p) and (spent < m or _has(S, p)):
            stk[top] = tr[x, _T_C1]
            top += 1
    return nout


# --------------------------------------------------------------------------- the search
# The tables travel as one tuple (st) and the scratch arrays as another (sc):
#   st = (bk_sets, bk_info, bk_table, ob_sets, ob_info, ob_table, ix_keys, ix_head, ix_used, ix_ent, ix_fp,
#         sz_head, tr, tr_root, tr_must, pm_sets, pm_info, pm_inb, pm_table, wl_next, wl_pm, queue, qout, cnt)
#   sc = (cbuf, sbuf, blist, visited, comp2, sep2, stack, tgt, miss, K, T, O, stk)
@njit(cache=True)
def _room(st, n, k):
    """Whether one step (an O-block with its crowns, or one candidate) fits in the tables."""
    (bk_sets, bk_info, bk_table, ob_sets, ob_info, ob_table, ix_keys, ix_head, ix_used, ix_ent, ix_fp, sz_head, tr,
     tr_root, tr_must, pm_sets, pm_info, pm_inb, pm_table, wl_next, wl_pm, queue, qout, cnt) = st
    steps = k + 2
    nb = cnt[_C_NB] + steps * (n + 2)
    npm = cnt[_C_NP] + steps
    nin = cnt[_C_NINB] + steps * (n + 1)
    nw = cnt[_C_NWAIT] + steps * (n + 1)
    no = cnt[_C_NO] + 1
    return (nb <= bk_sets.shape[0] and 2 * nb <= bk_table.shape[0] and nb <= queue.shape[0]
            and npm <= pm_sets.shape[0] and 2 * npm <= pm_table.shape[0]
            and nin <= pm_inb.shape[0] and nw <= wl_next.shape[0]
            and no <= ob_sets.shape[0] and 2 * no <= ob_table.shape[0] and no <= qout.shape[0]
            and cnt[_C_NTR] + _TR_STEP <= tr.shape[0]
            and cnt[_C_NENT] + _MAXPAIRS + k + 2 <= ix_ent.shape[0]
            and 2 * (cnt[_C_NUSED] + _MAXPAIRS + k + 2) <= ix_keys.shape[0])


@njit(cache=True)
def _endorse(pm, g, st, sc):
    """Endorse the target block of the ready candidate ``pm`` (or record the solution)."""
    indptr, indices, adj = g
    (bk_sets, bk_info, bk_table, ob_sets, ob_info, ob_table, ix_keys, ix_head, ix_used, ix_ent, ix_fp, sz_head, tr,
     tr_root, tr_must, pm_sets, pm_info, pm_inb, pm_table, wl_next, wl_pm, queue, qout, cnt) = st
    cbuf, sbuf, blist, visited, comp2, sep2, stack, tgt, miss, K, T, O, stk = sc
    n = adj.shape[0]
    out = pm_info[pm, _P_OUT]
    pm_info[pm, _P_STATE] = 2
    if out < 0:
        cnt[_C_SOLUTION] = pm
        return
    W = tgt.shape[0]
    Kp = pm_sets[pm]
    Sout = bk_sets[out, 1]
    for w in range(W):
        tgt[w] = Kp[w] & ~Sout[w]
    s = pm_info[pm, _P_START]
    for i in range(pm_info[pm, _P_COUNT]):
        C = bk_sets[pm_inb[s + i], 0]
        for w in range(W):
            tgt[w] |= C[w]
    b = _get_block(indptr, indices, adj, n, tgt, Sout, bk_sets, bk_info, bk_table, cnt, visited, comp2, sep2, stack)
    if bk_info[b, _B_FEASIBLE] == 0:
        bk_info[b, _B_FEASIBLE] = 1
        bk_info[b, _B_ENDORSER] = pm
        queue[cnt[_C_QTAIL]] = b
        cnt[_C_QTAIL] += 1


@njit(cache=True)
def _try_pmc(K, g, st, sc):
    """Process the candidate potential maximal clique ``K`` (ignored when seen before)."""
    indptr, indices, adj = g
    (bk_sets, bk_info, bk_table, ob_sets, ob_info, ob_table, ix_keys, ix_head, ix_used, ix_ent, ix_fp, sz_head, tr,
     tr_root, tr_must, pm_sets, pm_info, pm_inb, pm_table, wl_next, wl_pm, queue, qout, cnt) = st
    cbuf, sbuf, blist, visited, comp2, sep2, stack, tgt, miss, Kx, T, O, stk = sc
    n = adj.shape[0]
    if _lookup_row(pm_table, pm_sets, K) >= 0:
        return
    pm = cnt[_C_NP]
    cnt[_C_PMCTRIED] += 1
    W = K.shape[0]
    for w in range(W):
        pm_sets[pm, w] = K[w]
    _insert(pm_table, K, pm)
    cnt[_C_NP] = pm + 1
    pm_info[pm, _P_STATE] = 0
    pm_info[pm, _P_OUT] = -1
    pm_info[pm, _P_START] = 0
    pm_info[pm, _P_COUNT] = 0
    pm_info[pm, _P_MISSING] = 0
    ksize = count(K)
    # components of G - K; a full one means K is not a potential maximal clique
    for w in range(W):
        visited[w] = K[w]
    nc = 0
    v = _next_outside(visited, n, 0)
    while v >= 0:
        _component(indptr, indices, adj, K, v, cbuf[nc], sbuf[nc], stack)
        for w in range(W):
            visited[w] |= cbuf[nc, w]
        if count(sbuf[nc]) == ksize:
            pm_info[pm, _P_STATE] = 3
            return
        nc += 1
        v = _next_outside(visited, n, v >> 6)
    # blocks; the outbound one with the largest separator (outbound separators form a chain)
    out = -1
    outsize = -1
    for i in range(nc):
        b = _get_block(indptr, indices, adj, n, cbuf[i], sbuf[i], bk_sets, bk_info, bk_table, cnt, visited, comp2,
                       sep2, stack)
        blist[i] = b
        if bk_info[b, _B_STATUS] == _OUTBOUND and bk_info[b, _B_SEPSIZE] > outsize:
            out = b
            outsize = bk_info[b, _B_SEPSIZE]
    # inbound blocks: separator not inside the outbound one's; each must be of a minimal separator
    ninb = 0
    for i in range(nc):
        b = blist[i]
        if out >= 0 and _subset(bk_sets[b, 1], bk_sets[out, 1]):
            continue
        if bk_info[b, _B_STATUS] != _INBOUND:
            return
        blist[ninb] = b
        ninb += 1
    # every non-adjacent pair of K lies in the separator of a block
    for q in range(W):
        x = K[q]
        while x:
            v = q * 64 + ctz(x)
            x &= x - np.uint64(1)
            for w in range(W):
                miss[w] = K[w] & ~adj[v, w]
            miss[v >> 6] &= ~(np.uint64(1) << np.uint64(v & 63))
            if out >= 0 and _has(bk_sets[out, 1], v):
                for w in range(W):
                    miss[w] &= ~bk_sets[out, 1, w]
            for i in range(ninb):
                sep = bk_sets[blist[i], 1]
                if _has(sep, v):
                    for w in range(W):
                        miss[w] &= ~sep[w]
            for w in range(W):
                if miss[w]:
                    return
    # a potential maximal clique: ready, or waiting for its inbound blocks
    s = cnt[_C_NINB]
    missing = 0
    for i in range(ninb):
        pm_inb[s + i] = blist[i]
        if bk_info[blist[i], _B_FEASIBLE] == 0:
            missing += 1
    cnt[_C_NINB] = s + ninb
    pm_info[pm, _P_OUT] = out
    pm_info[pm, _P_START] = s
    pm_info[pm, _P_COUNT] = ninb
    pm_info[pm, _P_MISSING] = missing
    if missing == 0:
        _endorse(pm, g, st, sc)
        return
    pm_info[pm, _P_STATE] = 1
    nw = cnt[_C_NWAIT]
    for i in range(ninb):
        b = blist[i]
        if bk_info[b, _B_FEASIBLE] == 0:
            wl_pm[nw] = pm
            wl_next[nw] = bk_info[b, _B_WAIT]
            bk_info[b, _B_WAIT] = nw
            nw += 1
    cnt[_C_NWAIT] = nw


@njit(cache=True)
def _new_oblock(Tn, On, k, g, st, sc):
    """Create the O-block ``(Tn, On)`` unless known, and try its crowns ``T + (N(v) & O)``."""
    indptr, indices, adj = g
    (bk_sets, bk_info, bk_table, ob_sets, ob_info, ob_table, ix_keys, ix_head, ix_used, ix_ent, ix_fp, sz_head, tr,
     tr_root, tr_must, pm_sets, pm_info, pm_inb, pm_table, wl_next, wl_pm, queue, qout, cnt) = st
    cbuf, sbuf, blist, visited, comp2, sep2, stack, tgt, miss, K, T, O, stk = sc
    n = adj.shape[0]
    if _lookup(ob_table, ob_sets, Tn, 0) >= 0:
        return
    j = cnt[_C_NO]
    W = Tn.shape[0]
    for w in range(W):
        ob_sets[j, 0, w] = Tn[w]
        ob_sets[j, 1, w] = On[w]
    tsize = count(Tn)
    ob_info[j, 0] = tsize
    _insert(ob_table, Tn, j)
    cnt[_C_NO] = j + 1
    if cnt[_C_SIEVE]:
        _tr_insert(ob_sets, j, n, tr, tr_root, tr_must, cnt)
    else:
        _ix_insert(ob_sets, ob_info, j, n, ix_keys, ix_head, ix_used, ix_ent, ix_fp, sz_head, cnt)
    for q in range(W):
        x = ob_sets[j, 0, q]
        while x:
            v = q * 64 + ctz(x)
            x &= x - np.uint64(1)
            c = 0
            for w in range(W):
                K[w] = ob_sets[j, 0, w] | (adj[v, w] & ob_sets[j, 1, w])
                c += popcount(K[w])
            if c > k + 1 or c == tsize:
                continue
            _try_pmc(K, g, st, sc)


@njit(cache=True)
def _combine(b, j, k, g, st, sc):
    """Combine the I-block ``b`` with the O-block ``j``: a new O-block or a candidate."""
    indptr, indices, adj = g
    (bk_sets, bk_info, bk_table, ob_sets, ob_info, ob_table, ix_keys, ix_head, ix_used, ix_ent, ix_fp, sz_head, tr,
     tr_root, tr_must, pm_sets, pm_info, pm_inb, pm_table, wl_next, wl_pm, queue, qout, cnt) = st
    cbuf, sbuf, blist, visited, comp2, sep2, stack, tgt, miss, K, T, O, stk = sc
    n = adj.shape[0]
    W = K.shape[0]
    C = bk_sets[b, 0]
    S = bk_sets[b, 1]
    cnt[_C_PLUGS] += 1
    tsz = 0
    for w in range(W):
        T[w] = ob_sets[j, 0, w] | S[w]
        tsz += popcount(T[w])
    # known already as an O-block, or as a candidate without a full component: nothing new
    if _lookup(ob_table, ob_sets, T, 0) >= 0:
        return
    p = _lookup_row(pm_table, pm_sets, T)
    if p >= 0 and pm_info[p, _P_STATE] != 3:
        return
    # components of G - (T + S): those of G - T other than O keep their smaller
    # neighbourhoods, so the full ones lie in O - S
    nfull = 0
    for w in range(W):
        visited[w] = ~ob_sets[j, 1, w] | S[w] | C[w]
    v = _next_outside(visited, n, 0)
    while v >= 0 and nfull < 2:
        _component(indptr, indices, adj, T, v, comp2, sep2, stack)
        for w in range(W):
            visited[w] |= comp2[w]
        if count(sep2) == tsz:
            nfull += 1
            for w in range(W):
                O[w] = comp2[w]
        v = _next_outside(visited, n, v >> 6)
    if bk_info[b, _B_SEPSIZE] == tsz:  # C itself is full for T + S
        nfull += 1
        for w in range(W):
            O[w] = C[w]
    if nfull > 1:
        return
    if nfull == 1:
        if tsz <= k:
            _new_oblock(T, O, k, g, st, sc)
    else:
        for w in range(W):
            K[w] = T[w]
        _try_pmc(K, g, st, sc)


@njit(cache=True, nogil=True)
def pid_run(k, g, st, deadline):
    """Run the search for width ``k`` until a solution, exhaustion, the deadline, the end of
    a time slice (``_PAUSE``) or a step that does not fit the tables (``_GROW``).

    Resumable: the position is kept in the counters. ``deadline`` is on the
    :func:`monotonic` clock (``<= 0``: none).
    """
    indptr, indices, adj = g
    (bk_sets, bk_info, bk_table, ob_sets, ob_info, ob_table, ix_keys, ix_head, ix_used, ix_ent, ix_fp, sz_head, tr,
     tr_root, tr_must, pm_sets, pm_info, pm_inb, pm_table, wl_next, wl_pm, queue, qout, cnt) = st
    n, W = adj.shape
    sc = (np.zeros((n + 1, W), dtype=np.uint64), np.zeros((n + 1, W), dtype=np.uint64), np.zeros(n + 1, dtype=np.int64),
          np.zeros(W, dtype=np.uint64), np.zeros(W, dtype=np.uint64), np.zeros(W, dtype=np.uint64),
          np.zeros(n + 1, dtype=np.int64), np.zeros(W, dtype=np.uint64), np.zeros(W, dtype=np.uint64),
          np.zeros(W, dtype=np.uint64), np.zeros(W, dtype=np.uint64), np.zeros(W, dtype=np.uint64),
          np.zeros(n + 2, dtype=np.int64))
    K = sc[9]
    T = sc[10]
    O = sc[11]
    slice_end = monotonic() + _SLICE
    ticks = 0
    if cnt[_C_PHASE] == 0:
        # leaves: closed neighbourhoods of at most k + 1 vertices
        for v in range(cnt[_C_POS], n):
            if not _room(st, n, k):
                cnt[_C_POS] = v
                return _GROW
            if deadline > 0 and (v & 63) == 63 and monotonic() > deadline:
                cnt[_C_POS] = v
                return TIMEOUT
            c = 0
            for w in range(W):
                K[w] = adj[v, w]
                c += popcount(K[w])
            if c + 1 > k + 1:
                continue
            _set(K, v)
            _try_pmc(K, g, st, sc)
            if cnt[_C_SOLUTION] >= 0:
                return FOUND
        cnt[_C_PHASE] = 1
        cnt[_C_CUR] = -1
    while True:
        if cnt[_C_SOLUTION] >= 0:
            return FOUND
        ticks += 1
        if (ticks & 15) == 0:
            now = monotonic()
            if deadline > 0 and now > deadline:
                return TIMEOUT
            if now > slice_end:
                return _PAUSE
        if cnt[_C_CUR] < 0:
            if cnt[_C_QHEAD] >= cnt[_C_QTAIL]:
                return EXHAUSTED
            b = queue[cnt[_C_QHEAD]]
            cnt[_C_QHEAD] += 1
            cnt[_C_CUR] = b
            cnt[_C_SUB] = 0
            cnt[_C_POS] = bk_info[b, _B_WAIT]
            bk_info[b, _B_WAIT] = -1
        b = cnt[_C_CUR]
        if cnt[_C_SUB] == 0:
            # candidates that were waiting for b
            e = cnt[_C_POS]
            while e >= 0:
                if not _room(st, n, k):
                    cnt[_C_POS] = e
                    return _GROW
                pm = wl_pm[e]
                e = wl_next[e]
                pm_info[pm, _P_MISSING] -= 1
                if pm_info[pm, _P_MISSING] == 0 and pm_info[pm, _P_STATE] == 1:
                    _endorse(pm, g, st, sc)
                    if cnt[_C_SOLUTION] >= 0:
                        return FOUND
            cnt[_C_SUB] = 1
        if cnt[_C_SUB] == 1:
            if not _room(st, n, k):
                return _GROW
            C = bk_sets[b, 0]
            S = bk_sets[b, 1]
            ssize = bk_info[b, _B_SEPSIZE]
            # the simple O-block (S, outbound(S))
            if ssize <= k:
                _component(indptr, indices, adj, S, bk_info[b, _B_OUTV], O, T, stack=sc[6])
                for w in range(W):
                    T[w] = S[w]
                _new_oblock(T, O, k, g, st, sc)
                if cnt[_C_SOLUTION] >= 0:
                    return FOUND
            t0 = monotonic()
            if cnt[_C_SIEVE]:
                cnt[_C_NQ] = _tr_query(C, S, k + 1 - ssize, n, tr, tr_root, tr_must, ob_sets, qout, sc[12], cnt)
            else:
                cnt[_C_NQ] = _ix_query(C, S, k + 1 - ssize, k, n, ob_sets, ob_info, ix_keys, ix_head, ix_ent, ix_fp,
                                       sz_head, cnt, qout, sc[12])
            cnt[_C_TQ] += np.int64((monotonic() - t0) * 1e6)
            cnt[_C_POS] = 0
            cnt[_C_SUB] = 2
        # combinations with the O-blocks found
        i = cnt[_C_POS]
        while i < cnt[_C_NQ]:
            if not _room(st, n, k):
                cnt[_C_POS] = i
                return _GROW
            t0 = monotonic()
            _combine(b, qout[i], k, g, st, sc)
            cnt[_C_TC] += np.int64((monotonic() - t0) * 1e6)
            i += 1
            if cnt[_C_SOLUTION] >= 0:
                return FOUND
            if (i & 63) == 0:
                now = monotonic()
                if (deadline > 0 and now > deadline) or now > slice_end:
                    cnt[_C_POS] = i
                    return TIMEOUT if deadline > 0 and now > deadline else _PAUSE
        cnt[_C_CUR] = -1


@njit(cache=True)
def _rehash(table, keys, nkeys, col):
    """Rebuild ``table`` (zeroed by the caller) from ``keys[:nkeys, col]``."""
    mask = np.uint64(table.shape[0] - 1)
    for j in range(nkeys):
        slot = hash_set(keys[j, col]) & mask
        while table[slot] != 0:
            slot = (slot + np.uint64(1)) & mask
        table[slot] = j + 1


@njit(cache=True)
def _rehash_rows(table, keys, nkeys):
    """Rebuild ``table`` (zeroed by the caller) from the rows ``keys[:nkeys]``."""
    mask = np.uint64(table.shape[0] - 1)
    for j in range(nkeys):
        slot = hash_set(keys[j]) & mask
        while table[slot] != 0:
            slot = (slot + np.uint64(1)) & mask
        table[slot] = j + 1


def _pow2(x):
    return 1 << max(4, int(x - 1).bit_length())


def _grown(a, rows):
    b = np.empty((rows,) + a.shape[1:], dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


class PIDSolver:
    """Decision "tw(G) <= k?" for increasing ``k`` on one connected graph.

    Parameters
    ----------
    indptr, indices : ndarray
        CSR adjacency of a connected graph (no self loops).
    max_memory : int
        Bytes the tables may grow to; a search that needs more stops with ``MEMORY``.
    capacity : int, optional
        Rows the block, candidate and O-block tables start with (default: a few times
        the number of vertices); they double when full.
    oblocks : {"auto", "sieve", "index"}
        Where the O-blocks that combine with an I-block are looked up: the sieve (a trie
        over the separators), the index (lists under pairs of separator vertices), or,
        with ``"auto"``, the sieve when ``k + 1`` is at least a tenth of the vertices and
        the index below (small separators spread over a large graph, where the sieve's
        walk strays from the answers). Chosen again for every ``k``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernels.treewidth.pid import PIDSolver, FOUND, EXHAUSTED
    >>> indptr = np.array([0, 2, 4, 6, 8, 10])  # the 5-cycle
    >>> indices = np.array([1, 4, 0, 2, 1, 3, 2, 4, 3, 0])
    >>> s = PIDSolver(indptr, indices)
    >>> s.decide(1) == EXHAUSTED, s.decide(2) == FOUND
    (True, True)
    >>> sorted(len(b) for b in s.bags()[0])
    [3, 3, 3]
    """

    _TABLES = ("bk_sets", "bk_info", "bk_table", "ob_sets", "ob_info", "ob_table", "ix_keys", "ix_head", "ix_used",
               "ix_ent", "ix_fp", "sz_head", "tr", "tr_root", "tr_must", "pm_sets", "pm_info", "pm_inb", "pm_table",
               "wl_next", "wl_pm", "queue", "qout", "cnt")

    def __init__(self, indptr, indices, max_memory=2 << 30, capacity=None, oblocks="auto"):
        if oblocks not in ("auto", "sieve", "index"):
            raise ValueError("oblocks must be 'auto', 'sieve' or 'index'")
        self.oblocks = oblocks
        self.indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        self.indices = np.ascontiguousarray(indices, dtype=np.int64)
        n = self.indptr.size - 1
        self.n = n
        W = max(1, (n + 63) // 64)
        self.W = W
        adj = np.zeros((n, W), dtype=np.uint64)
        if n:
            rows = np.repeat(np.arange(n), np.diff(self.indptr))
            cols = self.indices
            np.bitwise_or.at(adj, (rows, cols // 64), np.left_shift(np.uint64(1), (cols % 64).astype(np.uint64)))
        self.adj = adj
        self.max_memory = int(max_memory)
        capB = capP = _pow2(8 * (n + 2) if capacity is None else capacity)
        capO = _pow2(2 * (n + 2) if capacity is None else capacity)
        self.bk_sets = np.empty((capB, 2, W), dtype=np.uint64)
        self.bk_info = np.empty((capB, _B_COLS), dtype=np.int32)
        self.bk_table = np.zeros(2 * capB, dtype=np.int32)
        self.queue = np.empty(capB, dtype=np.int32)
        self.ob_sets = np.empty((capO, 2, W), dtype=np.uint64)
        self.ob_info = np.empty((capO, 2), dtype=np.int32)
        self.ob_table = np.zeros(2 * capO, dtype=np.int32)
        self.qout = np.empty(capO, dtype=np.int64)
        self.ix_keys = np.zeros(_pow2(2 * _MAXPAIRS * capO), dtype=np.int64)
        self.ix_head = np.empty(self.ix_keys.size, dtype=np.int32)
        self.ix_used = np.empty(self.ix_keys.size // 2, dtype=np.int64)
        self.ix_ent = np.empty((_MAXPAIRS * capO, _CHUNK + 2), dtype=np.int32)
        self.ix_fp = np.empty((_MAXPAIRS * capO, _CHUNK), dtype=np.uint64)
        self.sz_head = np.full(n + 2, -1, dtype=np.int32)
        self.tr = np.empty((2 * capO + _TR_STEP, _T_COLS), dtype=np.int32)
        self.tr_root = np.full(1, -1, dtype=np.int32)
        self.tr_must = np.empty((self.tr.shape[0], W), dtype=np.uint64)
        self.pm_sets = np.empty((capP, W), dtype=np.uint64)
        self.pm_info = np.empty((capP, _P_COLS), dtype=np.int32)
        self.pm_table = np.zeros(2 * capP, dtype=np.int32)
        self.pm_inb = np.empty(4 * capP, dtype=np.int32)
        self.wl_next = np.empty(4 * capP, dtype=np.int32)
        self.wl_pm = np.empty(4 * capP, dtype=np.int32)
        self.cnt = np.zeros(_C_NCOUNT, dtype=np.int64)
        self.cnt[_C_SOLUTION] = -1
        self.cnt[_C_SCANF] = 256
        self.k = None
        self.status = None
        self.sieve_forced = False  # the index outgrew the memory once: the sieve from then on

    @property
    def memory(self) -> int:
        """Bytes held by the tables."""
        return int(sum(getattr(self, name).nbytes for name in self._TABLES))

    @property
    def stats(self) -> dict:
        """Table sizes: blocks, feasible blocks (I-blocks), O-blocks, candidates tried, combinations."""
        c = self.cnt
        nb = int(c[_C_NB])
        return {"blocks": nb, "feasible": int(np.count_nonzero(self.bk_info[:nb, _B_FEASIBLE])),
                "oblocks": int(c[_C_NO]), "candidates": int(c[_C_PMCTRIED]), "combinations": int(c[_C_PLUGS]),
                "memory": self.memory, "tq": c[_C_TQ] * 1e-6, "tc": c[_C_TC] * 1e-6,
                "oblocks_tested": int(c[_C_VLEAF]), "sieve_nodes": int(c[_C_VNODE]),
                "lookup": "sieve" if c[_C_SIEVE] else "index"}

    def _grow(self):
        """Double every table that is more than half full; False when over ``max_memory``."""
        c = self.cnt
        n, k = self.n, int(self.k)
        steps = k + 2
        need_b = int(c[_C_NB]) + steps * (n + 2)
        need_p = int(c[_C_NP]) + steps
        need_in = int(c[_C_NINB]) + steps * (n + 1)
        need_w = int(c[_C_NWAIT]) + steps * (n + 1)
        need_o = int(c[_C_NO]) + 1
        need_t = int(c[_C_NTR]) + _TR_STEP
        need_e = int(c[_C_NENT]) + _MAXPAIRS + k + 2
        need_u = int(c[_C_NUSED]) + _MAXPAIRS + k + 2
        plan = {}
        if need_b > self.bk_sets.shape[0] or 2 * need_b > self.bk_table.size or need_b > self.queue.size:
            plan["b"] = _pow2(2 * need_b)
        if need_p > self.pm_sets.shape[0] or 2 * need_p > self.pm_table.size:
            plan["p"] = _pow2(2 * need_p)
        if need_in > self.pm_inb.size:
            plan["in"] = _pow2(2 * need_in)
        if need_w > self.wl_next.size:
            plan["w"] = _pow2(2 * need_w)
        if need_o > self.ob_sets.shape[0] or 2 * need_o > self.ob_table.size or need_o > self.qout.size:
            plan["o"] = _pow2(2 * need_o)
        if need_t > self.tr.shape[0]:
            plan["t"] = _pow2(2 * need_t)
        if need_e > self.ix_ent.shape[0]:
            plan["e"] = _pow2(2 * need_e)
        if 2 * need_u > self.ix_keys.size:
            plan["u"] = _pow2(4 * need_u)
        W = self.W
        extra = 0
        if "b" in plan:
            extra += (plan["b"] - self.bk_sets.shape[0]) * (16 * W + 4 * _B_COLS + 8 + 4)
        if "p" in plan:
            extra += (plan["p"] - self.pm_sets.shape[0]) * (8 * W + 4 * _P_COLS + 8)
        if "in" in plan:
            extra += (plan["in"] - self.pm_inb.size) * 4
        if "w" in plan:
            extra += (plan["w"] - self.wl_next.size) * 8
        if "o" in plan:
            extra += (plan["o"] - self.ob_sets.shape[0]) * (16 * W + 8 + 8 + 8)
        if "t" in plan:
            extra += (plan["t"] - self.tr.shape[0]) * (4 * _T_COLS + 8 * W)
        if "e" in plan:
            extra += (plan["e"] - self.ix_ent.shape[0]) * (12 * _CHUNK + 8)
        if "u" in plan:
            extra += (plan["u"] - self.ix_keys.size) * 12 + (plan["u"] // 2 - self.ix_used.size) * 8
        if self.memory + extra > self.max_memory:
            if self.oblocks == "auto" and not c[_C_SIEVE]:
                # out of memory with the pair index: the sieve holds the same O-blocks in far
                # less (its nodes, against the index's entries for pairs of separator
                # vertices), so the search goes on with it, for every later k too
                self._to_sieve()
                return self._grow()
            return False
        if "b" in plan:
            cap = plan["b"]
            self.bk_sets = _grown(self.bk_sets, cap)
            self.bk_info = _grown(self.bk_info, cap)
            self.queue = _grown(self.queue, cap)
            self.bk_table = np.zeros(2 * cap, dtype=np.int32)
            _rehash(self.bk_table, self.bk_sets, int(c[_C_NB]), 0)
        if "p" in plan:
            cap = plan["p"]
            self.pm_sets = _grown(self.pm_sets, cap)
            self.pm_info = _grown(self.pm_info, cap)
            self.pm_table = np.zeros(2 * cap, dtype=np.int32)
            _rehash_rows(self.pm_table, self.pm_sets, int(c[_C_NP]))
        if "in" in plan:
            self.pm_inb = _grown(self.pm_inb, plan["in"])
        if "w" in plan:
            self.wl_next = _grown(self.wl_next, plan["w"])
            self.wl_pm = _grown(self.wl_pm, plan["w"])
        if "o" in plan:
            cap = plan["o"]
            self.ob_sets = _grown(self.ob_sets, cap)
            self.ob_info = _grown(self.ob_info, cap)
            self.qout = _grown(self.qout, cap)
            self.ob_table = np.zeros(2 * cap, dtype=np.int32)
            _rehash(self.ob_table, self.ob_sets, int(c[_C_NO]), 0)
        if "t" in plan:
            self.tr = _grown(self.tr, plan["t"])
            self.tr_must = _grown(self.tr_must, plan["t"])
        if "e" in plan:
            self.ix_ent = _grown(self.ix_ent, plan["e"])
            self.ix_fp = _grown(self.ix_fp, plan["e"])
        if "u" in plan:
            keys = np.zeros(plan["u"], dtype=np.int64)
            head = np.empty(plan["u"], dtype=np.int32)
            _rehash_pairs(self.ix_keys, self.ix_head, keys, head, self.ix_used, int(c[_C_NUSED]))
            self.ix_keys, self.ix_head = keys, head
            self.ix_used = _grown(self.ix_used, plan["u"] // 2)
        return True

    def _to_sieve(self):
        """Move the O-blocks of this k from the pair index into the sieve and shrink the index."""
        c = self.cnt
        no = int(c[_C_NO])
        rows = _pow2(2 * no + 2 * _TR_STEP)
        self.tr = np.empty((rows, _T_COLS), dtype=np.int32)
        self.tr_must = np.empty((rows, self.W), dtype=np.uint64)
        _tr_build(self.ob_sets, no, self.n, self.tr, self.tr_root, self.tr_must, c)
        need = _MAXPAIRS + self.n + 2  # what a step may add to an empty index (k < n)
        self.ix_keys = np.zeros(_pow2(2 * need), dtype=np.int64)
        self.ix_head = np.empty(self.ix_keys.size, dtype=np.int32)
        self.ix_used = np.empty(self.ix_keys.size // 2, dtype=np.int64)
        self.ix_ent = np.empty((need, _CHUNK + 2), dtype=np.int32)
        self.ix_fp = np.empty((need, _CHUNK), dtype=np.uint64)
        c[_C_NUSED] = 0
        c[_C_NENT] = 0
        self.sz_head[:] = -1
        c[_C_SIEVE] = 1
        self.sieve_forced = True

    def decide(self, k, deadline=None):
        """Decide ``tw <= k``: FOUND, EXHAUSTED (a proof of ``tw > k``), TIMEOUT or MEMORY.

        Calls must use non-decreasing ``k``; a call after TIMEOUT with the same ``k``
        resumes the search. ``deadline``: seconds on the
        :func:`kernels.treewidth._bits.monotonic` clock (None: none).
        """
        if self.k is not None and k < self.k:
            raise ValueError("k must not decrease between calls")
        if self.n <= k + 1:
            self.k = k
            self.status = FOUND
            return FOUND
        c = self.cnt
        if self.k != k:
            # reset the O-blocks; requeue every feasible block; try the leaves again
            _clear_table(self.ob_table, self.ob_sets, int(c[_C_NO]), 0)
            c[_C_NO] = 0
            self.tr_root[:] = -1
            c[_C_NTR] = 0
            _ix_clear(self.ix_keys, self.ix_used, self.sz_head, c)
            if self.oblocks == "auto":
                c[_C_SIEVE] = int(self.sieve_forced or 10 * (k + 1) >= self.n)
            else:
                c[_C_SIEVE] = int(self.oblocks == "sieve")
            nb = int(c[_C_NB])
            feas = np.flatnonzero(self.bk_info[:nb, _B_FEASIBLE]).astype(np.int32)
            self.queue[: feas.size] = feas
            c[_C_QHEAD] = 0
            c[_C_QTAIL] = feas.size
            c[_C_PHASE] = 0
            c[_C_POS] = 0
            c[_C_CUR] = -1
            self.k = k
        g = (self.indptr, self.indices, self.adj)
        while True:
            st = tuple(getattr(self, name) for name in self._TABLES)
            r = int(pid_run(int(k), g, st, float(deadline or 0.0)))
            if r == _GROW:
                if not self._grow():
                    r = MEMORY
                else:
                    continue
            if r == _PAUSE:
                continue
            self.status = r
            return r

    def bags(self):
        """Tree decomposition of the last successful decision: ``(bags, edges)`` lists."""
        if self.status != FOUND:
            raise RuntimeError("no decomposition: the last decision did not succeed")
        from ._bits import from_bitset

        if self.n <= (self.k or 0) + 1:
            return [np.arange(self.n, dtype=np.int64)], []
        root = int(self.cnt[_C_SOLUTION])
        bags, edges = [], []
        stack = [(root, -1)]
        while stack:
            pm, parent = stack.pop()
            me = len(bags)
            bags.append(from_bitset(self.pm_sets[pm]))
            if parent >= 0:
                edges.append((parent, me))
            s, c = int(self.pm_info[pm, _P_START]), int(self.pm_info[pm, _P_COUNT])
            for b in self.pm_inb[s: s + c].tolist():
                stack.append((int(self.bk_info[b, _B_ENDORSER]), me))
        return bags, edges
