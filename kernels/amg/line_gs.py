"""Multicolour line Gauss-Seidel: the multiplicative relaxation along the paths (lines) of
a linear forest, on the CPU (Numba) and the GPU (a residual kernel of
``kernels/cuda/amg.cu`` per colour, the batched tridiagonal solver, a scatter).

The lines are coloured so that no two lines of one colour are coupled by ``A`` (in either
direction). A sweep visits the colours in turn: the residual of that colour's rows with
the latest iterate, the tridiagonal solves of its lines, the update of its rows. The
lines of one colour are independent, so a colour is one parallel step, and the sweep is
block Gauss-Seidel with the lines as blocks in the order of their colours. Couplings
inside a line that the forest leaves out (chords) take the previous iterate, as in a
block Jacobi step; the l1 variant adds their absolute values to the line's diagonal,
which keeps the sweep convergent for every symmetric positive definite ``A`` (Baker,
Falgout, Kolev and Yang). A backward sweep visits the colours in the opposite order: the
forward sweep followed by the backward one is a symmetric operator for symmetric ``A``.

The colouring is first-fit over the lines in the order of a hash of their index, which
the GPU computes in parallel rounds (Jones and Plassmann: a line takes its colour once
every coupled line of higher priority has one), the CPU sequentially, with the same
result. The set-up (colouring, the tridiagonal coefficients in the colour order, the
chords) runs on the backend of the matrix, and every sweep on the GPU is device kernels
only (no host synchronization: a cycle with it can be captured into a CUDA graph).

References
----------
.. [1] Y. Saad, "Iterative Methods for Sparse Linear Systems", 2nd ed., SIAM, 2003,
   Section 12.4 (multicolouring, block and multicolour SOR).
.. [2] A. H. Baker, R. D. Falgout, T. V. Kolev and U. M. Yang, "Multigrid smoothers for
   ultraparallel computing", SIAM Journal on Scientific Computing 33(5), 2011.
.. [3] M. T. Jones and P. E. Plassmann, "A parallel graph coloring heuristic", SIAM
   Journal on Scientific Computing 14(3), 1993.
.. [4] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..backend import get_array_module, is_device_array, to_host
from ..hashing import fmix32_array
from ..tridiag import TridiagonalSolver, extract_tridiagonal
from .cycle import Smoother

__all__ = ["line_colouring", "line_priority", "LineColouring", "chord_weights", "LineGaussSeidel",
           "GaussSeidelSmoother"]


@njit(cache=True)
def _greedy_line_colours(visit, line_start, order, line_of, indptr, indices, t_indptr, t_indices):
    """First-fit colouring of the lines in the order ``visit``: line ``l`` (rows
    ``order[line_start[l] : line_start[l + 1]]``) takes the smallest colour that no line
    coupled to it by a row entry (``indptr/indices``) or a column entry (the transpose's
    ``t_indptr/t_indices``; empty: the pattern is symmetric) has taken yet."""
    n_lines = len(line_start) - 1
    colour = np.full(n_lines, -1, dtype=np.int64)
    seen = np.full(n_lines + 1, -1, dtype=np.int64)  # seen[c] == l: colour c is taken next to l
    transpose = len(t_indptr) > 0
    for line in visit:
        for k in range(line_start[line], line_start[line + 1]):
            i = order[k]
            for e in range(indptr[i], indptr[i + 1]):
                other = line_of[indices[e]]
                if other != line and colour[other] >= 0:
                    seen[colour[other]] = line
            if transpose:
                for e in range(t_indptr[i], t_indptr[i + 1]):
                    other = line_of[t_indices[e]]
                    if other != line and colour[other] >= 0:
                        seen[colour[other]] = line
        c = 0
        while seen[c] == line:
            c += 1
        colour[line] = c
    return colour


@njit(cache=True, parallel=True)
def _chords(order, line_of, partners, indptr, indices, data, out):
    """``out[k]``: the sum of ``|a_ij|`` over the entries of row ``i = order[k]`` to other
    rows of its own line that are not its forest partners (the line's chords)."""
    for kk in prange(len(order)):
        k = np.int64(kk)
        i = order[k]
        total = out[k] * 0
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            if j != i and line_of[j] == line_of[i] and j != partners[i, 0] and j != partners[i, 1]:
                total += abs(data[e])
        out[k] = total


class LineColouring:
    """The lines of a linear forest in the order of their colours.

    Attributes: on the backend of the matrix ``order`` (new -> old: the rows, colour by
    colour, each line's rows together in its path order), ``line_start`` (offsets of the
    lines in ``order``), ``line_of`` (the line of each old row, numbered in the forest's
    order); host arrays ``colour_start`` (offsets of the colours in ``order``,
    ``n_colours + 1``) and ``colour_lines`` (offsets of the colours in the lines);
    ``n_colours``.
    """

    def __init__(self, order, colour_start, line_start, colour_lines, line_of):
        self.order, self.colour_start, self.line_of = order, colour_start, line_of
        self.line_start, self.colour_lines = line_start, colour_lines
        self.n_colours = len(colour_start) - 1


def line_priority(n_lines, xp=np):
    """The priority of each of ``n_lines`` lines in the colouring: MurmurHash3's 32-bit
    finalizer of its index (``uint32``; of two lines of equal priority the one of smaller
    index comes first), the same on every backend (``fmix32`` of hashing.cuh in amg.cu)."""
    return fmix32_array(xp.arange(n_lines, dtype=np.uint32), xp)


def line_colouring(A, permutation, path_start, *, symmetric_pattern=False):
    """Colour the lines of a linear forest of ``A`` so that no two lines of one colour are
    coupled (``a_ij != 0`` or ``a_ji != 0`` for rows ``i``, ``j`` of the two lines):
    first-fit over the lines in the order of :func:`line_priority`, on the backend of
    ``A``. On the CPU sequentially; on the GPU in rounds (Jones and Plassmann), each of
    which colours the lines whose coupled lines of higher priority all have colours, with
    the least colour none of them has: the same colouring. Randomised priorities keep the
    rounds few (a line waits only for a chain of ever higher priorities).

    Parameters
    ----------
    A : sparse matrix (SciPy or cupyx), canonical CSR
    permutation, path_start : arrays
        The forest's order (new -> old) and the offsets of its paths in that order
        (:class:`kernels.forest.LinearForest`); ``permutation=None``: every row a line of
        its own (point colouring).
    symmetric_pattern : bool
        The pattern of ``A`` is symmetric (then its transpose is not formed).

    Returns
    -------
    LineColouring

    References
    ----------
    M. T. Jones and P. E. Plassmann, "A parallel graph coloring heuristic", SIAM Journal on
    Scientific Computing 14(3), 1993.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(6, 6), format="csr")
    >>> c = line_colouring(A, None, None, symmetric_pattern=True)   # points of a chain
    >>> c.n_colours, c.order.tolist()
    (2, [1, 3, 5, 0, 2, 4])
    """
    xp = get_array_module(A)
    n = A.shape[0]
    itype = np.dtype(np.int64) if xp is np else np.dtype(A.indices.dtype)
    if permutation is None:
        perm = xp.arange(n, dtype=itype)
        starts = xp.arange(n + 1, dtype=itype)
    else:
        perm = xp.ascontiguousarray(xp.asarray(permutation), dtype=itype)
        starts = xp.ascontiguousarray(xp.asarray(path_start), dtype=itype)
    n_lines = int(starts.shape[0]) - 1
    line_of = xp.empty(n, dtype=itype)
    line_of[perm] = xp.searchsorted(starts[1:], xp.arange(n, dtype=itype), side="right").astype(itype)
    T = None if symmetric_pattern else A.T.tocsr()
    colour = _device_colours(A, T, perm, starts, line_of) if xp is not np and n_lines else None
    if colour is None:  # the CPU (or a GPU colouring that needed more colours than its bit set)
        host = A.get() if xp is not np else A
        t_indptr = t_indices = np.zeros(0, dtype=host.indices.dtype)
        if T is not None:
            t_indptr, t_indices = to_host(T.indptr), to_host(T.indices)
        priority = line_priority(n_lines).astype(np.int64)
        visit = np.lexsort((np.arange(n_lines), -priority))  # the highest priority first
        colour = _greedy_line_colours(visit, to_host(starts).astype(np.int64), to_host(perm).astype(np.int64),
                                      to_host(line_of).astype(np.int64), host.indptr, host.indices, t_indptr,
                                      t_indices)
        colour = xp.asarray(colour)
    return _colouring_from(xp.asarray(colour, dtype=np.int64), perm, starts, line_of, itype)


def _device_colours(A, T, perm, starts, line_of):
    """The colours of the lines by rounds of the ``line_colour_round`` kernel (one read of
    two counters per round), or None where a line would need more colours than the
    kernel's bit set holds."""
    import cupy

    from ..nvrtc import get_kernel

    itype = np.dtype(A.indices.dtype)
    n_lines = int(starts.shape[0]) - 1
    colour = cupy.full(n_lines, -1, dtype=np.int32)
    counters = cupy.zeros(2, dtype=np.uint32)  # lines left waiting, overflow
    kernel = get_kernel("amg", "line_colour_round", itype)
    threads = 256
    grid = ((n_lines * 32 + threads - 1) // threads,)
    t_indptr, t_indices = (None, None) if T is None else (T.indptr.astype(itype, copy=False),
                                                          T.indices.astype(itype, copy=False))
    for _ in range(n_lines):  # every round colours at least the waiting line of highest priority
        counters[0] = 0
        kernel(grid, (threads,), (itype.type(n_lines), starts, perm, line_of, A.indptr, A.indices, t_indptr,
                                  t_indices, colour, counters[:1], counters[1:]))
        waiting, overflow = (int(v) for v in counters.get())  # the host waits (a set-up step)
        if overflow:
            return None
        if not waiting:
            break
    return colour


def _colouring_from(colour, perm, starts, line_of, itype):
    """The :class:`LineColouring` of the lines' colours (lines by colour, stable: the
    forest's order inside a colour), on the backend of ``colour``."""
    xp = get_array_module(colour)
    n_lines = int(colour.shape[0])
    n = int(perm.shape[0])
    n_colours = int(colour.max()) + 1 if n_lines else 0
    lines = xp.argsort(colour * max(n_lines, 1) + xp.arange(n_lines, dtype=np.int64))  # distinct keys: stable
    lengths = xp.diff(starts)[lines].astype(np.int64)
    firsts = starts[:-1][lines].astype(np.int64)
    line_start = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(lengths)])
    positions = xp.arange(n, dtype=np.int64)
    owner = xp.searchsorted(line_start[1:], positions, side="right")  # the (sorted) line of each position
    order = perm[firsts[owner] + positions - line_start[owner]].astype(itype, copy=False)
    colour_lines = xp.concatenate([xp.zeros(1, dtype=np.int64),
                                   xp.cumsum(xp.bincount(colour, minlength=n_colours))]).astype(np.int64)
    colour_lines = to_host(colour_lines)
    colour_start = to_host(line_start)[colour_lines] if xp is np else to_host(line_start[xp.asarray(colour_lines)])
    return LineColouring(order, np.asarray(colour_start, dtype=np.int64), line_start, colour_lines, line_of)


def chord_weights(A, colouring, partners):
    """Per row of ``colouring.order``: the sum of the absolute entries to rows of its own
    line that are not its forest ``partners`` (``n x 2``, -1: none), each row's in its
    order, on the backend of ``A`` (the same bits on both)."""
    xp = get_array_module(A)
    out = xp.zeros(A.shape[0], dtype=A.dtype)
    if xp is np:
        _chords(np.asarray(colouring.order, dtype=np.int64), np.asarray(colouring.line_of, dtype=np.int64),
                np.ascontiguousarray(partners, dtype=np.int64), A.indptr, A.indices, A.data, out)
        return out
    from ..nvrtc import get_kernel

    itype = np.dtype(A.indices.dtype)
    n = A.shape[0]
    threads = 256
    get_kernel("amg", "line_chords", np.dtype(A.dtype), itype)(
        ((n + threads - 1) // threads,), (threads,),
        (itype.type(n), colouring.order.astype(itype, copy=False), colouring.line_of.astype(itype, copy=False),
         xp.ascontiguousarray(partners, dtype=itype), A.indptr, A.indices, A.data, out))
    return out


@njit(cache=True, inline="always")
def _relax_line(line, indptr, indices, data, order, dl, inv_den, cp, line_start, omega, x, b, z):
    """One line of a sweep: its residual with the current ``x`` into ``z``, its Thomas solve
    (factorized: ``dl``, ``inv_den``, ``cp``), ``x += omega * correction``."""
    begin, end = line_start[line], line_start[line + 1]
    prev = z[0] * 0
    for k in range(begin, end):
        i = order[k]
        acc = b[i]
        for e in range(indptr[i], indptr[i + 1]):
            acc -= data[e] * x[indices[e]]
        prev = (acc - dl[k] * prev) * inv_den[k] if k > begin else acc * inv_den[k]
        z[k] = prev
    nxt = z[0] * 0
    for k in range(end - 1, begin - 1, -1):
        nxt = z[k] - cp[k] * nxt if k < end - 1 else z[k]
        x[order[k]] += omega * nxt


@njit(cache=True)
def _sweep_cpu(indptr, indices, data, order, dl, inv_den, cp, line_start, colour_lines, colours, omega, x, b, z):
    """One multicolour line Gauss-Seidel sweep over ``colours`` (in that order), in place in
    ``x``: the lines of colour ``c`` are ``colour_lines[c]`` to ``colour_lines[c + 1]`` (their
    rows ``order[line_start[l] : line_start[l + 1]]``). The same values as the GPU's
    colour-wide steps: a line reads no row of another line of its colour."""
    for c in colours:
        for line in range(colour_lines[c], colour_lines[c + 1]):
            _relax_line(line, indptr, indices, data, order, dl, inv_den, cp, line_start, omega, x, b, z)


@njit(cache=True, parallel=True)
def _sweep_cpu_parallel(indptr, indices, data, order, dl, inv_den, cp, line_start, colour_lines, colours, omega, x,
                        b, z):
    """:func:`_sweep_cpu` with the lines of a colour in parallel (the same values)."""
    for c in colours:
        for li in prange(colour_lines[c], colour_lines[c + 1]):
            _relax_line(np.int64(li), indptr, indices, data, order, dl, inv_den, cp, line_start, omega, x, b, z)


#: Rows of a level from which the CPU sweep runs the lines of a colour in threads (below,
#: a thread barrier per colour costs more than the sweep, more so on a loaded machine).
PARALLEL_ROWS = 50_000


class LineGaussSeidel:
    """Multicolour line Gauss-Seidel sweeps of ``A`` along the lines of a linear forest.

    Parameters
    ----------
    A : sparse matrix (SciPy: the CPU; cupyx: the GPU), square, float32 or float64
    permutation, path_start, partners : arrays or None
        The forest (:class:`kernels.forest.LinearForest`'s ``permutation``,
        ``path_start`` and ``neighbors``); None: point Gauss-Seidel (every row a line).
    omega : float
        Relaxation factor of each line update (1: Gauss-Seidel; else SOR-like).
    l1 : bool
        Add the absolute chords of each row (entries to rows of its line that the forest
        leaves out) to its diagonal: convergent for every symmetric positive definite
        ``A``.
    symmetric_pattern : bool
        The pattern of ``A`` is symmetric (the colouring skips the transpose).

    Attributes: ``colouring`` (:class:`LineColouring`), ``n_colours``, ``solvers`` (GPU: a
    :class:`kernels.tridiag.TridiagonalSolver` per colour).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.diags([-1.0, 2.5, -1.0], [-1, 0, 1], shape=(6, 6), format="csr")
    >>> gs = LineGaussSeidel(A, None, None, None)   # point Gauss-Seidel, red-black
    >>> x = gs.sweep(np.zeros(6), np.ones(6))
    >>> bool(np.linalg.norm(np.ones(6) - A @ x) < np.linalg.norm(np.ones(6)))
    True
    """

    def __init__(self, A, permutation, path_start, partners, *, omega=1.0, l1=False, symmetric_pattern=False):
        A = A.tocsr()
        self.gpu = is_device_array(A)
        self.xp = xp = get_array_module(A)
        self.dtype = np.dtype(A.dtype)
        self.n = A.shape[0]
        if not A.has_canonical_format:
            A = A.copy()
            A.sum_duplicates()
        self.colouring = colouring = line_colouring(A, permutation, path_start, symmetric_pattern=symmetric_pattern)
        self.n_colours = colouring.n_colours
        order = colouring.order
        itype = np.dtype(np.int64) if not self.gpu else np.dtype(A.indices.dtype)
        if partners is None:
            partners = xp.full((self.n, 2), -1, dtype=itype)
        partners = xp.ascontiguousarray(xp.asarray(partners), dtype=itype)
        dl, d, du = extract_tridiagonal(A, order, partners)
        dl, d, du = (xp.ascontiguousarray(a, dtype=self.dtype) for a in (dl, d, du))
        if l1:
            d = d + chord_weights(A, colouring, partners)
        self.omega = float(omega)
        self._forward = np.arange(self.n_colours, dtype=np.int64)
        self._backward = self._forward[::-1].copy()
        if not self.gpu:
            self.A = A
            solver = TridiagonalSolver(dl, d, du)  # no couplings across lines: colour by colour
            self._factors = (solver.dl, solver.inv_den, solver.cp)
            self.solvers = None
            return
        self._gpu_setup(A, order, dl, d, du)

    def _gpu_setup(self, A, order, dl, d, du):
        import cupy

        from ..spmv import spmv_lanes

        try:  # the rows in the colour order, columns as in A: on the device
            Ap = A[order].tocsr()
        except Exception:  # noqa: BLE001 - a CuPy without row indexing: on the host
            Ap = A.get()[order.get()].tocsr()
            Ap = type(A)((cupy.asarray(Ap.data), cupy.asarray(Ap.indices), cupy.asarray(Ap.indptr)), shape=Ap.shape)
        itype = np.dtype(Ap.indices.dtype)
        self._itype = itype.type
        self.order = order.astype(itype)
        indptr = Ap.indptr.astype(itype, copy=False)
        self._lanes = spmv_lanes(Ap.nnz, self.n, self.dtype.itemsize)
        cs = self.colouring.colour_start
        self._colours = []
        self.solvers = []
        for c in range(self.n_colours):
            a, b = int(cs[c]), int(cs[c + 1])
            solver = TridiagonalSolver(dl[a:b].copy(), d[a:b].copy(), du[a:b].copy())  # aligned, its own
            self.solvers.append(solver)
            self._colours.append((self._itype(b - a), indptr[a:b + 1], self.order[a:b], solver))
        self._Ap = Ap
        self._omega = cupy.full(1, self.omega, dtype=self.dtype)

    # ------------------------------------------------------------------ apply
    def sweep(self, x, b, backward=False):
        """One sweep for ``A x = b`` from ``x`` (None: zero), colour by colour (``backward``:
        in the opposite order); returns the new iterate (``x`` is updated in place when
        given)."""
        if x is None:
            x = self.xp.zeros(self.n, dtype=self.dtype)
        if not self.gpu:
            colours = self._backward if backward else self._forward
            z = np.empty(self.n, dtype=self.dtype)
            c = self.colouring
            sweep = _sweep_cpu_parallel if self.n >= PARALLEL_ROWS else _sweep_cpu
            sweep(self.A.indptr, self.A.indices, self.A.data, c.order, *self._factors, c.line_start, c.colour_lines,
                  colours, self.dtype.type(self.omega), x, np.ascontiguousarray(b, dtype=self.dtype), z)
            return x
        return self._sweep_gpu(x, b, backward)

    def _sweep_gpu(self, x, b, backward):
        from ..nvrtc import get_kernel

        Ap = self._Ap
        kernel = get_kernel("amg", "gathered_residual", self.dtype, Ap.indices.dtype)
        scatter = _scatter_kernel()
        lanes = np.int32(self._lanes)
        threads = 256
        for rows, indptr, order, solver in (reversed(self._colours) if backward else self._colours):
            r = self.xp.empty(int(rows), dtype=self.dtype)
            grid = (max(1, (int(rows) * self._lanes + threads - 1) // threads),)
            kernel(grid, (threads,), (rows, lanes, indptr, Ap.indices, Ap.data, order, x, b, r))
            scatter(solver.solve(r), order, self._omega, x)
        return x


class GaussSeidelSmoother(Smoother):
    """Multicolour line Gauss-Seidel as a smoother of the cycle (:class:`LineGaussSeidel`
    ``gs``). ``sweep="symmetric"``: a smoothing step is a forward sweep followed by a
    backward one, before and after the coarse correction; ``"forward"``: a step is one
    sweep, forward before the coarse correction and backward after it. Either way the
    cycle is symmetric for symmetric ``A`` with as many pre- as post-smoothing steps."""

    #: As the Richardson line smoother's: per colour a gather, the substitutions and a
    #: scatter, about six passes over a vector per row.
    row_cost = 6.0

    def __init__(self, gs, *, sweep="symmetric", name="line Gauss-Seidel"):
        if sweep not in ("forward", "symmetric"):
            raise ValueError(f"sweep must be 'forward' or 'symmetric', got {sweep!r}")
        self.gs, self.sweep, self.name = gs, sweep, name

    def relax(self, level, x, b, steps, post=False):
        for _ in range(steps):
            if self.sweep == "symmetric":
                x = self.gs.sweep(x, b)
                x = self.gs.sweep(x, b, backward=True)
            else:
                x = self.gs.sweep(x, b, backward=post)
        return x

    def describe(self):
        return f"{self.name}, {self.gs.n_colours} colours{' (symmetric sweep)' if self.sweep == 'symmetric' else ''}"


def _scatter_kernel():
    """``x[order] += omega[0] * z`` (CuPy elementwise; compiled at its first use)."""
    global _SCATTER
    if _SCATTER is None:
        import cupy

        _SCATTER = cupy.ElementwiseKernel("T z, I order, raw T w", "raw T x", "x[order] += w[0] * z",
                                          "amg_line_gs_scatter")
    return _SCATTER


_SCATTER = None
