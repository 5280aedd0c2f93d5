"""Graphs from edge lists: a simple symmetric CSR from endpoint arrays, and R-MAT edge
sampling (Numba), for the graph generators of :mod:`graphkit.generators`."""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["csr_from_edges", "rmat_edges"]


@njit(cache=True)
def _csr_from_edges_cpu(n, u, v):
    deg = np.zeros(n + 1, dtype=np.int64)
    for i in range(len(u)):
        if u[i] != v[i]:
            deg[u[i] + 1] += 1
            deg[v[i] + 1] += 1
    for i in range(n):
        deg[i + 1] += deg[i]
    pos = deg[:-1].copy()
    cols = np.empty(deg[n], dtype=np.int64)
    for i in range(len(u)):
        a, b = u[i], v[i]
        if a != b:
            cols[pos[a]] = b
            pos[a] += 1
            cols[pos[b]] = a
            pos[b] += 1
    indptr = np.zeros(n + 1, dtype=np.int64)
    w = 0
    for r in range(n):
        lo, hi = deg[r], deg[r + 1]
        if hi - lo > 24:
            cols[lo:hi].sort()
        else:  # insertion sort: most rows are short
            for i in range(lo + 1, hi):
                x = cols[i]
                j = i - 1
                while j >= lo and cols[j] > x:
                    cols[j + 1] = cols[j]
                    j -= 1
                cols[j + 1] = x
        last = -1
        for i in range(lo, hi):  # drop duplicates, compact in place (w <= i)
            if cols[i] != last:
                last = cols[i]
                cols[w] = last
                w += 1
        indptr[r + 1] = w
    return indptr, cols[:w]


def csr_from_edges(n, u, v):
    """Symmetric CSR ``(indptr, indices)`` (int64, sorted rows) of the simple graph with edges
    ``{u[i], v[i]}``: self-loops and duplicates dropped. O(n + m) counting sort (Numba).
    Endpoints must lie in ``0..n-1`` (not checked here).

    Examples
    --------
    >>> import numpy as np
    >>> indptr, indices = csr_from_edges(3, np.array([0, 1, 1]), np.array([1, 0, 2]))
    >>> indptr.tolist(), indices.tolist()
    ([0, 1, 3, 4], [1, 0, 2, 1])
    """
    return _csr_from_edges_cpu(int(n), np.ascontiguousarray(u), np.ascontiguousarray(v))


@njit(cache=True, inline="always")
def _splitmix64(x):
    x = x + np.uint64(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def _rmat_edges(scale, m, ta, tab, tabc, seed):
    u = np.empty(m, dtype=np.int64)
    v = np.empty(m, dtype=np.int64)
    base = _splitmix64(np.uint64(seed))
    for i in range(m):
        x = 0
        y = 0
        r = np.uint64(0)
        for bit in range(scale):
            if bit % 4 == 0:  # four 16-bit draws per 64-bit hash
                r = _splitmix64(base ^ _splitmix64(np.uint64(i) * np.uint64(8) + np.uint64(bit // 4)))
            q = r & np.uint64(0xFFFF)
            r = r >> np.uint64(16)
            down = q >= tab  # quadrants c, d: row bit set
            right = (q >= tabc) or (q >= ta and not down)  # quadrants b, d: column bit set
            x |= np.int64(down) << bit
            y |= np.int64(right) << bit
        u[i] = x
        v[i] = y
    return u, v


def rmat_edges(scale, m, a, b, c, seed=0):
    """``m`` R-MAT edge endpoints in ``0..2**scale-1`` (probabilities quantized to 1/65536)."""
    t = [np.uint64(min(65536, round(p * 65536))) for p in (a, a + b, a + b + c)]
    return _rmat_edges(int(scale), int(m), t[0], t[1], t[2], np.uint64(seed))

