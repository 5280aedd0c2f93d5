"""The 2x2 block tridiagonal solver of AlgTriBlock: factorize once, solve many times.

CPU: block Thomas in Numba. GPU: the partitioned method of :mod:`kernels.tridiag.partition`
with 2x2 blocks and spikes (``kernels/cuda/tridiag.cu``'s ``block_*`` kernels).

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Section 4.4.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..backend import get_array_module, small_zeros
from ..nvrtc import get_kernel, launch_cooperative
from .partition import BLOCK_LAYOUT, PartitionedGPU, check_chunks, eps_of, partition_plan, partitioned_solve, warn_boosted

__all__ = ["BlockTridiagonalSolver"]


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
def _block_factor_cpu(L, D, U, eps):
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
def _block_solve_cpu(L, inv, cp, idx, x, out):
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


class BlockTridiagonalSolver(PartitionedGPU):
    """2x2 block tridiagonal system, factorized once for repeated solves.

    ``L, D, U`` have shape ``(m, 2, 2)`` (block row ``k``: ``L_k x_{k-1} + D_k x_k +
    U_k x_{k+1}``); ``index`` (``m x 2``) maps each block unknown to an entry of the
    original vector (-1 for a ghost unknown whose equation is uncoupled with right-hand
    side 1, as in Klein and Strzodka's AlgTriBlock). NumPy arrays: block Thomas in Numba. CuPy arrays: the
    partitioned (SPIKE-like) method of :class:`TridiagonalSolver` with 2x2 blocks and
    spikes, recursive on the separator system; gather and scatter through ``index``
    happen inside the first and last kernels, so a solve does not synchronize with the host;
    ``chunk`` (2 to ``MAX_CHUNK`` = 16) is its block rows per thread at every level.
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
        check_chunks(chunk=chunk)
        self.dtype = np.dtype(D.dtype)
        self.m = D.shape[0]
        if xp is np:
            self.L = np.ascontiguousarray(L)
            self.index = np.ascontiguousarray(index, dtype=np.int64)
            self.n = int((self.index >= 0).sum())
            self.inv, self.cp, counts = _block_factor_cpu(
                self.L, np.ascontiguousarray(D), np.ascontiguousarray(U), eps_of(self.dtype))
        else:
            counts = self._setup_gpu(L, D, U, index, chunk)
        self.boosted, self.negative_pivots, self.negative_diagonal = (int(c) for c in counts)
        warn_boosted(self.boosted, self.m)

    def _setup_gpu(self, L, D, U, index, chunk):
        """All levels factorized by one cooperative launch into one workspace (as for
        :class:`TridiagonalSolver`); returns the counts, read at the end."""

        xp = self.xp
        vt = self.dtype
        if vt.kind == "c":
            raise TypeError("complex block tridiagonal systems are supported on the CPU only")
        m = self.m
        itype = np.int32 if 2 * m < np.iinfo(np.int32).max // 2 else np.int64
        levels, bottom, size = partition_plan(m, chunk, chunk, self.bottom_size, BLOCK_LAYOUT)
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
            return partitioned_solve(self.kernels, "block_", levels, (m, bottom), x, self.gather, out)
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
            _block_solve_cpu(self.L, self.inv, self.cp, self.index, np.ascontiguousarray(x), out)
            return out
        return self._solve_gpu(self.xp.ascontiguousarray(x, dtype=self.dtype))
