"""The tridiagonal solver: factorize once, solve many times (CPU and GPU).

A system is given by its sub-, main and superdiagonal ``dl, d, du`` (``dl[0]`` and
``du[-1]`` are ignored). Independent systems (the paths of a linear forest) are simply
concatenated with zero couplings between them. An optional permutation ``perm`` (new ->
old) folds the reordering into the solve: ``solve(x)`` returns ``y`` with
``y[perm] = T^{-1} x[perm]``.

CPU: the Thomas algorithm in Numba. GPU: the partitioned method of
:mod:`kernels.tridiag.partition` (``kernels/cuda/tridiag.cu``).

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Section 4.3.
"""
from __future__ import annotations

import functools

import numpy as np
from numba import njit

from ..backend import PinnedOutput, get_array_module, small_zeros
from ..nvrtc import blocks_per_sm, get_kernel, launch_cooperative, row_grid
from .extract import extract_tridiagonal, forest_system
from .partition import (LEVEL0_ALONE_BELOW, SCALAR_LAYOUT, PartitionedGPU, check_chunks, eps_of, partition_plan,
                        partitioned_solve, top_launch, warn_boosted)

__all__ = ["TridiagonalSolver", "tridiagonal_solve"]


@njit(cache=True)
def _thomas_factor_cpu(dl, d, du, eps):
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
def _thomas_solve_cpu(dl, inv_den, cp, perm, x, out):
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


class TridiagonalSolver(PartitionedGPU):
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
        give more threads and shorter dependent chains.

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
        xp = get_array_module(dl, d, du)
        dl, d, du = (xp.asarray(a) for a in (dl, d, du))
        self.xp = xp
        for name, a in (("dl", dl), ("d", d), ("du", du)):
            if a.ndim != 1:
                raise ValueError(f"{name} must be 1-D, got shape {a.shape}")
        self.n = n = len(d)
        if not (len(dl) == len(du) == n):
            raise ValueError("dl, d and du must have the same length")
        if n == 0:
            raise ValueError("empty tridiagonal system")
        check_chunks(chunk=chunk, upper_chunk=upper_chunk)
        self.dtype = solver_dtype(dl, d, du)
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
        and read back. Elsewhere, and for systems of at most ``bottom_size``
        rows, it extracts them first."""
        if partners is None:
            raise ValueError("from_forest needs the partners of a linear forest or of its [0,2]-factor")
        xp = get_array_module(A)
        A = A.tocsr()
        if xp is np or A.shape[0] <= cls.bottom_size:
            dl, d, du = extract_tridiagonal(A, perm, partners, entries=entries, factor_entries=factor_entries)
            return cls(dl, d, du, perm, chunk=chunk, upper_chunk=upper_chunk)
        check_chunks(chunk=chunk, upper_chunk=upper_chunk)
        if perm is None:  # before forest_system, which may queue a pass over A
            raise ValueError("from_forest needs the forest's order perm")
        perm, system, vt, itype = forest_system(A, perm, partners, entries, factor_entries)
        self = cls.__new__(cls)
        self.xp, self.n, self.dtype = xp, A.shape[0], vt
        self._factorize(None, None, None, perm, chunk, upper_chunk, system=system, itype=itype, wait=wait)
        return self

    def _factorize(self, dl, d, du, perm, chunk, upper_chunk, system=None, itype=None, wait=True):
        if self.xp is np:
            self.perm = np.ascontiguousarray(perm, dtype=np.int64) if perm is not None else np.zeros(0, np.int64)
            self.dl = np.ascontiguousarray(dl, dtype=self.dtype)
            self.inv_den, self.cp, counts = _thomas_factor_cpu(
                self.dl, np.ascontiguousarray(d, dtype=self.dtype), np.ascontiguousarray(du, dtype=self.dtype),
                eps_of(self.dtype))
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
            # with the solver: its release here, after the set-up's last wait, would lengthen the
            # set-up's wall
            self._counts = tuple(int(c) for c in self._read_counts())
            warn_boosted(self._counts[0], self.n, stacklevel=5)
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

        vt = self.dtype
        if vt.kind == "c":
            raise TypeError("complex tridiagonal systems are supported on the CPU only")
        levels, bottom, size = partition_plan(self.n, chunk, upper_chunk, self.bottom_size, SCALAR_LAYOUT)
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
        return top_launch(self.work, self._plan, self._itype)

    def _solve_gpu(self, x):
        import cupy

        out = cupy.empty(self.n, dtype=self.dtype)
        levels, (m, bottom) = self._launches
        if levels:
            return partitioned_solve(self.kernels, "", levels, (m, bottom), x, self.perm_t, out, self._top)
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
        """Return ``T^{-1} x`` (through the permutation, if any) as a new array; ``x`` of
        shape ``(n,)`` or ``(n, k)``."""
        if get_array_module(x) is not self.xp:
            raise TypeError("right-hand side and solver live on different devices")
        x = self.xp.asarray(x)
        if x.ndim not in (1, 2):
            raise ValueError(f"right-hand side must have shape (n,) or (n, k), got {x.shape}")
        if x.dtype.kind not in "fc":
            x = x.astype(solver_dtype(x))
        if x.shape[0] != self.n:
            raise ValueError(f"right-hand side of length {x.shape[0]} for a system of size {self.n}")
        if x.ndim == 2:
            return self.xp.stack([self.solve(x[:, k]) for k in range(x.shape[1])], axis=1)
        if self.xp is np:
            out = np.empty(self.n, dtype=np.result_type(self.dtype, x.dtype))
            _thomas_solve_cpu(self.dl, self.inv_den, self.cp, self.perm, np.ascontiguousarray(x), out)
            return out
        return self._solve_gpu(self.xp.ascontiguousarray(x, dtype=self.dtype))


def solver_dtype(*arrays) -> np.dtype:
    """The floating dtype a tridiagonal system of ``arrays`` is solved in, as SciPy's
    ``solve_banded`` does: booleans and integers in float64, float16 in float32, float32 /
    float64 / complex as they are; ``TypeError`` for anything else (object, strings).

    Examples
    --------
    >>> solver_dtype(np.arange(3)), solver_dtype(np.ones(2, np.float16)), solver_dtype(np.ones(2, np.float32))
    (dtype('float64'), dtype('float32'), dtype('float32'))
    """
    kinds = [np.dtype(a.dtype) for a in arrays]
    for dt in kinds:
        if dt.kind not in "biufc":
            raise TypeError(f"tridiagonal systems take numbers, got dtype {dt}")
    dt = np.result_type(*kinds)
    if dt.kind in "biu":
        return np.dtype(np.float64)
    if dt == np.float16:
        return np.dtype(np.float32)
    if dt.kind == "f" and dt.itemsize > 8:  # long double: no kernel takes it
        return np.dtype(np.float64)
    return np.dtype(dt)


def tridiagonal_solve(dl, d, du, b, *, chunk=8, upper_chunk=16):
    """Solve tridiagonal systems (NumPy or CuPy); CuPy has no public tridiagonal solver.

    Parameters
    ----------
    dl, d, du : arrays of shape (n,) for one system or (batch, n) for independent systems
        ``dl[..., 0]`` and ``du[..., -1]`` are ignored.
    b : array of shape (n,), (n, k) (several right-hand sides) or (batch, n)
    chunk, upper_chunk : int
        GPU chunk sizes, as for :class:`TridiagonalSolver`.

    Array-likes (lists) are accepted; as in SciPy's ``solve_banded``, integer and boolean
    input is solved in float64 and float16 in float32 (:func:`solver_dtype`). Other shapes
    raise ``ValueError``, other dtypes ``TypeError``.

    Examples
    --------
    >>> import numpy as np
    >>> d = np.array([[2.0, 2.0], [4.0, 4.0]])
    >>> off = np.array([[1.0, 1.0], [1.0, 1.0]])
    >>> tridiagonal_solve(off, d, off, np.array([[3.0, 3.0], [5.0, 5.0]]))
    array([[1., 1.],
           [1., 1.]])
    """
    xp = get_array_module(dl, d, du, b)
    dl, d, du, b = (xp.asarray(a) for a in (dl, d, du, b))
    dtype = solver_dtype(dl, d, du, b)
    dl, d, du, b = (a.astype(dtype, copy=False) for a in (dl, d, du, b))
    if d.ndim not in (1, 2) or dl.shape != d.shape or du.shape != d.shape:
        raise ValueError(f"dl, d and du must have one shape, (n,) or (batch, n); got {dl.shape}, {d.shape}, "
                         f"{du.shape}")
    if d.ndim == 1 and (b.ndim not in (1, 2) or b.shape[0] != d.shape[0]):
        raise ValueError(f"right-hand side must have shape ({d.shape[0]},) or ({d.shape[0]}, k), got {b.shape}")
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
