"""Tridiagonal solvers: factorize once, solve many times (CPU and GPU).

A system is given by its sub-, main and superdiagonal ``dl, d, du`` (``dl[0]`` and
``du[-1]`` are ignored). Independent systems (the paths of a linear forest) are simply
concatenated with zero couplings between them. An optional permutation ``perm`` (new ->
old) folds the reordering into the solve: ``solve(x)`` returns ``y`` with
``y[perm] = T^{-1} x[perm]``.

CPU: Thomas algorithm in Numba. GPU: a partitioned (SPIKE-like) method with precomputed
chunk factorizations and spikes, recursive on the separator system, so each solve is a
few bandwidth-bound kernel launches with no host synchronization
(``kernels/cuda/tridiag.cu``). Zero or tiny pivots (relative to the magnitude of
their row) are replaced by a tiny value of the same sign and reported with a warning.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np
from numba import njit, prange

from .backend import PinnedOutput, get_array_module, inverse_permutation, is_device_array, small_zeros, to_host

__all__ = ["TridiagonalSolver", "tridiagonal_solve", "BlockTridiagonalSolver", "extract_tridiagonal", "partner_entries",
           "extract_block_tridiagonal"]

_EPS = {np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-13}


def _eps(dtype):
    dt = np.dtype(dtype)
    return _EPS.get(np.dtype(dt.char.lower()) if dt.kind == "c" else dt, 1e-13)


@njit(cache=True)
def _thomas_factor(dl, d, du, eps):
    """Thomas factorization; a pivot is tiny when |den| <= eps * (|dl| + |d| + |du|) of its row.
    Also counts the boosted pivots, the pivots and diagonal entries of negative (real part)."""
    n = len(d)
    inv_den = np.empty_like(d)
    cp = np.empty_like(d)
    prev = d[0] * 0
    boosted = negative = negative_diag = 0
    for i in range(n):
        a = dl[i] if i > 0 else d[0] * 0
        den = d[i] - a * prev
        local = abs(d[i]) + abs(a) + (abs(du[i]) if i < n - 1 else 0.0)
        tiny = eps * (local if local > 0 else 1.0)
        if abs(den) <= tiny:
            boosted += 1
            den = -tiny if den.real < 0 else tiny
        negative += den.real < 0
        negative_diag += d[i].real < 0
        inv_den[i] = 1 / den
        prev = (du[i] * inv_den[i]) if i < n - 1 else 0 * prev
        cp[i] = prev
    return inv_den, cp, (boosted, negative, negative_diag)


@njit(cache=True)
def _thomas_solve(dl, inv_den, cp, perm, x, out):
    """Solve with a precomputed factorization; rhs gathered through perm, result scattered."""
    n = len(inv_den)
    z = np.empty(n, dtype=out.dtype)
    prev = z[0] * 0
    for i in range(n):
        b = x[perm[i]] if len(perm) else x[i]
        prev = (b - (dl[i] * prev if i > 0 else 0)) * inv_den[i]
        z[i] = prev
    nxt = z[0] * 0
    for i in range(n - 1, -1, -1):
        nxt = z[i] - cp[i] * nxt
        if len(perm):
            out[perm[i]] = nxt
        else:
            out[i] = nxt


def _warn_boosted(count, n, stacklevel=4):
    if count:
        warnings.warn(
            f"tridiagonal factorization met {count} zero or tiny pivot(s) out of {n}: replaced by "
            f"+-eps times the row's magnitude (the preconditioner is only approximate there)",
            RuntimeWarning,
            stacklevel=stacklevel,
        )


#: Rows per chunk of the GPU partitioned solvers at most: a thread sweeps its chunk
#: unrolled, in registers (``MAX_CHUNK`` in tridiag.cu). Longer chunks only lengthen each
#: thread's dependent chain (H100, 6.25M rows, chunks swept row by row: the apply was 21%
#: faster at the default 8 / 16 than at 32 / 32; BENCHMARKS.md).
MAX_CHUNK = 16
#: Blocks of 128 threads per SM below which the GPU factorization runs level 0's chunks (of
#: at most 8 rows) in a kernel of its own (``tridiag.cu``'s ``factor_level0``, without the
#: upper levels' code and its registers) before the rest: the whole factorization in
#: float64 holds 2 blocks per SM, its level 0 alone 4. H100, the factorization of
#: AlgTriScal's set-up (us, Nsight Compute, together / apart): random_diffusion2d float32
#: 143 / 149, float64 210 / 188; ANISO2 float64 495 / 464, ANISO1 float64 335 / 342
#: (float32 holds 3 blocks per SM: kept together).
LEVEL0_ALONE_BELOW = 3


#: The apply solves the levels above level 0 of at most this many chunks (the top levels:
#: two of the five at 2.9-6.25M rows) and the bottom in one block of as many threads, one
#: launch of ``tridiag.cu``'s ``top_solve`` with block barriers, instead of two launches
#: per level and direction and the bottom's. H100, AlgTriScal apply (us, level by level /
#: top_solve): random_diffusion2d float32 153.8 / 149.3, ANISO2 float32 318.9-322.6 / 318.4,
#: convection_diffusion3d float64 183.2 / 177.0. (Not kept: the factorization's top levels
#: in block 0 alone, with block barriers instead of grid-wide ones, saved its set-up nothing,
#: and the 2x2 block apply's, in one block too, moved AlgTriBlock's apply by -3 to +4 us.)
TOP_LEVEL_CHUNKS = 256


def _first_top_level(levels) -> int:
    """The first top level of a partitioned plan's ``levels`` (see ``TOP_LEVEL_CHUNKS``;
    never level 0, which reads and writes through the permutation), or their number."""
    return next((k for k in range(1, len(levels)) if levels[k][2] <= TOP_LEVEL_CHUNKS), len(levels))


def _check_chunks(**sizes):
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
_SCALAR_LAYOUT = ((("inv", 1), ("cp", 1), ("lint", 1), ("v", 1), ("w", 1), ("y", 1)),
                  (("sep_b", 1), ("g", 1), ("S", 1), ("sep_lo", 1), ("sep_hi", 1), ("ra", 1), ("rb", 1), ("rc", 1)),
                  (("L", 1), ("inv", 1), ("cp", 1)))
_BLOCK_LAYOUT = ((("inv", 4), ("cp", 4), ("lint", 4), ("v", 4), ("w", 4), ("y", 2)),
                 (("sep_b", 2), ("g", 2), ("S", 2), ("sep_lo", 4), ("sep_hi", 4), ("ra", 4), ("rb", 4), ("rc", 4)),
                 (("L", 4), ("inv", 4), ("cp", 4), ("x", 2)))


@functools.lru_cache(maxsize=64)
def _partition_plan(n, chunk, upper_chunk, bottom, layout):
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


def _apply_views(work, plan, itype):
    """The apply's arguments, made at the first solve from the set-up's ``plan`` (levels,
    bottom): views of the workspace, as ``(P, C, N, blocks, arrays)`` per level and ``(m,
    arrays)``. CuPy passes an array to a kernel in less host time than a raw address (H100,
    250k rows: an apply 10-15% slower with addresses), but some 60 views of a 5-level
    system cost the set-up about 0.1 ms of host time on the 2.7-2.9M-row stand-ins, so the
    first solve makes them, once."""
    def views(arrays):
        return {name: work[o:o + length] for name, (o, length) in arrays.items() if name not in _FACTOR_ONLY}

    levels, (m, bottom) = plan
    return ([(itype(P), np.int32(C), itype(N), ((P + 127) // 128,), views(arrays)) for N, C, P, arrays in levels],
            (itype(m), views(bottom)))


def _top_launch(work, plan, itype):
    """The arguments of the scalar apply's ``top_solve`` launch (see ``TOP_LEVEL_CHUNKS``)
    for a plan with levels: ``(first top level, arguments)``."""
    levels, _ = plan
    first = _first_top_level(levels)
    upper = levels[1][1] if len(levels) > 1 else levels[0][1]
    return first, (itype(levels[0][0]), np.int32(levels[0][1]), np.int32(upper), np.int32(first),
                   np.int32(len(levels)), work)


class _PartitionedGPU:
    """The GPU apply's arguments of a partitioned solver, made at its first solve from
    its ``work``, ``_plan`` and ``_itype`` (see :func:`_apply_views`)."""

    @functools.cached_property
    def _launches(self):
        return _apply_views(self.work, self._plan, self._itype)


def _partitioned_solve(kernels, prefix, levels, bottom, x, gather, out, top=None):
    """The apply of the partitioned method into ``out`` (``prefix`` "" scalar, "block_" 2x2):
    forward over the chunk interiors level by level (level 0 reads ``x`` through
    ``gather``, level l > 0 the separator right-hand side g of level l - 1), the bottom
    Thomas solve into the deepest separators, then the interiors back down (level l > 0
    into the separators S of level l - 1, level 0 through ``gather`` into ``out``).
    ``top`` (scalar): :func:`_top_launch`'s, whose one launch does the top levels and the
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


class TridiagonalSolver(_PartitionedGPU):
    """Factorization of a (possibly permuted) tridiagonal system for repeated solves.

    Parameters
    ----------
    dl, d, du : arrays (NumPy or CuPy) of length N
        Sub-, main and superdiagonal in the system's order.
    perm : int array, optional
        New -> old permutation folded into :meth:`solve`.
    chunk, upper_chunk : int
        GPU chunk sizes (rows per thread, 2 to ``MAX_CHUNK`` = 16) of the partitioned
        method: of the first level and of the separator systems above it. Short chunks
        give more threads and shorter dependent chains (H100, 6.25M rows: apply 21% faster
        on average over ten matrix / precision pairs at 8 / 16 than at 32 / 32; see
        BENCHMARKS.md).

    Attributes
    ----------
    boosted : int
        Zero or tiny pivots replaced by a small value of the same sign (with a warning).
    negative_pivots, negative_diagonal : int
        Pivots, and diagonal entries, with a negative real part. For a symmetric system
        ``negative_pivots`` is its number of negative eigenvalues (Sylvester's law of
        inertia; on the GPU summed over the partitioned method's Schur complements), so a
        symmetric system whose diagonal is positive is definite exactly when it is 0.

    Examples
    --------
    >>> import numpy as np
    >>> s = TridiagonalSolver(np.full(4, -1.0), np.full(4, 4.0), np.full(4, -1.0))
    >>> np.round(s.solve(np.ones(4)), 4)
    array([0.3636, 0.4545, 0.4545, 0.3636])
    >>> s.negative_pivots
    0
    """

    bottom_size = 64

    def __init__(self, dl, d, du, perm=None, *, chunk=8, upper_chunk=16):
        xp = get_array_module(d)
        self.xp = xp
        self.n = n = len(d)
        if not (len(dl) == len(du) == n):
            raise ValueError("dl, d and du must have the same length")
        if n == 0:
            raise ValueError("empty tridiagonal system")
        _check_chunks(chunk=chunk, upper_chunk=upper_chunk)
        self.dtype = np.dtype(d.dtype)
        self._factorize(dl, d, du, perm, chunk, upper_chunk)

    @classmethod
    def from_forest(cls, A, perm, partners, *, entries=None, factor_entries=None, chunk=8, upper_chunk=16,
                    wait=True):
        """The system of :func:`extract_tridiagonal` with ``partners`` (a linear forest's in
        its order ``perm``, or its [0,2]-factor's), factorized for solves through ``perm``.
        ``wait=False`` returns once the factorization is queued: the pivot counts are then
        read (and a boosted pivot warned about) by :meth:`finish` or at their first access.

        On the GPU the factorization gathers the coefficients itself (each chunk of rows its
        own, with :func:`extract_tridiagonal`'s gathers), so no arrays of them are written
        and read back (H100, gather and factorization of AlgTriScal's set-up: 183 -> 172 us
        on random_diffusion2d float32 at 2.9M rows, 261 -> 242 in float64, 451 -> 376 on
        ANISO2 float32 at 6.25M). Elsewhere, and for systems of at most ``bottom_size``
        rows, it extracts them first."""
        if partners is None:
            raise ValueError("from_forest needs the partners of a linear forest or of its [0,2]-factor")
        xp = get_array_module(A)
        A = A.tocsr()
        if xp is np or A.shape[0] <= cls.bottom_size:
            dl, d, du = extract_tridiagonal(A, perm, partners, entries=entries, factor_entries=factor_entries)
            return cls(dl, d, du, perm, chunk=chunk, upper_chunk=upper_chunk)
        _check_chunks(chunk=chunk, upper_chunk=upper_chunk)
        if perm is None:  # before _forest_system, which may queue a pass over A
            raise ValueError("from_forest needs the forest's order perm")
        perm, system, vt, itype = _forest_system(A, perm, partners, entries, factor_entries)
        self = cls.__new__(cls)
        self.xp, self.n, self.dtype = xp, A.shape[0], vt
        self._factorize(None, None, None, perm, chunk, upper_chunk, system=system, itype=itype, wait=wait)
        return self

    def _factorize(self, dl, d, du, perm, chunk, upper_chunk, system=None, itype=None, wait=True):
        if self.xp is np:
            self.perm = np.ascontiguousarray(perm, dtype=np.int64) if perm is not None else np.zeros(0, np.int64)
            self.dl = np.ascontiguousarray(dl, dtype=self.dtype)
            self.inv_den, self.cp, counts = _thomas_factor(
                self.dl, np.ascontiguousarray(d, dtype=self.dtype), np.ascontiguousarray(du, dtype=self.dtype),
                _eps(self.dtype))
            self._read_counts = lambda: counts
        else:
            self._read_counts = self._setup_gpu(dl, d, du, perm, chunk, upper_chunk, system, itype).get
        self._counts = None
        if wait:
            self.finish()

    def finish(self):
        """Waits for the factorization and reads its pivot counts (warning when pivots were
        boosted); returns the solver. Only a ``from_forest(..., wait=False)`` set-up leaves
        this to be done (its caller's host work then overlaps the factorization)."""
        if self._counts is None:
            # the reader (on the GPU a PinnedOutput: an event and pinned memory) is released
            # with the solver: its release here, after the set-up's last wait, lengthened the
            # AlgTriScal set-up's wall by 6-10 us (H100, random_diffusion2d float32)
            self._counts = tuple(int(c) for c in self._read_counts())
            _warn_boosted(self._counts[0], self.n, stacklevel=5)
        return self

    @property
    def boosted(self) -> int:
        return self.finish()._counts[0]

    @property
    def negative_pivots(self) -> int:
        return self.finish()._counts[1]

    @property
    def negative_diagonal(self) -> int:
        return self.finish()._counts[2]

    # -------------------------------------------------------------- GPU setup
    def _setup_gpu(self, dl, d, du, perm, chunk, upper_chunk, system=None, itype=None):
        """All levels factorized by one cooperative launch into one workspace; returns the
        counts as a :class:`kernels.backend.PinnedOutput` that the launch writes (their read
        is the set-up's one host synchronization). ``system``: level 0 is a linear
        forest's (``tridiag.cu``'s ``ForestSystem`` arguments; with levels only), of index
        type ``itype``."""
        import cupy

        from .cuda import blocks_per_sm, get_kernel, launch_cooperative, row_grid

        vt = self.dtype
        if vt.kind == "c":
            raise TypeError("complex tridiagonal systems are supported on the CPU only")
        levels, bottom, size = _partition_plan(self.n, chunk, upper_chunk, self.bottom_size, _SCALAR_LAYOUT)
        if itype is None:
            itype = np.int32 if self.n < np.iinfo(np.int32).max // 2 else np.int64
        itype = np.dtype(itype).type
        self.kernels = {k: get_kernel("tridiag", k, vt, itype)
                        for k in ("chunk_forward", "reduced_rhs", "chunk_back", "thomas_solve", "top_solve")}
        self.work = work = cupy.empty(size, vt)
        stats = small_zeros(cupy, 3, np.uint64)
        self.perm_t = None
        if perm is not None:
            perm = cupy.ascontiguousarray(perm, dtype=itype)
            # with levels: the level-0 gather/scatter index in the interleaved layout
            self.perm_t = cupy.empty(levels[0][2] * chunk, itype) if levels else perm
        if system is None:
            dl, d, du = (cupy.ascontiguousarray(a, dtype=vt) for a in (dl, d, du))  # no copy when already so
            system = (None,) * 5
        threads = 128
        factor = get_kernel("tridiag", "partitioned_factor", vt, itype)
        sizes = (itype(self.n), np.int32(chunk), np.int32(upper_chunk))
        level0 = (dl, d, du, work, perm if levels else None, self.perm_t if levels else None, stats, *system)
        apart = bool(levels) and chunk <= 8 and blocks_per_sm(factor, threads) < LEVEL0_ALONE_BELOW
        if apart:
            get_kernel("tridiag", "factor_level0", vt, itype)((row_grid(levels[0][2], threads),), (threads,),
                                                              (*sizes, *level0))
        counts = PinnedOutput(3, np.uint64)
        launch_cooperative(factor, levels[0][2] if levels else 1, threads,
                           (*sizes, np.int32(len(levels)), *level0, np.int32(apart), counts.pointer))
        counts.ready()
        self._plan, self._itype = (levels, bottom), itype
        return counts

    @functools.cached_property
    def _top(self):
        """The scalar apply's ``top_solve`` launch, made at its first solve."""
        return _top_launch(self.work, self._plan, self._itype)

    def _solve_gpu(self, x):
        import cupy

        out = cupy.empty(self.n, dtype=self.dtype)
        levels, (m, bottom) = self._launches
        if levels:
            return _partitioned_solve(self.kernels, "", levels, (m, bottom), x, self.perm_t, out, self._top)
        # small system: Thomas directly, with the permutation applied around it
        b = x[self.perm_t] if self.perm_t is not None else x
        xb = cupy.empty(self.n, dtype=self.dtype)
        self.kernels["thomas_solve"]((1,), (1,), (m, bottom["L"], bottom["inv"], bottom["cp"], b, xb))
        if self.perm_t is not None:
            out[self.perm_t] = xb
        else:
            out[...] = xb
        return out

    # ------------------------------------------------------------------ solve
    def solve(self, x):
        """Return ``T^{-1} x`` (through the permutation, if any) as a new array."""
        if get_array_module(x) is not self.xp:
            raise TypeError("right-hand side and solver live on different devices")
        if x.shape[0] != self.n:
            raise ValueError(f"right-hand side of length {x.shape[0]} for a system of size {self.n}")
        if x.ndim == 2:
            return self.xp.stack([self.solve(x[:, k]) for k in range(x.shape[1])], axis=1)
        if self.xp is np:
            out = np.empty(self.n, dtype=np.result_type(self.dtype, x.dtype))
            _thomas_solve(self.dl, self.inv_den, self.cp, self.perm, np.ascontiguousarray(x), out)
            return out
        return self._solve_gpu(self.xp.ascontiguousarray(x, dtype=self.dtype))


def tridiagonal_solve(dl, d, du, b, *, chunk=8, upper_chunk=16):
    """Solve tridiagonal systems (NumPy or CuPy); CuPy has no public tridiagonal solver.

    Parameters
    ----------
    dl, d, du : arrays of shape (n,) for one system or (batch, n) for independent systems
        ``dl[..., 0]`` and ``du[..., -1]`` are ignored.
    b : array of shape (n,), (n, k) (several right-hand sides) or (batch, n)
    chunk, upper_chunk : int
        GPU chunk sizes, as for :class:`TridiagonalSolver`.

    Examples
    --------
    >>> import numpy as np
    >>> d = np.array([[2.0, 2.0], [4.0, 4.0]])
    >>> off = np.array([[1.0, 1.0], [1.0, 1.0]])
    >>> tridiagonal_solve(off, d, off, np.array([[3.0, 3.0], [5.0, 5.0]]))
    array([[1., 1.],
           [1., 1.]])
    """
    if d.ndim == 2:
        batch, n = d.shape
        if b.shape != d.shape:
            raise ValueError(f"batched right-hand side must have shape {d.shape}, got {b.shape}")
        dl2, du2 = dl.copy(), du.copy()
        dl2[:, 0] = 0
        du2[:, -1] = 0
        solver = TridiagonalSolver(dl2.ravel(), d.ravel(), du2.ravel(), chunk=chunk, upper_chunk=upper_chunk)
        return solver.solve(b.ravel()).reshape(batch, n)
    return TridiagonalSolver(dl, d, du, chunk=chunk, upper_chunk=upper_chunk).solve(b)


@njit(cache=True)
def _negative_eigenvalues(a00, a01, a10, a11):
    """Eigenvalues of a real 2x2 block with a negative real part (twin of ``m2_negative``)."""
    det, tr = a00 * a11 - a01 * a10, a00 + a11
    if det < 0:
        return 1
    if tr >= 0:
        return 0
    return 2 if det > 0 else 1


@njit(cache=True, inline="always")
def _abs_sum(B, i):
    """Sum of |entries| of the 2x2 block ``B[i]`` (twin of ``m2_abs``), without a temporary."""
    return abs(B[i, 0, 0]) + abs(B[i, 0, 1]) + abs(B[i, 1, 0]) + abs(B[i, 1, 1])


@njit(cache=True)
def _block_factor(L, D, U, eps):
    """Block Thomas for 2x2 blocks (L, D, U of shape (m, 2, 2)): inverse pivots and C', and
    the counts of :class:`TridiagonalSolver` (eigenvalues of the pivot and diagonal blocks).
    A pivot block is tiny when |det| <= eps * s^2, s the magnitude of its block row (the
    sum of |entries| of L_i, D_i, U_i; 1 for a zero row), as on the GPU
    (``m2_inverse_boosted``): it is boosted on its diagonal by eps * s, then its
    off-diagonal dropped if still singular."""
    m = D.shape[0]
    inv = np.empty_like(D)
    cp = np.zeros_like(D)
    boosted = negative = negative_diag = 0
    p00 = p01 = p10 = p11 = D[0, 0, 0] * 0
    for i in range(m):
        a00, a01, a10, a11 = D[i, 0, 0], D[i, 0, 1], D[i, 1, 0], D[i, 1, 1]
        if i > 0:  # D_i - L_i C'_{i-1}
            l00, l01, l10, l11 = L[i, 0, 0], L[i, 0, 1], L[i, 1, 0], L[i, 1, 1]
            a00 -= l00 * p00 + l01 * p10
            a01 -= l00 * p01 + l01 * p11
            a10 -= l10 * p00 + l11 * p10
            a11 -= l10 * p01 + l11 * p11
        local = _abs_sum(D, i) + (_abs_sum(L, i) if i > 0 else 0.0) + (_abs_sum(U, i) if i < m - 1 else 0.0)
        scale = local if local > 0 else 1.0
        tiny = eps * scale * scale
        det = a00 * a11 - a01 * a10
        if abs(det) <= tiny:
            boosted += 1
            a00 += eps * scale
            a11 += eps * scale
            det = a00 * a11 - a01 * a10
            if abs(det) <= tiny:
                a01 = a10 = a00 * 0
                det = a00 * a11
        negative += _negative_eigenvalues(a00.real, a01.real, a10.real, a11.real)
        negative_diag += _negative_eigenvalues(D[i, 0, 0].real, D[i, 0, 1].real, D[i, 1, 0].real, D[i, 1, 1].real)
        i00, i01, i10, i11 = a11 / det, -a01 / det, -a10 / det, a00 / det
        inv[i, 0, 0], inv[i, 0, 1], inv[i, 1, 0], inv[i, 1, 1] = i00, i01, i10, i11
        if i < m - 1:
            u00, u01, u10, u11 = U[i, 0, 0], U[i, 0, 1], U[i, 1, 0], U[i, 1, 1]
            p00, p01 = i00 * u00 + i01 * u10, i00 * u01 + i01 * u11
            p10, p11 = i10 * u00 + i11 * u10, i10 * u01 + i11 * u11
            cp[i, 0, 0], cp[i, 0, 1], cp[i, 1, 0], cp[i, 1, 1] = p00, p01, p10, p11
    return inv, cp, (boosted, negative, negative_diag)


@njit(cache=True)
def _block_solve(L, inv, cp, idx, x, out):
    """Block Thomas solve; unknown (i, s) is x[idx[i, s]] (idx < 0: ghost, rhs 1, dropped)."""
    m = inv.shape[0]
    z = np.empty((m, 2), dtype=out.dtype)
    z0 = z1 = out.dtype.type(0)
    for i in range(m):
        b0 = x[idx[i, 0]] if idx[i, 0] >= 0 else 1
        b1 = x[idx[i, 1]] if idx[i, 1] >= 0 else 1
        if i > 0:
            b0, b1 = b0 - (L[i, 0, 0] * z0 + L[i, 0, 1] * z1), b1 - (L[i, 1, 0] * z0 + L[i, 1, 1] * z1)
        z0 = inv[i, 0, 0] * b0 + inv[i, 0, 1] * b1
        z1 = inv[i, 1, 0] * b0 + inv[i, 1, 1] * b1
        z[i, 0], z[i, 1] = z0, z1
    n0 = n1 = out.dtype.type(0)
    for i in range(m - 1, -1, -1):
        n0, n1 = z[i, 0] - (cp[i, 0, 0] * n0 + cp[i, 0, 1] * n1), z[i, 1] - (cp[i, 1, 0] * n0 + cp[i, 1, 1] * n1)
        if idx[i, 0] >= 0:
            out[idx[i, 0]] = n0
        if idx[i, 1] >= 0:
            out[idx[i, 1]] = n1


class BlockTridiagonalSolver(_PartitionedGPU):
    """2x2 block tridiagonal system, factorized once for repeated solves.

    ``L, D, U`` have shape ``(m, 2, 2)`` (block row ``k``: ``L_k x_{k-1} + D_k x_k +
    U_k x_{k+1}``); ``index`` (``m x 2``) maps each block unknown to an entry of the
    original vector (-1 for a ghost unknown whose equation is uncoupled with right-hand
    side 1, as in paper 001). NumPy arrays: block Thomas in Numba. CuPy arrays: the
    partitioned (SPIKE-like) method of :class:`TridiagonalSolver` with 2x2 blocks and
    spikes, recursive on the separator system; gather and scatter through ``index``
    happen inside the first and last kernels, so a solve does not synchronize with the host;
    ``chunk`` (2 to ``MAX_CHUNK`` = 16) is its block rows per thread at every level (H100,
    ANISO2 float32: apply 0.46-0.48 ms at 16, 0.39-0.40 at the default 8).
    ``boosted``, ``negative_pivots`` and ``negative_diagonal`` are counted as in
    :class:`TridiagonalSolver`, over the eigenvalues of the 2x2 pivot and diagonal blocks
    (for a symmetric system, ``negative_pivots`` is its number of negative eigenvalues).

    Examples
    --------
    >>> import numpy as np
    >>> D = np.tile(np.array([[4.0, 1.0], [1.0, 4.0]]), (3, 1, 1))
    >>> L = np.tile(-np.eye(2), (3, 1, 1)); U = L.copy()
    >>> s = BlockTridiagonalSolver(L, D, U, np.array([[0, 1], [2, 3], [4, -1]]))
    >>> x = s.solve(np.ones(5))
    >>> x.shape
    (5,)
    """

    bottom_size = 64

    def __init__(self, L, D, U, index, *, chunk=8):
        xp = get_array_module(D)
        self.xp = xp
        if D.ndim != 3 or D.shape[1:] != (2, 2) or L.shape != D.shape or U.shape != D.shape:
            raise ValueError("L, D and U must all have shape (m, 2, 2)")
        if index.shape != (D.shape[0], 2):
            raise ValueError(f"index must have shape ({D.shape[0]}, 2), got {index.shape}")
        if D.shape[0] == 0:
            raise ValueError("empty block tridiagonal system")
        _check_chunks(chunk=chunk)
        self.dtype = np.dtype(D.dtype)
        self.m = D.shape[0]
        if xp is np:
            self.L = np.ascontiguousarray(L)
            self.index = np.ascontiguousarray(index, dtype=np.int64)
            self.n = int((self.index >= 0).sum())
            self.inv, self.cp, counts = _block_factor(
                self.L, np.ascontiguousarray(D), np.ascontiguousarray(U), _eps(self.dtype))
        else:
            counts = self._setup_gpu(L, D, U, index, chunk)
        self.boosted, self.negative_pivots, self.negative_diagonal = (int(c) for c in counts)
        _warn_boosted(self.boosted, self.m)

    def _setup_gpu(self, L, D, U, index, chunk):
        """All levels factorized by one cooperative launch into one workspace (as for
        :class:`TridiagonalSolver`); returns the counts, read at the end."""
        from .cuda import get_kernel, launch_cooperative

        xp = self.xp
        vt = self.dtype
        if vt.kind == "c":
            raise TypeError("complex block tridiagonal systems are supported on the CPU only")
        m = self.m
        itype = np.int32 if 2 * m < np.iinfo(np.int32).max // 2 else np.int64
        levels, bottom, size = _partition_plan(m, chunk, chunk, self.bottom_size, _BLOCK_LAYOUT)
        self.kernels = {k: get_kernel("tridiag", k, vt, itype)
                        for k in ("block_chunk_forward", "block_reduced_rhs", "block_chunk_back", "block_thomas_solve")}
        self.work = work = xp.empty(size, vt)
        stats = small_zeros(xp, 4, np.uint64)
        flat = xp.ascontiguousarray(index, dtype=itype).ravel()
        self.gather = xp.empty(2 * levels[0][2] * chunk, itype) if levels else flat
        L, D, U = (xp.ascontiguousarray(a.reshape(m, 4), dtype=vt) for a in (L, D, U))
        launch_cooperative(get_kernel("tridiag", "block_partitioned_factor", vt, itype),
                           levels[0][2] if levels else 1, 128,
                           (itype(m), np.int32(chunk), np.int32(len(levels)), L, D, U, work, flat,
                            self.gather if levels else None, stats))
        self._plan, self._itype = (levels, bottom), itype
        if not levels:  # small system: gather/scatter around a single block Thomas
            self.valid_pos = xp.flatnonzero(flat >= 0).astype(itype)
            self.valid_idx = flat[self.valid_pos]
        boosted, negative, negative_diag, self.n = (int(c) for c in stats.get())  # the one synchronization
        return boosted, negative, negative_diag

    def _solve_gpu(self, x):
        xp = self.xp
        out = xp.empty(self.n, dtype=self.dtype)
        levels, (m, bottom) = self._launches
        if levels:
            return _partitioned_solve(self.kernels, "block_", levels, (m, bottom), x, self.gather, out)
        b = xp.ones(2 * int(m), dtype=self.dtype)
        b[self.valid_pos] = x[self.valid_idx]
        self.kernels["block_thomas_solve"]((1,), (1,), (m, bottom["L"], bottom["inv"], bottom["cp"], b, bottom["x"]))
        out[self.valid_idx] = bottom["x"][self.valid_pos]
        return out

    def solve(self, x):
        """Return the solution for the original unknowns (ghosts dropped) as a new array."""
        if get_array_module(x) is not self.xp:
            raise TypeError("right-hand side and solver live on different devices")
        if x.ndim != 1 or x.shape[0] != self.n:
            raise ValueError(f"right-hand side of shape {x.shape} for a system of {self.n} unknowns")
        if self.xp is np:
            out = np.empty(self.n, dtype=np.result_type(self.dtype, x.dtype))
            _block_solve(self.L, self.inv, self.cp, self.index, np.ascontiguousarray(x), out)
            return out
        return self._solve_gpu(self.xp.ascontiguousarray(x, dtype=self.dtype))


def _launch_per_row(name, n, vt, itype, *args, threads=512):
    """Launches the ``tridiag.cu`` kernel ``name`` (templated on ``vt`` and ``itype``, or
    on ``itype`` alone when ``vt`` is None) with one thread per row for ``n`` rows (its
    first argument)."""
    from .cuda import get_kernel

    types = (itype,) if vt is None else (vt, itype)
    get_kernel("tridiag", name, *types)(((n + threads - 1) // threads,), (threads,), (itype.type(n), *args))


@njit(cache=True, parallel=True)
def _extract_cpu(indptr, indices, data, inverse, dl, d, du):
    """Twin of the CUDA ``extract_tridiagonal``: old row i writes new row ``inverse[i]``."""
    N = len(indptr) - 1
    use_inverse = len(inverse) > 0
    for row in prange(N):
        i = np.int64(row)  # signed: the prange index may be unsigned
        k = inverse[i] if use_inverse else i
        diag = data[0] * 0
        lower = data[0] * 0
        upper = data[0] * 0
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            if j == i:
                diag += data[e]
                continue
            kj = inverse[j] if use_inverse else j
            if kj == k - 1:
                lower += data[e]
            elif kj == k + 1:
                upper += data[e]
        d[k] = diag
        dl[k] = lower
        du[k] = upper


@njit(cache=True, parallel=True)
def _partner_entries_cpu(indptr, indices, data, partners, entries):
    """Twin of the CUDA ``partner_entries``."""
    for row in prange(len(indptr) - 1):
        i = np.int64(row)
        p0, p1 = partners[i, 0], partners[i, 1]
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            if j == i:
                entries[i, 0] += data[e]
            elif j == p0:
                entries[i, 1] += data[e]
            elif j == p1:
                entries[i, 2] += data[e]


@njit(cache=True, parallel=True)
def _order_partner_entries_cpu(perm, partners, entries, dl, d, du):
    """Twin of the CUDA ``order_partner_entries`` (``perm`` empty: the original order)."""
    N = len(d)
    use_perm = len(perm) > 0
    for row in prange(N):
        k = np.int64(row)
        i = perm[k] if use_perm else k
        before = (perm[k - 1] if use_perm else k - 1) if k > 0 else -1
        after = (perm[k + 1] if use_perm else k + 1) if k + 1 < N else -1
        d[k] = entries[i, 0]
        for s in range(2):
            if before >= 0 and before == partners[i, s]:
                dl[k] = entries[i, 1 + s]
            if after >= 0 and after == partners[i, s]:
                du[k] = entries[i, 1 + s]


def partner_entries(A, partners):
    """Per row ``i`` of ``A``, its diagonal and its entries to its two partners (``N x 2``,
    -1 for none), as an ``N x 4`` array ``(a_ii, a_{i,p0}, a_{i,p1}, 0)``: the pass
    over A of :func:`extract_tridiagonal` with partners. It needs the partners only, not
    the order: the [0,2]-factor's will do, so that it runs while the forest is computed."""
    xp = get_array_module(A)
    A = A.tocsr()
    N = A.shape[0]
    if tuple(partners.shape) != (N, 2):
        raise ValueError(f"partners must have shape {(N, 2)} for a matrix of {N} rows, got {tuple(partners.shape)}")
    vt = np.dtype(A.dtype)
    if xp is np:
        entries = np.zeros((N, 4), vt)
        _partner_entries_cpu(A.indptr, A.indices, A.data, np.ascontiguousarray(partners, dtype=np.int64), entries)
        return entries
    from .cuda import aligned

    itype = A.indices.dtype
    entries = xp.empty((N, 4), vt)  # written in full
    _launch_per_row("partner_entries", N, vt, itype, A.indptr, A.indices, A.data,
                    aligned(partners, 2 * itype.itemsize, itype), entries)
    return entries


def extract_tridiagonal(A, perm=None, partners=None, *, entries=None, factor_entries=None):
    """Tridiagonal coefficients ``(dl, d, du)`` of ``A`` in the order ``perm`` (new -> old)
    (paper 001, Sec. 4.3).

    Without ``partners``: the tridiagonal part of ``A`` permuted by ``perm`` (default: the
    original ordering), in one pass over A's entries: A's rows are read in their own order
    and the coefficients scattered to their new rows (``perm``'s inverse).

    With ``partners`` (``N x 2``, -1 for none), only entries between partners that are
    neighbours in the order enter the off-diagonals: a linear forest's partners and
    permutation give its tridiagonal system. The partners of the [0,2]-factor the forest
    was built from give the same system (a factor edge between rows adjacent in the
    forest's order is a forest edge: a cut cycle's removed edge joins the two ends of one
    path). Two passes: :func:`partner_entries` reads A in its own order (``entries``, if
    given, is its result), then each new row gathers its old row's entries; a permutation
    that follows the columns of a grid (ANISO2) would scatter reads of A's rows, or the
    one-pass writes, over the whole matrix. ``factor_entries``, if given with the
    partners, replaces that first pass on the GPU: ``(diagonal, weights, signs)``, what a [0,2]-factor of ``A``
    itself recorded of its entries (its ``weights`` with the ``Factor.matrix_entries`` of
    :func:`precond.factor` on the GPU; ``signs``: a byte per row, bit ``3 + s`` set where
    the entry to partner ``s`` is negative), from which the new rows gather theirs.

    Arrays of the wrong shape raise ``ValueError``."""
    xp = get_array_module(A)
    A = A.tocsr()
    N = A.shape[0]
    vt = np.dtype(A.dtype)
    if partners is not None:
        if xp is np:
            _check_extract_shapes(A, perm, partners, entries, factor_entries)
            entries = partner_entries(A, partners) if entries is None else np.ascontiguousarray(entries, dtype=vt)
            dl, d, du = (np.zeros(N, vt) for _ in range(3))
            perm = np.empty(0, np.int64) if perm is None else np.ascontiguousarray(perm, dtype=np.int64)
            _order_partner_entries_cpu(perm, np.ascontiguousarray(partners, dtype=np.int64), entries, dl, d, du)
            return dl, d, du
        perm, system, vt, itype = _forest_system(A, perm, partners, entries, factor_entries)
        dl, d, du = (xp.empty(N, vt) for _ in range(3))  # every row is written
        _launch_per_row("order_partner_entries", N, vt, itype, perm, *system, dl, d, du)
        return dl, d, du
    _check_extract_shapes(A, perm, partners, entries, factor_entries)
    itype = np.dtype(np.int64) if xp is np else A.indices.dtype
    # the kernel's order: None (the original one), else old -> new
    inverse = None if perm is None else inverse_permutation(xp.asarray(perm), itype)
    if xp is np:
        inverse = np.empty(0, np.int64) if inverse is None else inverse
        dl, d, du = (np.zeros(N, vt) for _ in range(3))
        if A.nnz:
            _extract_cpu(A.indptr, A.indices, A.data, inverse, dl, d, du)
        return dl, d, du
    dl, d, du = (xp.empty(N, vt) for _ in range(3))  # every row is written
    _launch_per_row("extract_tridiagonal", N, vt, itype, A.indptr, A.indices, A.data, inverse, dl, d, du)
    return dl, d, du


def _check_extract_shapes(A, perm, partners, entries, factor_entries):
    """The shapes of :func:`extract_tridiagonal`'s arguments (``A`` in CSR)."""
    N = A.shape[0]
    if factor_entries is not None and (partners is None or len(factor_entries) != 3):
        raise ValueError("factor_entries must be (diagonal, weights, signs), given with the factor's partners")
    recorded = zip(("diagonal", "weights", "signs"), factor_entries or (None,) * 3, ((N,), (N, 2), (N,)))
    for name, x, shape in (("perm", perm, (N,)), ("partners", partners, (N, 2)), ("entries", entries, (N, 4)),
                           *((f"factor_entries' {name}", x, shape) for name, x, shape in recorded)):
        if x is not None and tuple(x.shape) != shape:
            raise ValueError(f"{name} must have shape {shape} for a matrix of {N} rows, got {tuple(x.shape)}")
    if factor_entries is not None and not is_device_array(A):
        raise ValueError("factor_entries are recorded by the GPU's factor; on the CPU pass entries")


def _forest_system(A, perm, partners, entries, factor_entries):
    """The GPU arguments of a linear forest's system (``A`` a cupyx CSR matrix, checked
    here): ``(perm, system, vt, itype)``, ``system`` the arguments of ``tridiag.cu``'s
    ``ForestSystem`` (partners, entries, weights, signs, diagonal), the entries from
    ``factor_entries`` or ``entries`` or, given neither, from :func:`partner_entries`."""
    from .cuda import aligned

    _check_extract_shapes(A, perm, partners, entries, factor_entries)
    xp = get_array_module(A)
    vt = np.dtype(A.dtype)
    itype = A.indices.dtype
    if factor_entries is None:
        entries = partner_entries(A, partners) if entries is None else xp.ascontiguousarray(entries, dtype=vt)
        recorded = (aligned(entries, 16), None, None, None)
    else:
        diagonal, weights, signs = factor_entries
        recorded = (None, aligned(weights, 2 * vt.itemsize, vt), xp.ascontiguousarray(signs, dtype=np.uint8),
                    xp.ascontiguousarray(diagonal, dtype=vt))
    perm = None if perm is None else xp.ascontiguousarray(perm, dtype=itype)
    return perm, (aligned(partners, 2 * itype.itemsize, itype), *recorded), vt, itype


@njit(cache=True)
def _extract_blocks_cpu(indptr, indices, data, slot, path_start, L, D, U):
    """Twin of the CUDA ``block_row_entries`` and ``block_gather_rows`` in one pass (each
    row's sums in the same order)."""
    covered = 0.0
    total = 0.0
    for i in range(len(indptr) - 1):
        bi = slot[i] >> 1
        si = slot[i] & 1
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            a = data[e]
            w = abs(a) if j != i else 0.0
            total += w
            bj = slot[j] >> 1
            sj = slot[j] & 1
            if bj == bi:
                D[bi, si, sj] += a
                covered += w
            elif bj == bi - 1 and not path_start[bi]:
                L[bi, si, sj] += a
                covered += w
            elif bj == bi + 1 and not path_start[bi + 1]:
                U[bi, si, sj] += a
                covered += w
    return covered, total


def extract_block_tridiagonal(A, index, starts, *, check=True):
    """2x2 block tridiagonal part of a sparse matrix.

    Block ``k`` holds the rows ``index[k, 0]`` and ``index[k, 1]`` (-1: a ghost, whose
    equation is ``1 * x = rhs``); blocks ``starts[p]:starts[p + 1]`` form path ``p`` and
    only neighbouring blocks of one path are coupled. Returns ``(L, D, U, coverage)``:
    ``m x 2 x 2`` blocks (``L[k]`` couples block ``k`` to ``k - 1``) on the backend of
    ``A`` (Numba on the CPU; on the GPU two passes, the rows' sums by block in ``A``'s own
    order, then gathered in the blocks' order; the same values) and the fraction of the
    off-diagonal absolute weight of ``A`` that they hold.

    ``check=False`` skips the tests that ``index`` holds only row ids (or -1) and every
    row, and that ``starts`` rises from 0 to ``m`` (host synchronizations on the GPU), for
    arrays known to be valid (AlgTriBlock's own); with invalid ones the result is
    undefined. A row in two blocks is not detected either way.
    """
    xp = get_array_module(A)
    A = A.tocsr()
    if not A.has_canonical_format:  # duplicates summed first, as the weight graph does
        A = A.copy()
        A.sum_duplicates()
    N = A.shape[0]
    index = xp.asarray(index)
    starts = xp.asarray(starts)
    m = len(index)
    if check:
        if index.ndim != 2 or index.shape[1] != 2 or m == 0 or int(index.max()) >= N or int(index.min()) < -1:
            raise ValueError(f"index must be an m x 2 array of row ids in 0..{N - 1} or -1")
        if len(starts) == 0 or int(starts[0]) != 0 or int(starts[-1]) != m or bool((xp.diff(starts) < 0).any()):
            raise ValueError("starts must rise from 0 to the number of blocks")
    itype = np.dtype(np.int64) if xp is np else A.indices.dtype
    index = xp.ascontiguousarray(index, dtype=itype)
    slot = xp.full(N, -1, dtype=itype)  # slot[i] = 2 * block + position of row i
    if xp is np:
        for s in range(2):
            rows = index[:, s]
            blocks = np.flatnonzero(rows >= 0)
            slot[rows[blocks]] = 2 * blocks + s
    else:
        _launch_per_row("block_slots", m, None, itype, itype.type(N), index, slot, threads=256)
    if check and bool((slot < 0).any()):
        raise ValueError("every row must belong to a block")
    path_start = xp.zeros(m + 1, dtype=np.uint8)  # whether block k begins a path (k = m: past the end)
    path_start[starts] = 1
    vt = np.dtype(A.dtype)
    if xp is np:
        L, D, U = (np.zeros((m, 2, 2), dtype=vt) for _ in range(3))
        covered, total = _extract_blocks_cpu(A.indptr, A.indices, A.data, slot, path_start, L, D, U)
        for s in range(2):  # ghosts: uncoupled, diagonal 1
            D[index[:, s] < 0, s, s] = 1
        return L, D, U, (covered / total if total else 0.0)
    record = xp.empty((N, 6), dtype=vt)  # per row: its (l, d, u) pairs, written in full
    covered, total = xp.empty(N), xp.empty(N)
    _launch_per_row("block_row_entries", N, vt, itype, A.indptr, A.indices, A.data, slot, path_start, record,
                    covered, total, threads=256)
    L, D, U = (xp.empty((m, 2, 2), dtype=vt) for _ in range(3))  # every entry is written
    _launch_per_row("block_gather_rows", m, vt, itype, index, record, L, D, U, threads=256)
    covered, total = (float(x) for x in to_host(xp.stack([covered.sum(), total.sum()])))
    return L, D, U, (covered / total if total else 0.0)
