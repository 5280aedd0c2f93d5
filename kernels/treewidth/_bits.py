"""Bitset primitives shared by the treewidth kernels (Numba).

A vertex set of a graph with ``n`` vertices is a row of ``W = ceil(n / 64)`` ``uint64``
words; vertex ``v`` is bit ``v % 64`` of word ``v // 64``. The helpers here are the
building blocks of the exact solvers: population count and lowest set bit through LLVM
intrinsics, word-wise set tests, a 64-bit mixing hash for open-addressing tables, and a
monotonic clock readable from compiled code so that long loops honour deadlines without
returning to Python.
"""
from __future__ import annotations

import sys

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic

__all__ = ["popcount", "ctz", "count", "hash_set", "monotonic", "to_bitsets", "from_bitset", "CLOCK_OK"]

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLD = np.uint64(0x9E3779B97F4A7C15)


@intrinsic
def _ctpop64(typingctx, x):
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64)])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.ctpop.i64")
        return builder.call(fn, [args[0]])

    return sig, codegen


@njit(cache=True)
def popcount(x):
    """Number of set bits of a ``uint64``."""
    return np.int64(_ctpop64(np.uint64(x)))


@njit(cache=True)
def ctz(x):
    """Index of the lowest set bit of a non-zero ``uint64``."""
    return np.int64(trailing_zeros(np.uint64(x)))


@njit(cache=True)
def count(a):
    """Number of vertices in the bitset ``a``."""
    c = 0
    for w in range(a.shape[0]):
        c += popcount(a[w])
    return c


@njit(cache=True)
def _mix64(x):
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


@njit(cache=True)
def hash_set(a):
    """64-bit hash of the bitset ``a`` (splitmix finaliser over the words)."""
    h = _GOLD
    for w in range(a.shape[0]):
        h = _mix64(h ^ (a[w] + _GOLD * np.uint64(w + 1)))
    return h


# A monotonic clock inside compiled code: libc's clock_gettime through a symbol that
# LLVM resolves at load time (so the functions that call it stay cacheable). On
# platforms without it the clock reads 0 and deadlines are checked between calls only.
if sys.platform.startswith("linux") or sys.platform == "darwin":
    _CLOCK_ID = 1 if sys.platform.startswith("linux") else 6  # CLOCK_MONOTONIC
    _clock_gettime = types.ExternalFunction("clock_gettime", types.int32(types.int32, types.voidptr))
    CLOCK_OK = True

    @njit(cache=True)
    def monotonic():
        """Seconds of the monotonic clock (same origin as :func:`time.monotonic`)."""
        ts = np.zeros(2, dtype=np.int64)
        _clock_gettime(_CLOCK_ID, ts.ctypes)
        return ts[0] + ts[1] * 1e-9
else:  # pragma: no cover - exercised on other platforms only
    CLOCK_OK = False

    @njit(cache=True)
    def monotonic():
        """No clock available in compiled code on this platform: always 0."""
        return 0.0


def to_bitsets(A: np.ndarray) -> np.ndarray:
    """Boolean rows ``(r, n)`` (e.g. a dense adjacency) to ``(r, W)`` uint64 bitsets."""
    r, n = A.shape
    W = max(1, (n + 63) // 64)
    out = np.zeros((r, W), dtype=np.uint64)
    rows, cols = np.nonzero(A)
    np.bitwise_or.at(out, (rows, cols // 64), np.left_shift(np.uint64(1), (cols % 64).astype(np.uint64)))
    return out


def from_bitset(a: np.ndarray) -> np.ndarray:
    """Sorted vertex indices of the bitset ``a``."""
    bits = np.unpackbits(np.ascontiguousarray(a, dtype="<u8").view(np.uint8), bitorder="little")
    return np.flatnonzero(bits).astype(np.int64)


@njit(cache=True)
def bits_components(adj):
    """Connected components of a bitset graph: ``(count, label per vertex)``."""
    n, W = adj.shape
    label = np.full(n, -1, dtype=np.int64)
    stack = np.empty(n, dtype=np.int64)
    c = 0
    for s in range(n):
        if label[s] >= 0:
            continue
        label[s] = c
        stack[0] = s
        top = 1
        while top:
            top -= 1
            u = stack[top]
            for q in range(W):
                x = adj[u, q]
                while x:
                    v = q * 64 + ctz(x)
                    x &= x - np.uint64(1)
                    if label[v] < 0:
                        label[v] = c
                        stack[top] = v
                        top += 1
        c += 1
    return c, label


@njit(cache=True)
def bits_csr(adj):
    """CSR ``(indptr, indices)`` of a bitset graph (sorted rows)."""
    n, W = adj.shape
    indptr = np.zeros(n + 1, dtype=np.int64)
    for u in range(n):
        d = 0
        for q in range(W):
            d += popcount(adj[u, q])
        indptr[u + 1] = indptr[u] + d
    indices = np.empty(indptr[n], dtype=np.int64)
    for u in range(n):
        p = indptr[u]
        for q in range(W):
            x = adj[u, q]
            while x:
                indices[p] = q * 64 + ctz(x)
                x &= x - np.uint64(1)
                p += 1
    return indptr, indices


@njit(cache=True)
def bits_induced(adj, verts):
    """Bitset adjacency of the subgraph induced by ``verts`` (new vertex i is ``verts[i]``)."""
    n, W = adj.shape
    k = verts.shape[0]
    W2 = max(1, (k + 63) // 64)
    pos = np.full(n, -1, dtype=np.int64)
    for i in range(k):
        pos[verts[i]] = i
    out = np.zeros((k, W2), dtype=np.uint64)
    for i in range(k):
        u = verts[i]
        for q in range(W):
            x = adj[u, q]
            while x:
                v = q * 64 + ctz(x)
                x &= x - np.uint64(1)
                j = pos[v]
                if j >= 0:
                    out[i, j >> 6] |= np.uint64(1) << np.uint64(j & 63)
    return out
