"""Test-matrix generators: the paper's ANISO1/2/3 stencils, Poisson, and larger
realistic stand-ins for the paper's SuiteSparse matrices. All vectorized, CSR.

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Section 5 (ANISO1/2/3).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import DTypeLike

__all__ = [
    "ANISO1_STENCIL",
    "ANISO2_STENCIL",
    "stencil_matrix_2d",
    "aniso1",
    "aniso2",
    "aniso3",
    "aniso3_permutation",
    "poisson2d",
    "poisson3d",
    "convection_diffusion3d",
    "random_diffusion2d",
    "rotated_anisotropic2d",
    "elasticity2d",
]

#: Klein and Strzodka (2022), Section 5: rows are north, centre, south; columns west, centre, east.
ANISO1_STENCIL = np.array([[-0.2, -0.1, -0.2], [-1.0, 3.0, -1.0], [-0.2, -0.1, -0.2]])
ANISO2_STENCIL = np.array([[-0.1, -0.2, -1.0], [-0.2, 3.0, -0.2], [-1.0, -0.2, -0.1]])


def _check_size(n, minimum=1):
    if not isinstance(n, (int, np.integer)) or n < minimum:
        raise ValueError(f"grid size must be an integer >= {minimum}, got {n!r}")
    return int(n)


def _check_dtype(dtype):
    dt = np.dtype(dtype)
    if dt not in (np.float32, np.float64):
        raise TypeError(f"dtype must be float32 or float64, got {dt}")
    return dt


def _stencil_csr(stencil, n, dtype, order=None, tap_key=None):
    """CSR of a 3x3 stencil, rows and columns in the grid ordering ``order`` (new -> old,
    default natural). ``tap_key(dy, dx)`` must sort the taps into increasing new column
    index for every row (true for the orderings used here), so no per-row sort is needed."""
    N = n * n
    itype = np.int32 if 9 * N < np.iinfo(np.int32).max else np.int64
    taps = [(dy, dx, stencil[1 - dy, dx + 1]) for dy in (-1, 0, 1) for dx in (-1, 0, 1)
            if stencil[1 - dy, dx + 1] != 0.0]
    if tap_key is not None:
        taps.sort(key=lambda t: tap_key(t[0], t[1]))
    if not taps:
        return sp.csr_matrix((N, N), dtype=dtype)
    if order is None:  # natural ordering: (iy, ix) blocks, no gathers
        ax = np.arange(n, dtype=itype)
        inside = {d: (ax + d >= 0) & (ax + d < n) for d in (-1, 0, 1)}
        mask = np.empty((n, n, len(taps)), dtype=bool)  # (iy, ix, tap)
        cols = np.empty((n, n, len(taps)), dtype=itype)
        base = ax[:, None] * n + ax[None, :]
        for k, (dy, dx, _) in enumerate(taps):
            mask[:, :, k] = inside[dy][:, None] & inside[dx][None, :]
            cols[:, :, k] = base + (dy * n + dx)
    else:
        cells = np.asarray(order, dtype=itype)
        inv = np.empty(N, dtype=itype)
        inv[cells] = np.arange(N, dtype=itype)
        iy, ix = np.divmod(cells, itype(n))
        mask = np.empty((N, len(taps)), dtype=bool)
        cols = np.empty((N, len(taps)), dtype=itype)
        for k, (dy, dx, _) in enumerate(taps):
            ok = (ix + dx >= 0) & (ix + dx < n) & (iy + dy >= 0) & (iy + dy < n)
            mask[:, k] = ok
            cols[:, k] = inv[np.where(ok, cells + (dy * n + dx), 0)]
    mask = mask.reshape(N, len(taps))
    indices = cols.reshape(N, len(taps))[mask]
    del cols
    values = np.array([a for _, _, a in taps], dtype=dtype)
    data = np.broadcast_to(values, mask.shape)[mask]
    indptr = np.zeros(N + 1, dtype=itype)
    np.cumsum(mask.sum(axis=1, dtype=itype), out=indptr[1:])
    A = sp.csr_matrix((data, indices, indptr), shape=(N, N))
    A.has_sorted_indices = True
    return A


def stencil_matrix_2d(stencil, n: int, dtype: DTypeLike = np.float64) -> sp.csr_matrix:
    """Matrix of a 3x3 stencil on an ``n x n`` grid with Dirichlet boundary (truncated).

    Unknown ``(ix, iy)`` has index ``iy * n + ix``; stencil row 0 is north (``iy + 1``),
    column 0 is west (``ix - 1``). Zero stencil entries are not stored. The CSR arrays are
    built directly in sorted row-major order (int32 indices when they fit), so a
    2500 x 2500 grid (6.25M rows, 56M nonzeros) takes about a second.

    Parameters
    ----------
    stencil : array_like, shape (3, 3)
    n : int
        Grid points per side (``n * n`` unknowns).
    dtype : {np.float64, np.float32}

    Returns
    -------
    scipy.sparse.csr_matrix

    Examples
    --------
    >>> A = stencil_matrix_2d([[0, -1, 0], [-1, 4, -1], [0, -1, 0]], 3)
    >>> A.shape, A.nnz, float(A[4, 4]), float(A[4, 7])
    ((9, 9), 33, 4.0, -1.0)
    """
    n = _check_size(n)
    dtype = _check_dtype(dtype)
    stencil = np.asarray(stencil, dtype=np.float64)
    if stencil.shape != (3, 3):
        raise ValueError("stencil must be 3x3")
    return _stencil_csr(stencil, n, dtype)


def aniso1(n: int, dtype: DTypeLike = np.float64) -> sp.csr_matrix:
    """ANISO1 (Klein and Strzodka (2022)): strong -1.0 coupling in x, already on the sub/superdiagonal.

    Examples
    --------
    >>> A = aniso1(4)
    >>> A.shape, A.nnz
    ((16, 16), 100)
    """
    return stencil_matrix_2d(ANISO1_STENCIL, n, dtype)


def aniso2(n: int, dtype: DTypeLike = np.float64) -> sp.csr_matrix:
    """ANISO2 (Klein and Strzodka (2022)): strong -1.0 coupling along one grid diagonal (NE-SW).

    Stencil (rows north, centre, south; columns west, centre, east)::

        -0.1 -0.2 -1.0
        -0.2  3.0 -0.2
        -1.0 -0.2 -0.1

    Examples
    --------
    >>> A = aniso2(3)
    >>> float(A[4, 8]), float(A[4, 0]), float(A[4, 5])   # NE, SW, E neighbours of the centre
    (-1.0, -1.0, -0.2)
    """
    return stencil_matrix_2d(ANISO2_STENCIL, n, dtype)


def aniso3_permutation(n: int) -> np.ndarray:
    """Ordering of the grid along NE-SW diagonal lines, so ANISO2's -1.0 couplings become
    sub/superdiagonal entries: sort by ``ix - iy``, then by ``iy``. Returns new -> old.

    Examples
    --------
    >>> aniso3_permutation(2).tolist()   # unknowns iy*n+ix: (1,0) | (0,0),(1,1) | (0,1)
    [2, 0, 3, 1]
    """
    n = _check_size(n)
    iy, ix = np.divmod(np.arange(n * n, dtype=np.int64), n)
    return np.lexsort((iy, ix - iy))


def aniso3(n: int, dtype: DTypeLike = np.float64) -> sp.csr_matrix:
    """ANISO3 (Klein and Strzodka (2022)): ANISO2 permuted so that the -1.0 couplings lie on the sub- and
    superdiagonal (:func:`aniso3_permutation`), built directly in sorted CSR order.

    Examples
    --------
    >>> A = aniso3(50)
    >>> import scipy.sparse as sp
    >>> strong = sp.triu(A == -1.0, 1).tocoo()
    >>> bool((strong.col - strong.row == 1).all()), strong.nnz
    (True, 2401)
    """
    n = _check_size(n)
    dtype = _check_dtype(dtype)
    # along the diagonal ordering, neighbour (dx, dy) of any cell has a new index that
    # sorts by line offset dx - dy, then by dy: build the permuted CSR directly
    return _stencil_csr(ANISO2_STENCIL, n, dtype, order=aniso3_permutation(n),
                        tap_key=lambda dy, dx: (dx - dy, dy))


def poisson2d(n: int, dtype: DTypeLike = np.float64) -> sp.csr_matrix:
    """5-point Laplacian on an ``n x n`` grid (Dirichlet), diagonal 4.

    Examples
    --------
    >>> poisson2d(10).nnz
    460
    """
    return stencil_matrix_2d([[0, -1, 0], [-1, 4, -1], [0, -1, 0]], n, dtype)


def _grid_operator_3d(n, coeff, dtype):
    """Assemble a 7-point operator; ``coeff`` maps offsets (dx,dy,dz) to values or arrays."""
    N = n**3
    idx = np.arange(N, dtype=np.int64)
    iz, rem = np.divmod(idx, n * n)
    iy, ix = np.divmod(rem, n)
    rows, cols, vals = [], [], []
    for (dx, dy, dz), a in coeff.items():
        jx, jy, jz = ix + dx, iy + dy, iz + dz
        ok = (jx >= 0) & (jx < n) & (jy >= 0) & (jy < n) & (jz >= 0) & (jz < n)
        rows.append(idx[ok])
        cols.append((jz[ok] * n + jy[ok]) * n + jx[ok])
        vals.append(np.broadcast_to(np.asarray(a, dtype=dtype), (N,))[ok])
    A = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(N, N), dtype=dtype)
    A.sort_indices()
    return A


def poisson3d(n: int, dtype: DTypeLike = np.float64) -> sp.csr_matrix:
    """7-point Laplacian on an ``n x n x n`` grid (Dirichlet), diagonal 6.

    Examples
    --------
    >>> A = poisson3d(4)
    >>> A.shape, float(A.diagonal().max())
    ((64, 64), 6.0)
    """
    n = _check_size(n)
    dtype = _check_dtype(dtype)
    coeff = {(0, 0, 0): 6.0}
    for d in ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)):
        coeff[d] = -1.0
    return _grid_operator_3d(n, coeff, dtype)


def convection_diffusion3d(n: int, wind: tuple[float, float, float] = (1.0, 0.5, 0.25), peclet: float = 50.0,
                           dtype: DTypeLike = np.float64) -> sp.csr_matrix:
    """Unsymmetric 3D convection-diffusion ``-lap u + b . grad u`` with first-order
    upwinding on an ``n^3`` grid (a stand-in for the ATMOSMOD matrices), scaled by h^2.

    ``peclet`` scales the wind relative to diffusion (cell Peclet number ``peclet * h``).

    Examples
    --------
    >>> A = convection_diffusion3d(10)
    >>> A.shape, bool(abs(A - A.T).max() > 0)
    ((1000, 1000), True)
    """
    n = _check_size(n)
    dtype = _check_dtype(dtype)
    h = 1.0 / (n + 1)
    b = np.asarray(wind, dtype=np.float64) * peclet * h  # convection per cell, after h^2 scaling
    coeff = {(0, 0, 0): 6.0 + np.abs(b).sum()}
    for axis in range(3):
        plus = tuple(1 if k == axis else 0 for k in range(3))
        minus = tuple(-1 if k == axis else 0 for k in range(3))
        up = max(b[axis], 0.0)
        down = max(-b[axis], 0.0)
        coeff[minus] = -1.0 - up  # upwind side takes the convective flux
        coeff[plus] = -1.0 - down
    return _grid_operator_3d(n, coeff, dtype)


def random_diffusion2d(n: int, contrast: float = 4.0, seed: int = 0, dtype: DTypeLike = np.float64) -> sp.csr_matrix:
    """``-div(k grad u)`` on an ``n x n`` grid with cell coefficients ``k = exp(contrast * g)``,
    ``g`` standard normal (a stand-in for the ECOLOGY matrices: strongly varying,
    symmetric positive definite). Face coefficients are harmonic means; 5-point.

    Examples
    --------
    >>> A = random_diffusion2d(20, contrast=4.0, seed=1)
    >>> A.shape, bool(abs(A - A.T).max() == 0), bool(A.diagonal().max() / A.diagonal().min() > 1e3)
    ((400, 400), True, True)
    """
    n = _check_size(n)
    dtype = _check_dtype(dtype)
    rng = np.random.default_rng(seed)
    k = np.exp(contrast * rng.standard_normal((n, n)))
    kx = 2 * k[:, 1:] * k[:, :-1] / (k[:, 1:] + k[:, :-1])  # faces between (iy, ix) and (iy, ix+1)
    ky = 2 * k[1:, :] * k[:-1, :] / (k[1:, :] + k[:-1, :])
    idx = np.arange(n * n).reshape(n, n)
    rows = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    cols = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    w = np.concatenate([kx.ravel(), ky.ravel()])
    off = sp.csr_matrix((-w, (rows, cols)), shape=(n * n, n * n))
    off = off + off.T
    diag = -np.asarray(off.sum(axis=1)).ravel()
    # Dirichlet boundary: the missing boundary faces use the cell's own coefficient
    boundary = np.zeros((n, n))
    boundary[0, :] += k[0, :]
    boundary[-1, :] += k[-1, :]
    boundary[:, 0] += k[:, 0]
    boundary[:, -1] += k[:, -1]
    A = (off + sp.diags(diag + boundary.ravel())).tocsr().astype(dtype)
    A.sort_indices()
    return A


def rotated_anisotropic2d(n: int, epsilon: float = 0.001, theta: float = np.pi / 8,
                          dtype: DTypeLike = np.float64) -> sp.csr_matrix:
    """Rotated anisotropic diffusion on an ``n x n`` grid (pyamg's
    ``diffusion_stencil_2d`` + ``stencil_grid``): the strong direction is not a grid axis.

    Examples
    --------
    >>> rotated_anisotropic2d(16).shape
    (256, 256)
    """
    from pyamg.gallery import diffusion_stencil_2d, stencil_grid

    n = _check_size(n, 2)
    dtype = _check_dtype(dtype)
    stencil = diffusion_stencil_2d(epsilon=epsilon, theta=theta, type="FD")
    A = stencil_grid(stencil, (n, n), format="csr").astype(dtype)
    A.sort_indices()
    return A


def elasticity2d(n: int, dtype: DTypeLike = np.float64) -> sp.csr_matrix:
    """2D linear elasticity (Q1 elements) on an ``n x n`` grid: 2x2 coupled unknowns per
    node (pyamg's ``linear_elasticity``); a test for the 2x2 block preconditioner.

    Examples
    --------
    >>> elasticity2d(8).shape   # two displacement unknowns per grid node
    (128, 128)
    """
    from pyamg.gallery import linear_elasticity

    n = _check_size(n, 2)
    dtype = _check_dtype(dtype)
    A, _ = linear_elasticity((n, n), format="csr")
    A = sp.csr_matrix(A).astype(dtype)
    A.sort_indices()
    return A
