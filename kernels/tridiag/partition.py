"""The partitioned (SPIKE-like) method of the GPU tridiagonal solvers: its plan of levels,
its workspace layout and its apply, shared by the scalar and the 2x2 block solver
(``kernels/cuda/tridiag.cu``), and the pivot rules both backends share.

Each level splits its rows into chunks that one thread each factorizes with precomputed
spikes; the separators of the chunks form the next level's system, down to a bottom
system solved by one thread, so each solve is a few bandwidth-bound kernel launches with
no host synchronization. Zero or tiny pivots (relative to the magnitude of their row) are
replaced by a tiny value of the same sign and reported with a warning.

References
----------
.. [1] E. Polizzi and A. H. Sameh, "A parallel hybrid banded system solver: the SPIKE
   algorithm", Parallel Computing 32(2), 2006.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np

__all__ = ["MAX_CHUNK", "LEVEL0_ALONE_BELOW", "TOP_LEVEL_CHUNKS", "SCALAR_LAYOUT", "BLOCK_LAYOUT", "eps_of",
           "warn_boosted", "first_top_level", "check_chunks", "partition_plan", "apply_views", "top_launch",
           "PartitionedGPU", "partitioned_solve"]

_EPS = {np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-13}


def eps_of(dtype):
    dt = np.dtype(dtype)
    return _EPS.get(np.dtype(dt.char.lower()) if dt.kind == "c" else dt, 1e-13)


def warn_boosted(count, n, stacklevel=4):
    if count:
        warnings.warn(
            f"tridiagonal factorization met {count} zero or tiny pivot(s) out of {n}: replaced by "
            f"+-eps times the row's magnitude (the preconditioner is only approximate there)",
            RuntimeWarning,
            stacklevel=stacklevel,
        )
#: Rows per chunk of the GPU partitioned solvers at most: a thread sweeps its chunk
#: unrolled, in registers (``MAX_CHUNK`` in tridiag.cu); longer chunks only lengthen each
#: thread's dependent chain.
MAX_CHUNK = 16
#: Blocks of 128 threads per SM below which the GPU factorization runs level 0's chunks (of
#: at most 8 rows) in a kernel of its own (``tridiag.cu``'s ``factor_level0``, without the
#: upper levels' code and its registers) before the rest: the whole factorization in
#: float64 holds 2 blocks per SM, its level 0 alone 4.
LEVEL0_ALONE_BELOW = 3


#: The apply solves the levels above level 0 of at most this many chunks (the top levels)
#: and the bottom in one block of as many threads, one launch of ``tridiag.cu``'s
#: ``top_solve`` with block barriers, instead of two launches per level and direction and
#: the bottom's.
TOP_LEVEL_CHUNKS = 256


def first_top_level(levels) -> int:
    """The first top level of a partitioned plan's ``levels`` (see ``TOP_LEVEL_CHUNKS``;
    never level 0, which reads and writes through the permutation), or their number."""
    return next((k for k in range(1, len(levels)) if levels[k][2] <= TOP_LEVEL_CHUNKS), len(levels))


def check_chunks(**sizes):
    """Raises ``ValueError`` for a chunk size (keyword: its parameter's name) outside
    [2, ``MAX_CHUNK``]."""
    for name, size in sizes.items():
        if not 2 <= size <= MAX_CHUNK:
            raise ValueError(f"{name} must be in [2, {MAX_CHUNK}], got {size}")


def _align(k):
    """Workspace arrays start on a multiple of 32 values (``ws_align`` in tridiag.cu)."""
    return -(-k // 32) * 32


# The workspace layouts of the partitioned GPU solvers, in the order of the CUDA twins
# (``level_at`` / ``bottom_at`` in tridiag.cu): per level the interior arrays ((C - 1) P
# rows each) and the separator arrays (P rows each), then the bottom's (m rows each), as
# (name, values per row). ra, rb, rc: the next level's coefficients; L (bottom): its
# subdiagonal; S: the separators' solution.
SCALAR_LAYOUT = ((("inv", 1), ("cp", 1), ("lint", 1), ("v", 1), ("w", 1), ("y", 1)),
                  (("sep_b", 1), ("g", 1), ("S", 1), ("sep_lo", 1), ("sep_hi", 1), ("ra", 1), ("rb", 1), ("rc", 1)),
                  (("L", 1), ("inv", 1), ("cp", 1)))
BLOCK_LAYOUT = ((("inv", 4), ("cp", 4), ("lint", 4), ("v", 4), ("w", 4), ("y", 2)),
                 (("sep_b", 2), ("g", 2), ("S", 2), ("sep_lo", 4), ("sep_hi", 4), ("ra", 4), ("rb", 4), ("rc", 4)),
                 (("L", 4), ("inv", 4), ("cp", 4), ("x", 2)))


@functools.lru_cache(maxsize=64)
def partition_plan(n, chunk, upper_chunk, bottom, layout):
    """Levels of the partitioned method for ``n`` rows (chunks of ``chunk`` rows at level 0,
    ``upper_chunk`` above, down to ``bottom`` rows) and their arrays in one workspace.
    Returns the levels as ``(N, C, P, arrays)``, the bottom as ``(m, arrays)`` (``arrays``:
    name -> ``(offset, length)`` in values) and the workspace length. Cached (the caller
    must not change it): a set-up repeated on one size plans once."""
    def place(names, rows, base):
        arrays = {}
        for name, per_row in names:
            arrays[name] = (base, per_row * rows)
            base += _align(per_row * rows)
        return arrays, base

    interior, separator, last = layout
    levels, base, N = [], 0, n
    while N > bottom:
        C = upper_chunk if levels else chunk
        P = -(-N // C)
        arrays, base = place(interior, (C - 1) * P, base)
        separators, base = place(separator, P, base)
        levels.append((N, C, P, {**arrays, **separators}))
        N = P
    arrays, base = place(last, N, base)
    return tuple(levels), (N, arrays), base


_FACTOR_ONLY = ("ra", "rb", "rc")  # read by the factorization alone


def apply_views(work, plan, itype):
    """The apply's arguments, made at the first solve from the set-up's ``plan`` (levels,
    bottom): views of the workspace, as ``(P, C, N, blocks, arrays)`` per level and ``(m,
    arrays)``. CuPy passes an array to a kernel in less host time than a raw address, but some
    60 views of a 5-level system cost a set-up noticeable host time, so the first solve
    makes them, once."""
    def views(arrays):
        return {name: work[o:o + length] for name, (o, length) in arrays.items() if name not in _FACTOR_ONLY}

    levels, (m, bottom) = plan
    return ([(itype(P), np.int32(C), itype(N), ((P + 127) // 128,), views(arrays)) for N, C, P, arrays in levels],
            (itype(m), views(bottom)))


def top_launch(work, plan, itype):
    """The arguments of the scalar apply's ``top_solve`` launch (see ``TOP_LEVEL_CHUNKS``)
    for a plan with levels: ``(first top level, arguments)``."""
    levels, _ = plan
    first = first_top_level(levels)
    upper = levels[1][1] if len(levels) > 1 else levels[0][1]
    return first, (itype(levels[0][0]), np.int32(levels[0][1]), np.int32(upper), np.int32(first),
                   np.int32(len(levels)), work)


class PartitionedGPU:
    """The GPU apply's arguments of a partitioned solver, made at its first solve from
    its ``work``, ``_plan`` and ``_itype`` (see :func:`apply_views`)."""

    @functools.cached_property
    def _launches(self):
        return apply_views(self.work, self._plan, self._itype)


def partitioned_solve(kernels, prefix, levels, bottom, x, gather, out, top=None):
    """The apply of the partitioned method into ``out`` (``prefix`` "" scalar, "block_" 2x2):
    forward over the chunk interiors level by level (level 0 reads ``x`` through
    ``gather``, level l > 0 the separator right-hand side g of level l - 1), the bottom
    Thomas solve into the deepest separators, then the interiors back down (level l > 0
    into the separators S of level l - 1, level 0 through ``gather`` into ``out``).
    ``top`` (scalar): :func:`top_launch`'s, whose one launch does the top levels and the
    bottom."""
    threads = (128,)
    rhs, index = x, gather
    below = top[0] if top is not None else len(levels)
    for P, C, N, blocks, a in levels[:below]:
        kernels[prefix + "chunk_forward"](blocks, threads, (P, C, N, rhs, index, a["inv"], a["cp"], a["lint"], a["y"],
                                                            a["sep_b"]))
        kernels[prefix + "reduced_rhs"](blocks, threads, (P, C, a["sep_lo"], a["sep_hi"], a["y"], a["sep_b"], a["g"]))
        rhs, index = a["g"], None
    if top is not None:
        kernels["top_solve"]((1,), (TOP_LEVEL_CHUNKS,), top[1])
    else:
        m, b = bottom
        deepest = levels[-1][4]
        kernels[prefix + "thomas_solve"]((1,), (1,), (m, b["L"], b["inv"], b["cp"], deepest["g"], deepest["S"]))
    for depth in range(below - 1, -1, -1):
        P, C, N, blocks, a = levels[depth]
        target, index = (out, gather) if depth == 0 else (levels[depth - 1][4]["S"], None)
        kernels[prefix + "chunk_back"](blocks, threads, (P, C, N, a["y"], a["v"], a["w"], a["S"], index, target))
    return out
